"""Applies single ops to the host: netlink for the kernel, ovs-vsctl for OVS, processes for daemons.

`apply` creates; `undo` removes and does not mind when the object is already gone, so destroy and
cleanup can run any number of times.
"""
from __future__ import annotations

import errno
import os
import shutil
import time
from pathlib import Path
from typing import Callable, Iterable

from vtopo import ops as o
from vtopo.host import netns as namespaces
from vtopo.host import domains, namespace_maker, nftables, ovs, owned_files, processes
from vtopo.host.images import open_device, open_image
from vtopo.host.namespace_maker import NamespaceError, NamespaceMaker
from vtopo.host.netlink import Netlink, NetlinkError
from vtopo.host.owned_files import DAEMON_UMASK
from vtopo.host.vhost import VHOST_DEVICE, holds_vhost
from vtopo.model.rules import lab_tag

DAEMON_START_SECONDS = 15.0
COMMAND_SECONDS = 60.0  # a startup command that has not ended by then fails the deploy
LINGER_SECONDS = 2.0


class OpFailed(Exception):
    """An op the host refused. Names the op, its owner, and what the host said."""

    def __init__(self, op: o.Op, reason: str):
        self.op = op
        self.reason = reason
        super().__init__(f"{op.owner}: could not {op.summary()}: {reason}")


def _absent(error: NetlinkError) -> bool:
    return any(word in error.kernel_message for word in ("No such device", "Cannot find device", "No such file"))


OutputCallback = Callable[[o.RunCommand, str], None]


def _ignore_output(_op: o.RunCommand, _text: str) -> None:
    pass


