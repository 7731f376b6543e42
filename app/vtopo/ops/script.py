"""ScriptHost: the host that writes what it is asked to do as shell lines (iproute2, tc, nft, ovs-vsctl, ...).

`vtopo deploy --explain` applies every op on one. Every value is shell-quoted, and text that goes into a comment has
its control characters escaped, so no value can end a comment or a quoted word and run a command of its own in the
explained script.
"""
from __future__ import annotations

import re
import shlex

from vtopo.model.sites import VXLAN_OVERHEAD, VXLAN_PORT
from vtopo.ops.base import Op
from vtopo.ops.files import EXECUTABLE_FILE
from vtopo.ops.firewall import HOSTS_OWN, NEIGHBOUR_DISCOVERY, ROUTING_ADVICE, address_family, addresses_by_family
from vtopo.ops.host import RouteProtocol
from vtopo.model.rules import NETNS_DIR, NODE_FILES_DIR, NODE_KERNEL_FILES, NODE_TMPFS, PASSAGE_DIRECTORY, PRIVATE_DIRECTORY
from vtopo.ops.netdev import TBF_LATENCY_MS, LinkType, Tool, tbf_burst
from vtopo.privileges import drop_privileges
from vtopo.ops.process import Signal

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
LAB_TAG_VARIABLE = "LAB_TAG"  # the script sets it first (vtopo.compile.plan)
TOLERATED = " || true  #"  # ends a command whose failure does not stop the script, before the reason why


class ShellVariable(str):
    """A word the script takes from one of its variables: written "$NAME", not quoted away."""


def word(value: str) -> str:
    return f'"${value}"' if isinstance(value, ShellVariable) else shlex.quote(value)


def sh(*argv: str) -> str:
    return " ".join(word(value) for value in argv)


def comment(text: str) -> str:
    """`text`, safe to put after a `#`: control characters (a newline first of all) are written as escapes."""
    return CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def heredoc(command: str, content: str) -> list[str]:
    """`command` reading `content` from a here-document, with a delimiter that no line of the content equals."""
    lines = content.rstrip("\n").split("\n")
    delimiter, number = "EOF", 0
    while delimiter in lines:
        number += 1
        delimiter = f"EOF{number}"
    return [f"{command} <<'{delimiter}'", *lines, delimiter]


def ip_cmd(netns: str | None, *args: str) -> str:
    return sh("ip", *(["-n", netns] if netns else []), *args)


def in_netns(netns: str | None, argv: list[str] | tuple[str, ...]) -> str:
    return sh("ip", "netns", "exec", netns, *argv) if netns else sh(*argv)


def tap_device(interface: str) -> str:
    """The shell's words for the character device of a macvtap: /dev/tapN, N its ifindex."""
    return f"/dev/tap$(cat {shlex.quote(f'/sys/class/net/{interface}/ifindex')})"


def vsctl_line(commands: list[list[str]]) -> str:
    """One ovs-vsctl call that runs `commands` in one transaction, as host.ovs.vsctl runs them."""
    words: list[str] = []
    for command in commands:
        words += (["--"] if words else []) + command
    return sh("ovs-vsctl", *words)


def _mounted_on(path: str) -> str:
    """Shell words: whether a mount has its root at `path` (its device is not its parent's). mountpoint(1) is no
    answer: it reads /proc/self/mountinfo, which lists mounts hidden under one on a parent directory too."""
    return f'[ "$(stat -c %d {shlex.quote(path)})" != "$(stat -c %d {shlex.quote(path + "/..")})" ]'


def _private_tmpfs(path: str, mode: int) -> str:
    """Shell words: `path` a private mount, a tmpfs of `mode` unless a mount is there already."""
    return (f"mkdir -p {shlex.quote(path)}; {_mounted_on(path)} || "
            f"{sh('mount', '-t', 'tmpfs', '-o', f'nosuid,nodev,noexec,mode={mode:o}', 'tmpfs', path)}; "
            f"{sh('mount', '--make-private', path)}")


