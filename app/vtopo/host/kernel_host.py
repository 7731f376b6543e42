"""KernelHost: the host of vtopo.ops.host, for real. Netlink for the kernel, ovs-vsctl for OVS, nft for the lab's
table, and processes and libvirt for daemons and VMs.

What removes something (a link, a namespace, a file, a table, a process, a domain) does not mind when it is already
gone, so destroy and cleanup can run any number of times.
"""
from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from signal import Signals
from typing import Iterable

from vtopo import ops as o
from vtopo.host import netns as namespaces
from vtopo.host import libvirt_domains, namespace_maker, nftables, oci_engine, ovs, owned_files, processes
from vtopo.host.config_checks import REFUSAL
from vtopo.host.image_store import StoredImage
from vtopo.host.images import open_device, open_image
from vtopo.host.namespace_maker import NamespaceMaker, Node
from vtopo.host.oci_engine import EngineError, ImageNode
from vtopo.host.netlink import Netlink, NetlinkError
from vtopo.host.owned_files import DAEMON_UMASK
from vtopo.host.vhost import VHOST_DEVICE, holds_vhost
from vtopo.model.rules import lab_tag

DAEMON_START_SECONDS = 15.0
COMMAND_SECONDS = 60.0  # a startup command that has not ended by then fails the deploy
READ_SECONDS = 30.0  # a command that shows a node's state (`vtopo save`) that has not ended by then fails the save


def _absent(error: NetlinkError) -> bool:
    return any(word in error.kernel_message for word in ("No such device", "Cannot find device", "No such file"))