class Applier:
    def __init__(self, tag: str, on_output: OutputCallback = _ignore_output, owner: int = 0):
        self.tag = tag
        self.owner = owner  # the uid startup commands run as (see RunCommand)
        self.netlink = Netlink()
        self.notices: list[str] = []  # what the user should know about ops that did not do all they were asked
        self.on_output = on_output  # what a startup command printed, for the deploy log
        self._deleted_together: set[str] = set()  # namespaces a teardown deletes, emptied all at the first deletion
        self._emptied: set[str] = set()  # namespaces nothing runs in any more, until they are deleted
        self._makers: dict[str, NamespaceMaker] = {}  # by the user namespace they work in ("": the host's)

    def close(self) -> None:
        self.netlink.close()
        while self._makers:
            self._makers.popitem()[1].close()

    # ------------------------------------------------------------ dispatch

    def apply(self, op: o.Op) -> None:
        try:
            self._apply(op)
        except (NetlinkError, ovs.OvsError, processes.DaemonError, processes.CommandFailed, domains.DomainError,
                nftables.NftError, NamespaceError, OSError, ValueError) as error:
            raise OpFailed(op, _reason(error)) from error

    def undo(self, op: o.Op) -> None:
        try:
            self._undo(op)
        except (NetlinkError, ovs.OvsError, domains.DomainError, nftables.NftError, OSError) as error:
            raise OpFailed(op, _reason(error)) from error

    def _apply(self, op: o.Op) -> None:
        match op:
            case o.CreateUserNamespace():
                self._makers[op.path] = NamespaceMaker.new_user_namespace(op.path, op.uid, op.gid)
            case o.CreateNamespace():
                self._create_namespace(op)
            case o.IsolateNode():
                maker = self._maker(op.userns, os.path.dirname(op.mount_ns))
                maker.isolate(op.netns, op.hostname, op.hosts_file, op.mount_ns, op.uts_ns)
            case o.CreateBridge():
                self.netlink.add_bridge(op.name, None, op.stp, op.forward_delay_s, op.ageing_s)
            case o.CreateVeth():
                self.netlink.add_veth(op.name, op.netns, op.peer, op.peer_netns)
            case o.CreateMacvlan():
                self.netlink.add_macvlan(op.name, op.netns, op.lower, op.lower_netns, op.mode)
            case o.CreateMacvtap():
                self.netlink.add_macvtap(op.name, op.lower, None, op.mode)
            case o.CreateTap():
                self.netlink.add_tap(op.name, None)
            case o.CreateVxlan():
                self.netlink.add_vxlan(op.name, op.netns, op.mtu, op.vni, op.local, op.remote, op.port)
            case o.SetMaster():
                self._set_master(op)
            case o.MoveLink():
                self.netlink.move_link(op.name, op.netns, op.new_name)
            case o.ConfigureLink():
                self.netlink.set_link(op.name, op.netns, mtu=op.mtu or None, mac=op.mac or None, alias=op.alias or None,
                                      up=op.up)
            case o.AddAddress():
                self.netlink.add_address(op.name, op.netns, op.cidr)
            case o.AddRoute():
                self.netlink.add_route(op.netns, op.destination, op.gateway, op.device)
            case o.SetSysctl():
                self.netlink.set_sysctl(op.netns, op.key, op.value)
            case o.SetImpairment():
                self.netlink.set_impairment(op.name, op.netns, delay_ms=op.delay_ms, jitter_ms=op.jitter_ms,
                                            loss_pct=op.loss_pct, rate_mbit=op.rate_mbit)
            case o.SetTxChecksum():
                self.netlink.set_tx_checksum(op.name, op.netns, op.enabled)
            case o.OvsAddFlows():
                ovs.add_flows(op.bridge, list(op.flows))
            case o.MakeDirectory():
                self._make_directory(op)
            case o.ContainForwarding():
                nftables.contain_forwarding(op.table, op.device_prefix, op.host_node_devices, op.host_addresses)
            case o.WriteHostsFile():  # root's alone: each node gets a copy of its own
                owned_files.write_file(op.path, op.content, owned_files.PRIVATE_FILE)
            case o.WriteFile():
                owned_files.write_for_daemon(op.path, op.content)
            case o.StartProcess():
                self._start_process(op)
            case o.StartDomain():
                self._start_domain(op)
            case o.ResumeDomain():
                domains.resume(op.uri, op.name)
            case o.LoadConfig():
                processes.run_command(["ip", "netns", "exec", op.netns, *op.argv], COMMAND_SECONDS, cwd=op.directory)
            case o.RunCommand():
                if self.owner != 0 and op.place not in (o.Place.NODE, o.Place.GUEST):
                    raise ValueError(f"only root may run commands on the host itself, and uid {self.owner} deploys "
                                     "this lab")
                self.on_output(op, processes.run_command(list(op.argv), COMMAND_SECONDS))
            case _:
                raise KeyError(f"the applier has no way to apply {op.name_of_op}")

    def _undo(self, op: o.Op) -> None:
        match op:
            case o.DeleteNamespace():
                self._delete_namespace(op)
            case o.DeleteLink():
                self._delete_link(op)
            case o.OvsDeleteBridge():
                ovs.vsctl(op.vsctl())
            case o.RemoveDirectory():
                shutil.rmtree(op.path, ignore_errors=True)
            case o.RemoveFile():
                Path(op.path).unlink(missing_ok=True)
            case o.RemoveNftTable():
                nftables.delete_table(op.table)
            case o.RemoveNamespaceFiles():
                namespace_maker.remove(list(op.paths))
            case o.StopProcess():
                self._stop_process(op)
            case o.DestroyDomain():
                domains.destroy(op.uri, op.name)
            case _:
                raise KeyError(f"the applier has no way to undo {op.name_of_op}")

    def apply_ovs_batch(self, batch: list[o.Op]) -> None:
        """Bridges and ports in one ovs-vsctl transaction: all of them are made, or none."""
        commands = [command for op in batch if isinstance(op, (o.OvsAddBridge, o.OvsAddPort)) for command in op.vsctl()]
        try:
            ovs.vsctl(commands)
        except ovs.OvsError as error:
            raise OpFailed(batch[0], _reason(error)) from error

    def exists(self, op: o.Op) -> bool | None:
        """Whether what `op` made is there now; None for ops that make nothing worth probing."""
        if isinstance(op, o.CreateNamespace):
            return op.name in namespaces.list_netns()
        if isinstance(op, (o.CreateBridge, o.CreateMacvtap, o.CreateTap)):
            return self._link_present(op.name, None)
        if isinstance(op, o.CreateVeth):
            return self._link_present(op.name, op.netns) and self._link_present(op.peer, op.peer_netns)
        if isinstance(op, (o.CreateMacvlan, o.CreateVxlan)):
            return self._link_present(op.name, op.netns)
        if isinstance(op, o.SetMaster):
            host = {link.name: link for link in self.netlink.links(None)}
            port, master = host.get(op.name), host.get(op.master)
            return port is not None and master is not None and port.master_index == master.index
        if isinstance(op, o.OvsAddBridge):
            return ovs.OvsService().running() and op.name in ovs.vsctl([["list-br"]]).split()
        if isinstance(op, o.ContainForwarding):
            return op.table in nftables.tables()
        if isinstance(op, o.OvsAddPort):
            try:
                return op.name in ovs.vsctl([["list-ports", op.bridge]]).split()
            except ovs.OvsError:  # OVS or the bridge is gone
                return False
        if isinstance(op, o.StartProcess):
            pid = _read_pid(Path(op.pid_file))
            return pid is not None and processes.process_alive(pid, Path(op.argv[0]).name)
        if isinstance(op, o.StartDomain):
            return domains.running(op.uri, op.name)
        return None

    def _link_present(self, name: str, netns: str | None) -> bool:
        try:
            return self.netlink.link_exists(name, netns)
        except NetlinkError:  # its namespace is gone
            return False

    def remove_lingering(self, host_links: list[str]) -> list[str]:
        """Make sure the host ends of veths whose namespaces were deleted are gone. Returns those that stay.

        A deleted namespace dies, taking its veths, once nothing holds it any more; something can hold it
        for minutes (a socket of a process that ran there, still closing its TCP connections). After
        LINGER_SECONDS the host ends still present are deleted: a veth takes its peer with it."""
        lingering = self._wait_gone(host_links, LINGER_SECONDS)
        for name in lingering:
            self.undo(o.DeleteLink(owner=self.tag, name=name))
        return self._wait_gone(lingering, LINGER_SECONDS)

    def _wait_gone(self, host_links: list[str], timeout_s: float) -> list[str]:
        pending = set(host_links)
        deadline = time.monotonic() + timeout_s
        while pending:
            pending &= {link.name for link in self.netlink.links(None)}
            if not pending or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        return sorted(pending)

    # ------------------------------------------------------------ handlers

    def _create_namespace(self, op: o.CreateNamespace) -> None:
        if op.userns:
            self._maker(op.userns, os.path.dirname(op.userns)).network_namespace(op.name)
        elif self.owner != 0:
            raise ValueError(f"uid {self.owner} deploys this lab, whose namespaces must be made inside its user "
                             "namespace, and this one names none")
        else:
            self.netlink.add_netns(op.name)
        self.netlink.set_link("lo", op.name, up=True, alias=lab_tag(self.tag))

    def _maker(self, userns: str, namespaces_dir: str) -> NamespaceMaker:
        """The helper that makes namespaces inside `userns` ("": the initial user namespace), started on first use."""
        maker = self._makers.get(userns)
        if maker is None:
            maker = NamespaceMaker.in_user_namespace(userns) if userns else NamespaceMaker.in_initial(namespaces_dir)
            self._makers[userns] = maker
        return maker

    def delete_together(self, names: Iterable[str]) -> None:
        """The namespaces a teardown is going to delete. The first deletion empties them all, once each node's
        processes were stopped their own way: one pass over /proc for all of them rather than one per namespace
        (400 passes took 0.26 s)."""
        self._deleted_together, self._emptied = set(names), set()

    def _delete_namespace(self, op: o.DeleteNamespace) -> None:
        if op.name not in self._emptied:
            emptied = self._deleted_together if op.name in self._deleted_together else {op.name}
            namespaces.end_processes_in(emptied)
            self._emptied |= emptied
        self._emptied.discard(op.name)
        self.netlink.release(op.name)
        try:
            namespaces.delete_netns(op.name)
        except namespaces.NetnsNotFoundError:
            pass

    def _delete_link(self, op: o.DeleteLink) -> None:
        try:
            self.netlink.delete_link(op.name, op.netns)
        except NetlinkError as error:
            if not _absent(error):
                raise

    def _set_master(self, op: o.SetMaster) -> None:
        self.netlink.set_master(op.name, None, op.master)
        if op.hairpin:
            self.netlink.set_hairpin(op.name, None, True)

    def _make_directory(self, op: o.MakeDirectory) -> None:
        owned_files.make_directory(op.path, owned_files.PRIVATE if op.mode is None else op.mode)
        if op.user:
            owned_files.hand_over(op.path, op.user)

    def _start_process(self, op: o.StartProcess) -> None:
        taps = {fd: Path(f"/dev/tap{self.netlink.index(interface, None)}") for fd, interface in op.tap_fds}
        private: dict[Path, Path] = {}
        for target, source in op.private_dirs:
            if Path(target).is_dir():  # a bind mount needs its target to exist
                owned_files.private_directory(source, owner_of=str(Path(op.pid_file).parent))
                private[Path(target)] = Path(source)
        handed: dict[int, int] = {}
        try:
            for fd, interface in op.tun_fds:
                handed[fd] = self.netlink.attach_tap(interface)
            for fd, path in op.device_fds:
                handed[fd] = open_device(path)
            for fd, path in op.image_fds:
                handed[fd] = open_image(path)
            processes.start_daemon(list(op.argv), op.netns, Path(op.pid_file),
                                   Path(op.ready_path) if op.ready_path else None, DAEMON_START_SECONDS,
                                   log_file=Path(op.pid_file).with_suffix(".log"), private_dirs=private,
                                   open_files=taps, inherited_fds=handed,
                                   privileges=o.drop_privileges(op.user, op.groups) if op.user else (),
                                   umask=DAEMON_UMASK, ready_banner=op.ready_banner.encode(),
                                   cwd=Path(op.directory) if op.directory else None)
        finally:
            for ours in handed.values():
                os.close(ours)

    def _start_domain(self, op: o.StartDomain) -> None:
        """Start the domain, then check on the host that vhost-net is what was asked: with no vhost-net for the
        NIC (no kernel module, or QEMU under TCG without ioeventfd), QEMU quietly moves the packets itself."""
        live = domains.start(op.uri, op.xml)
        pid = domains.qemu_pid(op.name)
        if op.vhost and pid is not None and holds_vhost(pid) is False:
            drivers = ", ".join(sorted({d or "default" for d in domains.interface_drivers(live)}))
            self.notices.append(f"{op.owner}: vhost-net was asked for and libvirt reports driver {drivers}, but "
                                f"QEMU (pid {pid}) does not hold {VHOST_DEVICE}: its NICs run without vhost-net")

    def _stop_process(self, op: o.StopProcess) -> None:
        pid = _read_pid(Path(op.pid_file))
        if pid is not None:
            processes.stop_process(pid, Path(op.match).name)


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.errno is not None and not isinstance(error, (NetlinkError,
                                                                                      owned_files.Planted)):
        return f"{os.strerror(error.errno)} ({errno.errorcode.get(error.errno, error.errno)})" + (
            f": {error.filename}" if error.filename else "")
    return str(error)