def namespace_directory(path: str) -> str:
    """The shell line that makes the directory a namespace's file is kept in, as vtopo's helper makes it once: a lab's
    namespaces directory is a private tmpfs of root's alone, in the namespaces root, a private tmpfs too (so that
    no bind mount of a namespace propagates into a node); /run/netns is made as `ip netns add` makes it."""
    if path == NETNS_DIR:
        return sh("mkdir", "-p", path)
    root = path.rsplit("/", 1)[0]
    return (f"[ -d {shlex.quote(path)} ] && {_mounted_on(path)} || {{ {_private_tmpfs(root, PASSAGE_DIRECTORY)}; "
            f"{_private_tmpfs(path, PRIVATE_DIRECTORY)}; }}")


def _host_read_only(bound: list[str]) -> list[str]:
    """Every mount read-only but the node's own tmpfs, the directories bound into it, and /proc and /sys (util-linux
    2.39)."""
    return [sh("mount", "-o", "remount,bind,ro=recursive", "/"),
            *(sh("mount", "-o", "remount,bind,rw", path) for path in [*NODE_TMPFS, *bound, *NODE_KERNEL_FILES])]


def _held_by_placeholder(unshare: list[str], mounts: list[tuple[str, str]]) -> list[str]:
    """Shell lines: `unshare` runs a placeholder process, whose namespaces are then bind-mounted on their files.
    The shell cannot make a namespace inside another process's user namespace in one command, so these lines do what
    vtopo's helper process does, and the namespace is kept by a bind mount of its file, as `ip netns add` keeps one."""
    binds = "; ".join(f"mount --bind /proc/$holder/ns/{kind} {shlex.quote(path)}" for kind, path in mounts)
    return [*(namespace_directory(directory) for directory in dict.fromkeys(path.rsplit("/", 1)[0]
                                                                            for _, path in mounts)),
            sh("touch", *(path for _, path in mounts)),
            f"{sh(*unshare)} & holder=$!; sleep 0.1",
            f"{binds}; kill $holder"]


def script_of(op: Op) -> list[str]:
    """The lines that do what `op` does."""
    host = ScriptHost()
    op.apply(host)
    return host.lines