class KernelHost:
    """Does what ops ask, for the lab tagged `tag`, deployed by uid `owner` (0: root; a member may not run commands
    on the host itself). What it has to tell about an action it keeps for the caller to take: `notices` for the user,
    `printed`, what startup commands printed, and `shown`, what the commands that show a node's state printed."""

    def __init__(self, tag: str, owner: int = 0):
        self.tag = tag
        self.owner = owner
        self.netlink = Netlink()
        self.notices: list[str] = []
        self.printed: list[str] = []
        self.shown: list[str] = []
        self._deleted_together: set[str] = set()  # namespaces a teardown deletes, emptied all at the first deletion
        self._emptied: set[str] = set()  # namespaces nothing runs in any more, until they are deleted
        self._going_whole: dict[str, set[str]] = {}  # namespaces directories a teardown empties: the files to go
        self._makers: dict[str, NamespaceMaker] = {}  # by the user namespace they work in ("": the host's)
        self._expected: dict[str, list[tuple[str, Node | None]]] = {}  # network namespaces to come, each with its
        # node, by the user namespace they go in
        self._vsctl_batch: list[list[str]] | None = None  # ovs-vsctl commands held for one transaction

    def close(self) -> None:
        self.netlink.close()
        while self._makers:
            self._makers.popitem()[1].close()

    @property
    def lab_tag(self) -> str:
        return lab_tag(self.tag)

    # ---------------------------------------------------------------- namespaces

    def expect(self, ops: list[o.Op]) -> None:
        """The ops about to be applied, in order: the helper of each lab's user namespace makes their network
        namespaces, and the nodes made in them, ahead of them (see NamespaceMaker)."""
        nodes = {op.netns: Node(op.hostname, op.hosts_file, op.binds, op.files, op.host_read_only) for op in ops
                 if isinstance(op, o.IsolateNode)}
        self._expected = {}
        for op in ops:
            if isinstance(op, o.CreateNamespace) and op.userns:
                self._expected.setdefault(op.userns, []).append((op.name, nodes.get(op.name)))
        for userns, maker in self._makers.items():
            maker.expect(self._expected.pop(userns, []))

    def add_user_namespace(self, path: str, uid: int, gid: int) -> None:
        self._makers[path] = NamespaceMaker.new_user_namespace(path, uid, gid, self.lab_tag)
        self._makers[path].expect(self._expected.pop(path, []))

    def add_netns(self, name: str, userns: str) -> None:
        if userns:
            self.netlink.adopt(name, self._maker(userns, os.path.dirname(userns)).network_namespace(name))
        elif self.owner != 0:
            raise ValueError(f"uid {self.owner} deploys this lab, whose namespaces must be made inside its user "
                             "namespace, and this one names none")
        else:
            self.netlink.add_netns(name)
            self.netlink.set_link("lo", name, alias=self.lab_tag, up=True)

    def isolate_node(self, netns: str, hostname: str, hosts_file: str, mount_ns: str, uts_ns: str, userns: str,
                     binds: tuple[tuple[str, str], ...], files: tuple[tuple[str, str], ...],
                     host_read_only: bool) -> None:
        node = Node(hostname, hosts_file, binds, files, host_read_only)
        self._maker(userns, os.path.dirname(mount_ns)).isolate(netns, node, mount_ns, uts_ns)

    def run_image(self, *, netns: str, hostname: str, hosts_file: str, mount_ns: str, uts_ns: str, pid_ns: str,
                  image: str, digest: str, run_root: str, image_owner: int, userns: str, ids: tuple[int, int] | None,
                  binds: tuple[tuple[str, str], ...], files: tuple[tuple[str, str], ...], memory_mb: int, cpus: float,
                  disk_mb: int) -> None:
        if image_owner not in (0, self.owner):
            raise EngineError(f"node {hostname}: image {image} is uid {image_owner}'s, and this lab is "
                              f"uid {self.owner}'s")
        stored = StoredImage(image, digest, image_owner or None)
        node = ImageNode(netns, hostname, hosts_file, userns, ids, binds, files, stored, memory_mb, cpus, disk_mb)
        oci_engine.run(node, mount_ns, uts_ns, pid_ns, run_root)

    def remove_image_container(self, netns: str, run_root: str) -> None:
        if netns in self._deleted_together:  # a teardown: its containers end with the rest of its processes
            self._end_processes(netns)
        oci_engine.remove(netns, run_root)

    def _maker(self, userns: str, namespaces_dir: str) -> NamespaceMaker:
        """The helper that makes namespaces inside `userns` ("": the initial user namespace), started on first use."""
        maker = self._makers.get(userns)
        if maker is None:
            maker = (NamespaceMaker.in_user_namespace(userns, self.lab_tag) if userns
                     else NamespaceMaker.in_initial(namespaces_dir, self.lab_tag))
            maker.expect(self._expected.pop(userns, []))
            self._makers[userns] = maker
        return maker

    def delete_together(self, names: Iterable[str], namespace_files: Iterable[str]) -> None:
        """The network namespaces a teardown is going to delete, and the other namespaces' files it is going to
        remove. The first deletion empties the namespaces all, once each node's processes were stopped their own way:
        one pass over /proc for all of them rather than one per namespace (400 passes took 0.26 s). A namespaces
        directory whose every file goes (a lab's, when the whole lab goes) is detached at once when its last file
        is removed (see namespace_maker.remove_lab_directory): at 400 nodes, 0.2 s less than a file at a time."""
        self._deleted_together, self._emptied = set(names), set()
        going: dict[str, set[str]] = {}
        for path in namespace_files:
            going.setdefault(os.path.dirname(path), set()).add(path)
        self._going_whole = {}
        for directory, paths in going.items():
            try:
                there = {f"{directory}/{name}" for name in os.listdir(directory)}
            except FileNotFoundError:
                continue
            if there <= paths:
                self._going_whole[directory] = paths

    def delete_netns(self, name: str) -> None:
        self._end_processes(name)
        self._emptied.discard(name)
        self.netlink.release(name)
        try:
            namespaces.delete_netns(name)
        except namespaces.NetnsNotFoundError:
            pass

    def _end_processes(self, netns: str) -> None:
        """End the processes in `netns`, unless that was done: with those of every namespace the teardown deletes."""
        if netns not in self._emptied:
            emptied = self._deleted_together if netns in self._deleted_together else {netns}
            namespaces.end_processes_in(emptied)
            self._emptied |= emptied

    def remove_namespace_files(self, paths: tuple[str, ...]) -> None:
        namespace_maker.remove([path for path in paths if os.path.dirname(path) not in self._going_whole])
        for directory in {os.path.dirname(path) for path in paths} & self._going_whole.keys():
            self._going_whole[directory].difference_update(paths)
            if not self._going_whole[directory]:
                del self._going_whole[directory]
                namespace_maker.remove_lab_directory(directory)

    # ---------------------------------------------------------------- network devices

    def add_bridge(self, name: str, *, stp: bool, forward_delay: int, ageing_time: int, vlan_filtering: bool) -> None:
        self.netlink.add_bridge(name, None, stp=stp, forward_delay=forward_delay, ageing_time=ageing_time,
                                vlan_filtering=vlan_filtering)

    def add_veth(self, name: str, netns: str | None, peer: str, peer_netns: str | None, *,
                 master: str | None = None, queues: int) -> None:
        self.netlink.add_veth(name, netns, peer, peer_netns, master, queues)

    def add_macvlan(self, name: str, netns: str | None, lower: str, lower_netns: str | None, mode: str) -> None:
        self.netlink.add_macvlan(name, netns, lower, lower_netns, mode)

    def add_vlan(self, name: str, netns: str | None, parent: str, vid: int) -> None:
        self.netlink.add_vlan(name, netns, parent, vid)

    def add_macvtap(self, name: str, lower: str, mode: str) -> None:
        self.netlink.add_macvtap(name, lower, None, mode)

    def add_tap(self, name: str) -> None:
        self.netlink.add_tap(name, None)

    def add_vxlan(self, name: str, netns: str | None, *, vni: int, local: str, remote: str, port: int,
                  mtu: int) -> None:
        self.netlink.add_vxlan(name, netns, mtu, vni, local, remote, port)

    def move_link(self, name: str, netns: str, new_name: str) -> None:
        self.netlink.move_link(name, netns, new_name)

    def delete_link(self, name: str, netns: str | None) -> None:
        try:
            self.netlink.delete_link(name, netns)
        except NetlinkError as error:
            if not _absent(error):
                raise

    def set_master(self, name: str, master: str) -> None:
        self.netlink.set_master(name, None, master)

    def set_hairpin(self, name: str, enabled: bool) -> None:
        self.netlink.set_hairpin(name, None, enabled)

    def add_bridge_vlan(self, name: str, vid: int, *, pvid: bool, untagged: bool) -> None:
        self.netlink.set_bridge_vlan(name, None, vid, pvid=pvid, untagged=untagged)

    def delete_bridge_vlan(self, name: str, vid: int) -> None:
        self.netlink.set_bridge_vlan(name, None, vid, present=False)

    def set_link(self, name: str, netns: str | None, *, mtu: int | None = None, mac: str | None = None,
                 alias: str | None = None, up: bool | None = None, carrier: bool | None = None) -> None:
        self.netlink.set_link(name, netns, mtu=mtu, mac=mac, alias=alias, up=up, carrier=carrier)

    def add_address(self, name: str, netns: str | None, cidr: str, *, nodad: bool) -> None:
        self.netlink.add_address(name, netns, cidr, nodad=nodad)

    def add_route(self, netns: str | None, destination: str, gateway: str, device: str,
                  protocol: o.RouteProtocol) -> None:
        self.netlink.add_route(netns, destination, gateway, device, protocol=protocol)

    def delete_address(self, name: str, netns: str | None, cidr: str) -> None:
        try:
            self.netlink.delete_address(name, netns, cidr)
        except NetlinkError as error:
            if error.code != errno.EADDRNOTAVAIL and not _absent(error):
                raise

    def delete_route(self, netns: str | None, destination: str, gateway: str, device: str) -> None:
        try:
            self.netlink.delete_route(netns, destination, gateway, device)
        except NetlinkError as error:
            if error.code != errno.ESRCH and not _absent(error):
                raise

    def set_sysctl(self, netns: str | None, key: str, value: str, userns: str) -> None:
        if userns and netns:
            self._maker(userns, os.path.dirname(userns)).set_sysctl(netns, key, value)
        else:
            self.netlink.set_sysctl(netns, key, value)

    def set_impairment(self, name: str, netns: str | None, *, delay_ms: float, jitter_ms: float, loss_pct: float,
                       rate_mbit: float) -> None:
        self.netlink.set_impairment(name, netns, delay_ms=delay_ms, jitter_ms=jitter_ms, loss_pct=loss_pct,
                                    rate_mbit=rate_mbit)

    def set_tx_checksum(self, name: str, netns: str | None, enabled: bool) -> None:
        self.netlink.set_tx_checksum(name, netns, enabled)

    # ---------------------------------------------------------------- Open vSwitch and nftables

    def vsctl(self, commands: list[list[str]]) -> None:
        if self._vsctl_batch is None:
            ovs.vsctl(commands)
        else:
            self._vsctl_batch += commands

    def one_ovs_transaction(self, ops: list[o.Op]) -> None:
        """Apply `ops` (bridges and ports) in one ovs-vsctl transaction: all of them are made, or none."""
        self._vsctl_batch = []
        try:
            for op in ops:
                op.apply(self)
            commands = self._vsctl_batch
        finally:
            self._vsctl_batch = None
        ovs.vsctl(commands)

    def add_flows(self, bridge: str, flows: tuple[str, ...]) -> None:
        ovs.add_flows(bridge, list(flows))

    def contain_forwarding(self, table: str, device_prefix: str, host_node_devices: tuple[str, ...],
                           host_addresses: tuple[str, ...], tunnels: tuple[tuple[int, str], ...]) -> None:
        nftables.contain_forwarding(table, device_prefix, host_node_devices, host_addresses, tunnels)

    def delete_nft_table(self, table: str) -> None:
        nftables.delete_table(table)

    # ---------------------------------------------------------------- files

    def make_directory(self, path: str, mode: int, user: str, ids: tuple[int, int] | None) -> None:
        owned_files.make_directory(path, mode)
        if user:
            owned_files.hand_over(path, user)
        elif ids is not None:
            owned_files.hand_over(path, ids)

    def write_file(self, path: str, content: str, *, private: bool, executable: bool = False) -> None:
        if private:
            owned_files.write_file(path, content, owned_files.PRIVATE_FILE)
        else:
            owned_files.write_for_daemon(path, content, executable)

    def remove_directory(self, path: str) -> None:
        shutil.rmtree(path, ignore_errors=True)

    def remove_file(self, path: str) -> None:
        Path(path).unlink(missing_ok=True)

    # ---------------------------------------------------------------- processes and domains

    def start_process(self, *, argv: tuple[str, ...], netns: str | None, pid_file: str, ready_path: str,
                      ready_banner: str, user: str, groups: tuple[str, ...], tap_fds: tuple[tuple[int, str], ...],
                      tun_fds: tuple[tuple[int, str], ...], device_fds: tuple[tuple[int, str], ...],
                      image_fds: tuple[tuple[int, str], ...], directory: str, enter: tuple[str, ...]) -> None:
        taps = {fd: Path(f"/dev/tap{self.netlink.index(interface, None)}") for fd, interface in tap_fds}
        handed: dict[int, int] = {}
        try:
            for fd, interface in tun_fds:
                handed[fd] = self.netlink.attach_tap(interface)
            for fd, path in device_fds:
                handed[fd] = open_device(path)
            for fd, path in image_fds:
                handed[fd] = open_image(path)
            processes.start_daemon(list(argv), netns, Path(pid_file), Path(ready_path) if ready_path else None,
                                   DAEMON_START_SECONDS, log_file=Path(pid_file).with_suffix(".log"),
                                   open_files=taps, inherited_fds=handed,
                                   privileges=o.drop_privileges(user, groups) if user else (),
                                   umask=DAEMON_UMASK, ready_banner=ready_banner.encode(),
                                   cwd=Path(directory) if directory else None, enter=enter,
                                   owner=self.owner)
        finally:
            for ours in handed.values():
                os.close(ours)

    def stop_process(self, pid_file: str, match: str, netns: str | None) -> None:
        pid = read_pid(Path(pid_file))
        if pid is not None:
            processes.stop_process(pid, Path(match).name, netns=netns)

    def signal_processes(self, netns: str, signal: str) -> None:
        if signal == o.Signal.KILL:
            namespaces.end_processes_in({netns})
        else:
            processes.signal_each(namespaces.pids_in(netns), Signals[f"SIG{signal}"])

    def load_config(self, argv: tuple[str, ...]) -> None:
        """The lines the shell reports skipping (`line N: ...`) become a notice: it loaded the rest, as FRR's own
        service goes on with a router whose configuration has such lines. Any other failure fails the load."""
        code, said = processes.run_to_end(list(argv), COMMAND_SECONDS, owner=self.owner)
        skipped = [int(match.group(1)) for line in said.splitlines() if (match := REFUSAL.match(line.strip()))]
        if code != 0 and not skipped:
            raise processes.CommandFailed(f"exited with status {code}" + (f": {said}" if said else ""))
        if skipped:
            self.notices.append(f"FRR skipped {len(skipped)} line(s) of its configuration and loaded the rest "
                                f"(line {', '.join(map(str, sorted(set(skipped))))}; `vtopo validate` names them)")

    def run_command(self, node: str, argv: tuple[str, ...], place: str) -> None:
        if self.owner != 0 and place not in (o.Place.NODE, o.Place.GUEST):
            raise ValueError(f"only root may run commands on the host itself, and uid {self.owner} deploys this lab")
        self.printed.append(processes.run_command(list(argv), COMMAND_SECONDS, owner=self.owner))

    def read_state(self, node: str, argv: tuple[str, ...]) -> None:
        self.shown.append(processes.run_command(list(argv), READ_SECONDS, whole=True, owner=self.owner))

    def start_domain(self, uri: str, name: str, xml: str, vhost: bool) -> None:
        """Start the domain, then check on the host that vhost-net is what was asked: with no vhost-net for the
        NIC (no kernel module, or QEMU under TCG without ioeventfd), QEMU quietly moves the packets itself."""
        live = libvirt_domains.start(uri, xml)
        pid = libvirt_domains.qemu_pid(name)
        if vhost and pid is not None and holds_vhost(pid) is False:
            drivers = ", ".join(sorted({d or "default" for d in libvirt_domains.interface_drivers(live)}))
            self.notices.append(f"vhost-net was asked for and libvirt reports driver {drivers}, but QEMU (pid {pid}) "
                                f"does not hold {VHOST_DEVICE}: its NICs run without vhost-net")

    def resume_domain(self, uri: str, name: str) -> None:
        libvirt_domains.resume(uri, name)

    def destroy_domain(self, uri: str, name: str) -> None:
        libvirt_domains.destroy(uri, name)


def read_pid(path: Path) -> int | None:
    """The pid `path` holds, read without following a symlink or waiting on a FIFO (the lab's own user writes
    there); None when there is none."""
    try:
        return int(owned_files.read_small_file(path).split()[0])
    except (OSError, ValueError, IndexError):
        return None