class ScriptHost:
    """Records the shell lines of each action it is asked for, in `lines`."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    @property
    def lab_tag(self) -> str:
        return ShellVariable(LAB_TAG_VARIABLE)

    def _say(self, *lines: str) -> None:
        self.lines.extend(lines)

    # ---------------------------------------------------------------- namespaces

    def add_user_namespace(self, path: str, uid: int, gid: int) -> None:
        held = _held_by_placeholder(["unshare", "--user", "sleep", "infinity"], [("user", path)])
        self._say(f"# the lab's user namespace: uid {uid} and gid {gid} outside are root inside it, and own nothing "
                  "of the host's", held[0], held[1],
                  f"echo '0 {uid} 1' > /proc/$holder/uid_map; echo '0 {gid} 1' > /proc/$holder/gid_map", held[2])

    def add_netns(self, name: str, userns: str) -> None:
        if not userns:
            self._say(sh("ip", "netns", "add", name))
        else:
            self._say(*_held_by_placeholder(["nsenter", f"--user={userns}", "unshare", "--net", "sleep", "infinity"],
                                            [("net", f"{NETNS_DIR}/{name}")]))
        self.set_link("lo", name, alias=self.lab_tag, up=True)

    def isolate_node(self, netns: str, hostname: str, hosts_file: str, mount_ns: str, uts_ns: str, userns: str,
                     binds: tuple[tuple[str, str], ...], files: tuple[tuple[str, str], ...],
                     host_read_only: bool) -> None:
        opened = {directory: 3 + index for index, directory in enumerate(dict.fromkeys(d for d, _ in binds))}
        own = {path: f"{NODE_FILES_DIR}/{path.rsplit('/', 1)[1]}" for path, _ in files}
        inside = "; ".join([sh("hostname", hostname), "mount -t sysfs sysfs /sys",
                            sh("mount", "--bind", hosts_file, "/etc/hosts"),
                            *(f"exec {fd}<{shlex.quote(directory)}" for directory, fd in opened.items()),
                            *(sh("mount", "-t", "tmpfs", "tmpfs", path) for path in NODE_TMPFS),
                            *(f"{sh('mkdir', '-p', path)}; {sh('mount', '--bind', fd_path, path)}"
                              for directory, path in binds if (fd_path := f"/proc/self/fd/{opened[directory]}")),
                            *([sh("mkdir", "-p", NODE_FILES_DIR)] if files else []),
                            *(f"printf %s {shlex.quote(content)} > {own[path]}; {sh('mount', '--bind', own[path], path)}"
                              for path, content in files),
                            *(_host_read_only([path for _, path in binds]) if host_read_only else []),
                            "exec sleep infinity"])
        enter = ["nsenter", *([f"--user={userns}"] if userns else []), f"--net={NETNS_DIR}/{netns}"]
        self._say(f"# {comment(hostname)} is a container: its own hostname, /etc/hosts naming the lab's nodes, and "
                  "empty /tmp, /var/tmp and /run" + (", the host's other files read-only" if host_read_only else ""),
                  *_held_by_placeholder([*enter, "unshare", "--mount", "--uts", "--propagation", "slave",
                                         "sh", "-c", inside], [("mnt", mount_ns), ("uts", uts_ns)]))

    def delete_netns(self, name: str) -> None:
        self.signal_processes(name, Signal.KILL)  # what runs there would keep it alive
        self._say(sh("ip", "netns", "del", name))

    def run_image(self, *, netns: str, hostname: str, hosts_file: str, mount_ns: str, uts_ns: str, pid_ns: str,
                  image: str, digest: str, run_root: str, image_owner: int, userns: str, ids: tuple[int, int] | None,
                  binds: tuple[tuple[str, str], ...], files: tuple[tuple[str, str], ...], memory_mb: int, cpus: float,
                  disk_mb: int) -> None:
        bundle, name, crun = f"{run_root}/oci/{netns}", f"vtopo-{netns}", f"runc --root={run_root}/runc"
        store = f"/var/lib/vtopo-member-images/{image_owner}" if image_owner else "/var/lib/vtopo/oci/shared"
        rootfs = f"/var/lib/vtopo/oci/rootfs/{ids[0] if ids else 0}/{digest.replace(':', '-')}/rootfs"
        unpack = f"umoci raw unpack --rootless --image {shlex.quote(f'{store}:{image}')} {shlex.quote(rootfs)}"
        self._say(f"# {comment(hostname)} runs image {comment(image)} ({digest}) in its namespaces: its own files "
                  f"above the image's, on a {disk_mb} MiB tmpfs; at most {memory_mb} MiB and {cpus:g} CPUs",
                  f"[ -d {shlex.quote(rootfs)} ] || "
                  + (f"setpriv --reuid={image_owner} --regid={ids[1] if ids else 0} --init-groups {unpack}"
                     if image_owner else unpack + (f" && chown -R {ids[0]}:{ids[1]} {shlex.quote(rootfs)}" if ids
                                                   else "")),
                  sh("mkdir", "-p", bundle), sh("mount", "-t", "tmpfs", "-o", f"size={disk_mb}m,mode=0711", "tmpfs",
                                                 bundle),
                  sh("mkdir", f"{bundle}/upper", f"{bundle}/work", f"{bundle}/root", f"{bundle}/files"),
                  *([sh("chown", f"{ids[0]}:{ids[1]}", f"{bundle}/upper")] if ids else []),
                  sh("mount", "-t", "overlay", "-o", f"nosuid,nodev,lowerdir={rootfs},upperdir={bundle}/upper,"
                     f"workdir={bundle}/work", "overlay", f"{bundle}/root"),
                  f"# config.json: the image's process (umoci raw runtime-config) as root of the lab's user namespace "
                  f"{comment(userns or '(none)')}, in network namespace {comment(netns)}, with no new privileges; "
                  f"/etc/hosts from {comment(hosts_file)}; binds {comment(str(list(binds)))} and files "
                  f"{comment(str([path for path, _ in files]))}; cgroup /vtopo/{name}",
                  f"{crun} run --detach --bundle={shlex.quote(bundle)} "
                  f"--pid-file={shlex.quote(bundle + '/pid')} {shlex.quote(name)}",
                  namespace_directory(mount_ns.rsplit("/", 1)[0]), sh("touch", mount_ns, uts_ns, pid_ns),
                  "; ".join(f"mount --bind /proc/$(cat {shlex.quote(bundle + '/pid')})/ns/{kind} {shlex.quote(path)}"
                            for kind, path in (("mnt", mount_ns), ("uts", uts_ns), ("pid", pid_ns))))

    def remove_image_container(self, netns: str, run_root: str) -> None:
        bundle = f"{run_root}/oci/{netns}"
        self._say(f"runc --root={run_root}/runc delete --force vtopo-{netns}",
                  f"umount -l {shlex.quote(bundle + '/root')} {shlex.quote(bundle)}; {sh('rm', '-rf', bundle)}")

    def remove_namespace_files(self, paths: tuple[str, ...]) -> None:
        self._say(f"umount {shlex.join(paths)}; {sh('rm', '-f', *paths)}")

    # ---------------------------------------------------------------- network devices

    def add_bridge(self, name: str, *, stp: bool, forward_delay: int, ageing_time: int, vlan_filtering: bool) -> None:
        self._say(ip_cmd(None, "link", "add", name, "type", LinkType.BRIDGE, "stp_state", str(int(stp)),
                         "forward_delay", str(forward_delay), "ageing_time", str(ageing_time),
                         *(["vlan_filtering", "1"] if vlan_filtering else [])))

    def add_veth(self, name: str, netns: str | None, peer: str, peer_netns: str | None, *,
                 master: str | None = None, queues: int) -> None:
        if netns is not None and peer_netns is None:  # the host's end first: `ip` has no word for the host's netns
            name, netns, peer, peer_netns = peer, peer_netns, name, netns
        sized = ["numtxqueues", str(queues), "numrxqueues", str(queues)]
        self._say(ip_cmd(netns, "link", "add", name, *(["master", master] if master else []), *sized, "type",
                         LinkType.VETH, "peer", "name", peer, *sized, *(["netns", peer_netns] if peer_netns else [])))

    def add_macvlan(self, name: str, netns: str | None, lower: str, lower_netns: str | None, mode: str) -> None:
        self._say(ip_cmd(lower_netns, "link", "add", "link", lower, "name", name,
                         *(["netns", netns] if netns else []), "type", LinkType.MACVLAN, "mode", mode))

    def add_vlan(self, name: str, netns: str | None, parent: str, vid: int) -> None:
        self._say(ip_cmd(netns, "link", "add", "link", parent, "name", name, "type", LinkType.VLAN, "id", str(vid)))

    def add_macvtap(self, name: str, lower: str, mode: str) -> None:
        self._say(ip_cmd(None, "link", "add", "link", lower, "name", name, "type", LinkType.MACVTAP, "mode", mode),
                  f"# its character device: {comment(tap_device(name))}")

    def add_tap(self, name: str) -> None:
        self._say(ip_cmd(None, "tuntap", "add", "dev", name, "mode", LinkType.TAP))

    def add_vxlan(self, name: str, netns: str | None, *, vni: int, local: str, remote: str, port: int,
                  mtu: int) -> None:
        self._say(f"# MTU {mtu}: the underlay's {mtu + VXLAN_OVERHEAD} less {VXLAN_OVERHEAD} bytes of VXLAN headers "
                  "(outer IP, UDP, VXLAN and inner Ethernet)",
                  ip_cmd(None, "link", "add", name, *(["netns", netns] if netns else []), "mtu", str(mtu), "type",
                         LinkType.VXLAN, "id", str(vni), "local", local, "remote", remote, "dstport", str(port)))

    def move_link(self, name: str, netns: str, new_name: str) -> None:
        self._say(ip_cmd(None, "link", "set", "dev", name, "netns", netns, "name", new_name))

    def delete_link(self, name: str, netns: str | None) -> None:
        self._say(ip_cmd(netns, "link", "del", name))

    def set_master(self, name: str, master: str) -> None:
        self._say(ip_cmd(None, "link", "set", name, "master", master))

    def set_hairpin(self, name: str, enabled: bool) -> None:
        self._say(sh(Tool.BRIDGE, "link", "set", "dev", name, "hairpin", "on" if enabled else "off"))

    def add_bridge_vlan(self, name: str, vid: int, *, pvid: bool, untagged: bool) -> None:
        self._say(sh(Tool.BRIDGE, "vlan", "add", "dev", name, "vid", str(vid), *(["pvid"] if pvid else []),
                     *(["untagged"] if untagged else [])))

    def delete_bridge_vlan(self, name: str, vid: int) -> None:
        self._say(sh(Tool.BRIDGE, "vlan", "del", "dev", name, "vid", str(vid)))

    def set_link(self, name: str, netns: str | None, *, mtu: int | None = None, mac: str | None = None,
                 alias: str | None = None, up: bool | None = None, carrier: bool | None = None) -> None:
        args = ["link", "set", "dev", name]
        if mtu is not None:
            args += ["mtu", str(mtu)]
        if mac is not None:
            args += ["address", mac]
        if alias is not None:
            args += ["alias", alias]
        if up is not None:
            args.append("up" if up else "down")
        if carrier is not None:
            args += ["protodown", "off" if carrier else "on"]
        self._say(ip_cmd(netns, *args))

    def add_address(self, name: str, netns: str | None, cidr: str, *, nodad: bool) -> None:
        self._say(ip_cmd(netns, "addr", "add", cidr, "dev", name, *(["nodad"] if nodad else [])))

    def add_route(self, netns: str | None, destination: str, gateway: str, device: str,
                  protocol: RouteProtocol) -> None:
        family = ["-6"] if ":" in gateway else []
        self._say(ip_cmd(netns, *family, "route", "add", destination, "via", gateway,
                         *(["dev", device] if device else []), "proto", protocol.word))

    def delete_address(self, name: str, netns: str | None, cidr: str) -> None:
        self._say(ip_cmd(netns, "addr", "del", cidr, "dev", name))

    def delete_route(self, netns: str | None, destination: str, gateway: str, device: str) -> None:
        family = ["-6"] if ":" in gateway else []
        self._say(ip_cmd(netns, *family, "route", "del", destination, "via", gateway,
                         *(["dev", device] if device else [])))

    def set_sysctl(self, netns: str | None, key: str, value: str, userns: str) -> None:
        write = ["sysctl", "-qw", f"{key}={value}"]
        self._say(sh("nsenter", f"--user={userns}", f"--net={NETNS_DIR}/{netns}", *write) if userns and netns
                  else in_netns(netns, write))

    def set_impairment(self, name: str, netns: str | None, *, delay_ms: float, jitter_ms: float, loss_pct: float,
                       rate_mbit: float) -> None:
        tc, parent = ["tc", *(["-n", netns] if netns else [])], ["root"]
        self._say(f"{sh(*tc, 'qdisc', 'del', 'dev', name, 'root')} 2>/dev/null{TOLERATED} what shaped it before goes "
                  "first (a new interface has nothing to remove)")
        if delay_ms or jitter_ms or loss_pct:
            args = ["qdisc", "add", "dev", name, "root", "handle", "1:", "netem"]
            if delay_ms or jitter_ms:
                args += ["delay", f"{delay_ms:g}ms"] + ([f"{jitter_ms:g}ms"] if jitter_ms else [])
            if loss_pct:
                args += ["loss", f"{loss_pct:g}%"]
            self._say(sh(*tc, *args))
            parent = ["parent", "1:1"]
        if rate_mbit:
            self._say(sh(*tc, "qdisc", "add", "dev", name, *parent, "handle", "2:", "tbf", "rate", f"{rate_mbit:g}mbit",
                         "burst", str(tbf_burst(rate_mbit)), "latency", f"{TBF_LATENCY_MS}ms"))

    def set_tx_checksum(self, name: str, netns: str | None, enabled: bool) -> None:
        self._say(in_netns(netns, ["ethtool", "-K", name, "tx", "on" if enabled else "off"]))

    # ---------------------------------------------------------------- Open vSwitch and nftables

    def vsctl(self, commands: list[list[str]]) -> None:
        self._say(vsctl_line(commands))

    def add_flows(self, bridge: str, flows: tuple[str, ...]) -> None:
        """As host.ovs.add_flows feeds them: one ovs-ofctl call, the flows on its stdin."""
        self._say(*heredoc(sh("ovs-ofctl", "add-flows", bridge, "-"), "\n".join(flows)))

    def contain_forwarding(self, table: str, device_prefix: str, host_node_devices: tuple[str, ...],
                           host_addresses: tuple[str, ...], tunnels: tuple[tuple[int, str], ...]) -> None:
        devices = f"{device_prefix}*"
        chain, into_host, out = ("inet", table, "forward"), ("inet", table, "input"), ("inet", table, "output")
        exempt = ["iifname", "!=", "{ " + ", ".join(host_node_devices) + " }"] if host_node_devices else []
        self._say(sh("nft", "add", "table", "inet", table),
                  sh("nft", "add", "chain", *chain, "{ type filter hook forward priority 0; policy accept; }"),
                  sh("nft", "add", "rule", *chain, "iifname", devices, "oifname", "!=", devices, "counter", "drop"),
                  sh("nft", "add", "rule", *chain, "oifname", devices, "iifname", "!=", devices, "counter", "drop"),
                  "# what the lab sends to the host (an address, a broadcast, a group) that the lab did not give it, "
                  "and the routing advice (router advertisements, redirects) to the host's kernel",
                  sh("nft", "add", "chain", *into_host, "{ type filter hook input priority 0; policy accept; }"),
                  *(sh("nft", "add", "rule", *into_host, "iifname", devices, protocol, "type",
                       "{ " + ", ".join(types) + " }", "counter", "drop") for protocol, types in ROUTING_ADVICE),
                  sh("nft", "add", "rule", *into_host, "iifname", devices, NEIGHBOUR_DISCOVERY[0], "type",
                     "{ " + ", ".join(NEIGHBOUR_DISCOVERY[1]) + " }", "accept"),
                  *(sh("nft", "add", "rule", *into_host, "iifname", devices, family, "daddr",
                       "{ " + ", ".join(addresses) + " }", "accept")
                    for family, addresses in addresses_by_family(host_addresses)),
                  sh("nft", "add", "rule", *into_host, "iifname", devices, *exempt, "fib", "daddr", "type",
                     "{ " + ", ".join(HOSTS_OWN) + " }", "counter", "drop"))
        if tunnels:
            self._say("# what the lab's tunnels send goes to their remotes only",
                      sh("nft", "add", "chain", *out, "{ type filter hook output priority 0; policy accept; }"),
                      *(sh("nft", "add", "rule", *out, "udp", "dport", str(VXLAN_PORT), "@th,96,24", str(vni),
                           address_family(remote), "daddr", "!=", remote, "counter", "drop")
                        for vni, remote in tunnels))

    def delete_nft_table(self, table: str) -> None:
        self._say(sh("nft", "delete", "table", "inet", table))

    # ---------------------------------------------------------------- files

    def make_directory(self, path: str, mode: int, user: str, ids: tuple[int, int] | None) -> None:
        self._say(sh("mkdir", "-p", path), sh("chmod", f"{mode:o}", path))
        if user:
            self._say(sh("chown", f"{user}:", path))
        elif ids is not None:
            self._say(sh("chown", f"{ids[0]}:{ids[1]}", path))

    def write_file(self, path: str, content: str, *, private: bool, executable: bool = False) -> None:
        self._say(*heredoc(f"cat > {shlex.quote(path)}", content))
        if executable:
            self._say(sh("chmod", f"{EXECUTABLE_FILE:o}", path))

    def remove_directory(self, path: str) -> None:
        self._say(sh("rm", "-rf", path))

    def remove_file(self, path: str) -> None:
        self._say(sh("rm", "-f", path))

    # ---------------------------------------------------------------- processes and domains

    def start_process(self, *, argv: tuple[str, ...], netns: str | None, pid_file: str, ready_path: str,
                      ready_banner: str, user: str, groups: tuple[str, ...], tap_fds: tuple[tuple[int, str], ...],
                      tun_fds: tuple[tuple[int, str], ...], device_fds: tuple[tuple[int, str], ...],
                      image_fds: tuple[tuple[int, str], ...], directory: str, enter: tuple[str, ...]) -> None:
        self._say(*(f"# fd {fd}: /dev/net/tun attached to the tap {comment(interface)} by vtopo (ioctl TUNSETIFF, "
                    "which no shell command makes)" for fd, interface in tun_fds))
        launch = list(enter) or (["ip", "netns", "exec", netns] if netns else [])
        command = sh(*launch, *(drop_privileges(user, groups) if user else []), *argv)
        for fd, interface in tap_fds:
            command += f" {fd}<>{tap_device(interface)}"
        for fd, _interface in tun_fds:
            command += f" {fd}<>/dev/net/tun"
        for fd, path in device_fds:
            command += f" {fd}<>{shlex.quote(path)}"
        for fd, path in image_fds:
            command += f" {fd}<{shlex.quote(path)}"
        if directory:
            command = f"( cd {shlex.quote(directory)} && {command} )"
        self._say(f"( umask 077 && exec {command} ) &" if user else command)

    def stop_process(self, pid_file: str, match: str, netns: str | None) -> None:
        self._say(f"kill $(cat {shlex.quote(pid_file)})")

    def signal_processes(self, netns: str, signal: str) -> None:
        send = f"{sh('ip', 'netns', 'pids', netns)} | xargs -r kill -{signal}"
        if signal == Signal.KILL:  # a process may fork while the others die
            self._say(f"while [ -n \"$({sh('ip', 'netns', 'pids', netns)})\" ]; do {send}; done")
        else:
            self._say(send)

    def load_config(self, argv: tuple[str, ...]) -> None:
        self._say(f"{sh(*argv)}{TOLERATED} FRR skips each line it does not take and loads the rest")

    def run_command(self, node: str, argv: tuple[str, ...], place: str) -> None:
        self._say(f"# startup command of {comment(node)}, allowed by the user at deploy time", sh(*argv))

    def read_state(self, node: str, argv: tuple[str, ...]) -> None:
        self._say(f"# what {comment(node)} runs now, as its kind reads it back into the lab", sh(*argv))

    def start_domain(self, uri: str, name: str, xml: str, vhost: bool) -> None:
        self._say(*heredoc(sh("virsh", "-c", uri, "create", "--paused", "/dev/stdin"), xml))

    def resume_domain(self, uri: str, name: str) -> None:
        self._say(sh("virsh", "-c", uri, "resume", name))

    def destroy_domain(self, uri: str, name: str) -> None:
        self._say(sh("virsh", "-c", uri, "destroy", name))
