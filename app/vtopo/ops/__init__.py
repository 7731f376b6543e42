"""Typed host operations. Each op names the resources it needs and makes, its inverse, and its shell equivalent.

An op whose inverse is None is undone by removing what it lives in (an address goes with its interface,
an interface inside a lab namespace goes with the namespace). Ops are plain data: the host layer applies them.
"""
from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar

HOST = ""  # the resource name of the host's own network namespace


def ns_resource(netns: str | None) -> str:
    return f"netns:{netns or HOST}"


def dev_resource(netns: str | None, name: str) -> str:
    return f"dev:{netns or HOST}/{name}"


def up_resource(netns: str | None, name: str) -> str:
    """An interface that is up: with its veth peer up too, it has carrier."""
    return f"up:{netns or HOST}/{name}"


def addresses_resource(netns: str | None) -> str:
    return f"addr:{netns or HOST}"


def ip_cmd(netns: str | None, *args: str) -> str:
    prefix = ["ip"] + (["-n", netns] if netns else [])
    return " ".join(prefix + [shlex.quote(a) for a in args])


def in_netns(netns: str | None, argv: list[str] | tuple[str, ...]) -> str:
    command = " ".join(shlex.quote(a) for a in argv)
    return f"ip netns exec {shlex.quote(netns)} {command}" if netns else command


@dataclass(frozen=True, kw_only=True)
class Op:
    """Base of every op. `owner` names the node or link the op belongs to, for messages."""

    owner: str
    summary_text: ClassVar[str] = ""

    @property
    def name_of_op(self) -> str:
        return type(self).__name__

    def requires(self) -> frozenset[str]:
        return frozenset()

    def provides(self) -> frozenset[str]:
        return frozenset()

    def explain(self) -> list[str]:
        raise NotImplementedError

    def inverse(self) -> Op | None:
        return None

    def summary(self) -> str:
        return self.summary_text.format(**{f.name: getattr(self, f.name) for f in fields(self)})

    def to_json(self) -> dict[str, Any]:
        data = {"op": self.name_of_op}
        data.update({k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()})
        return data


# ---------------------------------------------------------------- namespaces

@dataclass(frozen=True, kw_only=True)
class CreateNamespace(Op):
    name: str
    summary_text: ClassVar[str] = "create network namespace {name}"

    def provides(self) -> frozenset[str]:
        return frozenset({ns_resource(self.name), dev_resource(self.name, "lo")})

    def explain(self) -> list[str]:
        return [f"ip netns add {self.name}", ip_cmd(self.name, "link", "set", "lo", "up")]

    def inverse(self) -> Op:
        return DeleteNamespace(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class DeleteNamespace(Op):
    name: str
    summary_text: ClassVar[str] = "delete network namespace {name}"

    def explain(self) -> list[str]:
        return [f"ip netns del {self.name}"]


# ---------------------------------------------------------------- links

@dataclass(frozen=True, kw_only=True)
class DeleteLink(Op):
    name: str
    netns: str | None = None
    summary_text: ClassVar[str] = "delete interface {name}"

    def explain(self) -> list[str]:
        return [ip_cmd(self.netns, "link", "del", self.name)]


@dataclass(frozen=True, kw_only=True)
class CreateBridge(Op):
    name: str
    stp: bool = False
    forward_delay_s: float = 15.0
    ageing_s: float = 300.0
    summary_text: ClassVar[str] = "create Linux bridge {name}"

    def provides(self) -> frozenset[str]:
        return frozenset({dev_resource(None, self.name)})

    def explain(self) -> list[str]:
        return [ip_cmd(None, "link", "add", self.name, "type", "bridge", "stp_state", "1" if self.stp else "0",
                       "forward_delay", str(round(self.forward_delay_s * 100)),
                       "ageing_time", str(round(self.ageing_s * 100)))]

    def inverse(self) -> Op:
        return DeleteLink(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class CreateVeth(Op):
    """A veth pair. When an end lives in a lab namespace, the pair dies with the namespace: the kernel then
    removes all of a destroyed lab's veths in one batch, far faster than one at a time."""

    name: str
    netns: str | None
    peer: str
    peer_netns: str | None
    summary_text: ClassVar[str] = "create veth pair {name} <-> {peer}"

    def requires(self) -> frozenset[str]:
        return frozenset({ns_resource(self.netns), ns_resource(self.peer_netns)})

    def provides(self) -> frozenset[str]:
        return frozenset({dev_resource(self.netns, self.name), dev_resource(self.peer_netns, self.peer)})

    def explain(self) -> list[str]:
        args = ["link", "add", self.name, "type", "veth", "peer", "name", self.peer]
        if self.peer_netns:
            args += ["netns", self.peer_netns]
        return [ip_cmd(self.netns, *args)]

    def inverse(self) -> Op | None:
        if self.netns is None and self.peer_netns is None:
            return DeleteLink(owner=self.owner, name=self.name)
        return None

    def host_ends(self) -> list[str]:
        return [name for name, netns in ((self.name, self.netns), (self.peer, self.peer_netns)) if netns is None]


@dataclass(frozen=True, kw_only=True)
class CreateMacvlan(Op):
    name: str
    netns: str | None
    lower: str
    lower_netns: str | None
    mode: str
    summary_text: ClassVar[str] = "create macvlan {name} on {lower}, mode {mode}"

    def requires(self) -> frozenset[str]:
        return frozenset({ns_resource(self.netns), dev_resource(self.lower_netns, self.lower)})

    def provides(self) -> frozenset[str]:
        return frozenset({dev_resource(self.netns, self.name)})

    def explain(self) -> list[str]:
        args = ["link", "add", "link", self.lower, "name", self.name]
        if self.netns:
            args += ["netns", self.netns]
        return [ip_cmd(self.lower_netns, *args, "type", "macvlan", "mode", self.mode)]

    def inverse(self) -> Op | None:
        return None if self.netns else DeleteLink(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class CreateMacvtap(Op):
    """A macvtap in the host namespace. QEMU opens /dev/tapN, where N is its ifindex."""

    name: str
    lower: str
    mode: str
    summary_text: ClassVar[str] = "create macvtap {name} on {lower}, mode {mode}"

    def requires(self) -> frozenset[str]:
        return frozenset({dev_resource(None, self.lower)})

    def provides(self) -> frozenset[str]:
        return frozenset({dev_resource(None, self.name)})

    def explain(self) -> list[str]:
        return [ip_cmd(None, "link", "add", "link", self.lower, "name", self.name, "type", "macvtap", "mode", self.mode),
                f"# its character device: /dev/tap$(cat /sys/class/net/{self.name}/ifindex)"]

    def inverse(self) -> Op:
        return DeleteLink(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class CreateTap(Op):
    name: str
    summary_text: ClassVar[str] = "create tap device {name}"

    def provides(self) -> frozenset[str]:
        return frozenset({dev_resource(None, self.name)})

    def explain(self) -> list[str]:
        return [ip_cmd(None, "tuntap", "add", "dev", self.name, "mode", "tap")]

    def inverse(self) -> Op:
        return DeleteLink(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class SetMaster(Op):
    name: str
    master: str
    hairpin: bool = False
    summary_text: ClassVar[str] = "attach {name} to bridge {master}"

    def requires(self) -> frozenset[str]:
        return frozenset({dev_resource(None, self.name), dev_resource(None, self.master)})

    def explain(self) -> list[str]:
        lines = [ip_cmd(None, "link", "set", self.name, "master", self.master)]
        if self.hairpin:
            lines.append(f"bridge link set dev {self.name} hairpin on")
        return lines


@dataclass(frozen=True, kw_only=True)
class ConfigureLink(Op):
    """MTU, MAC, the ownership tag (ifalias) and link state of one interface."""

    name: str
    netns: str | None
    mtu: int = 0
    mac: str = ""
    alias: str = ""
    up: bool = True
    summary_text: ClassVar[str] = "configure and bring up {name}"

    def requires(self) -> frozenset[str]:
        return frozenset({dev_resource(self.netns, self.name)})

    def provides(self) -> frozenset[str]:
        return frozenset({up_resource(self.netns, self.name)}) if self.up else frozenset()

    def explain(self) -> list[str]:
        args = ["link", "set", "dev", self.name]
        if self.mtu:
            args += ["mtu", str(self.mtu)]
        if self.mac:
            args += ["address", self.mac]
        if self.alias:
            args += ["alias", self.alias]
        args.append("up" if self.up else "down")
        return [ip_cmd(self.netns, *args)]


@dataclass(frozen=True, kw_only=True)
class AddAddress(Op):
    name: str
    netns: str | None
    cidr: str
    summary_text: ClassVar[str] = "address {cidr} on {name}"

    def requires(self) -> frozenset[str]:
        return frozenset({dev_resource(self.netns, self.name)})

    def provides(self) -> frozenset[str]:
        return frozenset({addresses_resource(self.netns)})

    def explain(self) -> list[str]:
        return [ip_cmd(self.netns, "addr", "add", self.cidr, "dev", self.name)]


@dataclass(frozen=True, kw_only=True)
class AddRoute(Op):
    netns: str | None
    destination: str
    gateway: str
    summary_text: ClassVar[str] = "route {destination} via {gateway}"

    def requires(self) -> frozenset[str]:
        return frozenset({addresses_resource(self.netns)})

    def explain(self) -> list[str]:
        return [ip_cmd(self.netns, "route", "add", self.destination, "via", self.gateway)]


@dataclass(frozen=True, kw_only=True)
class SetSysctl(Op):
    """A per-namespace sysctl; in the host namespace only the per-device sysctl of a device the lab made."""

    netns: str | None
    key: str
    value: str
    device: str = ""
    summary_text: ClassVar[str] = "sysctl {key}={value}"

    def requires(self) -> frozenset[str]:
        return frozenset({ns_resource(self.netns)} | ({dev_resource(self.netns, self.device)} if self.device else set()))

    def explain(self) -> list[str]:
        return [in_netns(self.netns, ["sysctl", "-qw", f"{self.key}={self.value}"])]


@dataclass(frozen=True, kw_only=True)
class SetImpairment(Op):
    name: str
    netns: str | None
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    loss_pct: float = 0.0
    rate_mbit: float = 0.0
    summary_text: ClassVar[str] = "impair {name} with netem"

    def requires(self) -> frozenset[str]:
        return frozenset({dev_resource(self.netns, self.name)})

    def explain(self) -> list[str]:
        tc = f"tc -n {self.netns}" if self.netns else "tc"
        lines, parent = [], "root"
        if self.delay_ms or self.jitter_ms or self.loss_pct:
            args = ["qdisc", "add", "dev", self.name, "root", "handle", "1:", "netem"]
            if self.delay_ms or self.jitter_ms:
                args += ["delay", f"{self.delay_ms:g}ms"] + ([f"{self.jitter_ms:g}ms"] if self.jitter_ms else [])
            if self.loss_pct:
                args += ["loss", f"{self.loss_pct:g}%"]
            lines.append(f"{tc} {' '.join(args)}")
            parent = "parent 1:1"
        if self.rate_mbit:
            burst = max(round(self.rate_mbit * 1_000_000 / 8 / 100), 2 * 1514)  # 10 ms worth, two frames at least
            lines.append(f"{tc} qdisc add dev {self.name} {parent} handle 2: tbf rate {self.rate_mbit:g}mbit "
                         f"burst {burst} latency 50ms")
        return lines


@dataclass(frozen=True, kw_only=True)
class SetTxChecksum(Op):
    """OVS's userspace datapath does not fill in TCP checksums that veth offloaded, so the sender must."""

    name: str
    netns: str | None
    enabled: bool = False
    summary_text: ClassVar[str] = "turn TX checksum offload off on {name} (OVS userspace datapath)"

    def requires(self) -> frozenset[str]:
        return frozenset({dev_resource(self.netns, self.name)})

    def explain(self) -> list[str]:
        return [in_netns(self.netns, ["ethtool", "-K", self.name, "tx", "on" if self.enabled else "off"])]


# ---------------------------------------------------------------- Open vSwitch

def _external_ids(lab: str) -> str:
    return f"external_ids:vtopo-lab={lab}"


@dataclass(frozen=True, kw_only=True)
class OvsAddBridge(Op):
    name: str
    datapath: str
    fail_mode: str
    lab: str
    summary_text: ClassVar[str] = "create Open vSwitch bridge {name} ({datapath} datapath)"

    def provides(self) -> frozenset[str]:
        return frozenset({f"ovs:{self.name}"})

    def explain(self) -> list[str]:
        return [f"ovs-vsctl add-br {self.name} -- set bridge {self.name} datapath_type={self.datapath} "
                f"fail_mode={self.fail_mode} {_external_ids(self.lab)}"]

    def inverse(self) -> Op:
        return OvsDeleteBridge(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class OvsDeleteBridge(Op):
    name: str
    summary_text: ClassVar[str] = "delete Open vSwitch bridge {name}"

    def explain(self) -> list[str]:
        return [f"ovs-vsctl --if-exists del-br {self.name}"]


@dataclass(frozen=True, kw_only=True)
class OvsAddPort(Op):
    bridge: str
    name: str
    ofport: int
    lab: str
    port_type: str = ""
    summary_text: ClassVar[str] = "add port {name} to {bridge} as OpenFlow port {ofport}"

    def requires(self) -> frozenset[str]:
        needs = {f"ovs:{self.bridge}"}
        if not self.port_type:
            needs.add(dev_resource(None, self.name))
        return frozenset(needs)

    def provides(self) -> frozenset[str]:
        return frozenset({f"ovsport:{self.bridge}/{self.ofport}"})

    def explain(self) -> list[str]:
        kind = f" type={self.port_type}" if self.port_type else ""
        return [f"ovs-vsctl add-port {self.bridge} {self.name} -- set interface {self.name}{kind} "
                f"ofport_request={self.ofport} {_external_ids(self.lab)}"]


@dataclass(frozen=True, kw_only=True)
class OvsAddFlows(Op):
    bridge: str
    flows: tuple[str, ...]
    ports: tuple[int, ...]
    summary_text: ClassVar[str] = "install OpenFlow rules on {bridge}"

    def requires(self) -> frozenset[str]:
        return frozenset({f"ovs:{self.bridge}"} | {f"ovsport:{self.bridge}/{p}" for p in self.ports})

    def explain(self) -> list[str]:
        return [f"ovs-ofctl add-flow {self.bridge} {shlex.quote(flow)}" for flow in self.flows]


# ---------------------------------------------------------------- files and processes

@dataclass(frozen=True, kw_only=True)
class MakeDirectory(Op):
    """A directory, owned by `user` when a daemon that drops privileges must write in it."""

    path: str
    user: str = ""
    summary_text: ClassVar[str] = "create directory {path}"

    def requires(self) -> frozenset[str]:
        return frozenset({f"file:{self.path.rsplit('/', 1)[0]}"})

    def provides(self) -> frozenset[str]:
        return frozenset({f"file:{self.path}"})

    def explain(self) -> list[str]:
        lines = [f"mkdir -p {shlex.quote(self.path)}"]
        if self.user:
            lines.append(f"chown {self.user}: {shlex.quote(self.path)}")
        return lines

    def inverse(self) -> Op:
        return RemoveDirectory(owner=self.owner, path=self.path)


@dataclass(frozen=True, kw_only=True)
class RemoveDirectory(Op):
    """Removes the directory and whatever the lab's daemons left in it (pid files, sockets, logs)."""

    path: str
    summary_text: ClassVar[str] = "remove directory {path}"

    def explain(self) -> list[str]:
        return [f"rm -rf {shlex.quote(self.path)}"]


@dataclass(frozen=True, kw_only=True)
class WriteFile(Op):
    path: str
    content: str
    summary_text: ClassVar[str] = "write {path}"

    def requires(self) -> frozenset[str]:
        return frozenset({f"file:{self.path.rsplit('/', 1)[0]}"})

    def provides(self) -> frozenset[str]:
        return frozenset({f"file:{self.path}"})

    def explain(self) -> list[str]:
        return [f"cat > {shlex.quote(self.path)} <<'EOF'", *self.content.rstrip("\n").split("\n"), "EOF"]

    def inverse(self) -> Op:
        return RemoveFile(owner=self.owner, path=self.path)


@dataclass(frozen=True, kw_only=True)
class RemoveFile(Op):
    path: str
    summary_text: ClassVar[str] = "remove {path}"

    def explain(self) -> list[str]:
        return [f"rm -f {shlex.quote(self.path)}"]


@dataclass(frozen=True, kw_only=True)
class StartProcess(Op):
    """A long-running process inside a namespace (zebra, ospfd, qemu).

    `tap_fds` maps a file descriptor number to a macvtap interface whose /dev/tapN the process gets on that fd.
    `image_fds` maps a file descriptor number to a disk image that vtopo opens read-only (a regular file, never
    through a symlink) and hands over on that fd, so the process never opens a path itself.
    `after` lists extra resources that must exist first (the interfaces a daemon should see at start).
    `private_dirs` maps a path the program insists on (FRR's /var/tmp/frr, /var/run/frr) to a directory of
    the lab's, bind-mounted over it for this process only, so labs never share or leave files there.
    """

    name: str
    argv: tuple[str, ...]
    netns: str | None
    pid_file: str
    ready_path: str = ""
    tap_fds: tuple[tuple[int, str], ...] = ()
    image_fds: tuple[tuple[int, str], ...] = ()
    after: tuple[str, ...] = ()
    private_dirs: tuple[tuple[str, str], ...] = ()
    summary_text: ClassVar[str] = "start {name}"

    def requires(self) -> frozenset[str]:
        return frozenset({ns_resource(self.netns), f"file:{self.pid_file.rsplit('/', 1)[0]}", *self.after})

    def provides(self) -> frozenset[str]:
        return frozenset({f"process:{self.name}"})

    def explain(self) -> list[str]:
        command = in_netns(self.netns, self.argv)
        for fd, interface in self.tap_fds:
            command += f" {fd}<>/dev/tap$(cat /sys/class/net/{interface}/ifindex)"
        for fd, path in self.image_fds:
            command += f" {fd}<{shlex.quote(path)}"
        return [command]

    def inverse(self) -> Op:
        return StopProcess(owner=self.owner, name=self.name, pid_file=self.pid_file, match=self.argv[0])


@dataclass(frozen=True, kw_only=True)
class StopProcess(Op):
    name: str
    pid_file: str
    match: str
    summary_text: ClassVar[str] = "stop {name}"

    def explain(self) -> list[str]:
        return [f"kill $(cat {shlex.quote(self.pid_file)})"]


# ---------------------------------------------------------------- containment

@dataclass(frozen=True, kw_only=True)
class ContainForwarding(Op):
    """An nftables table of the lab's own: what the host forwards from the lab's devices (named `device_prefix`*)
    goes only to devices of the same lab, and nothing is forwarded into them from elsewhere; the rest is dropped and
    counted. Installed before the lab turns forwarding on anywhere in the host."""

    table: str
    device_prefix: str
    summary_text: ClassVar[str] = "contain forwarding to the lab's own devices (nftables table {table})"

    def provides(self) -> frozenset[str]:
        return frozenset({f"nftables:{self.table}"})

    def explain(self) -> list[str]:
        devices = shlex.quote(f"{self.device_prefix}*")
        chain = f"inet {self.table} forward"
        return [f"nft add table inet {self.table}",
                f"nft add chain {chain} '{{ type filter hook forward priority 0; policy accept; }}'",
                f"nft add rule {chain} iifname {devices} oifname != {devices} counter drop",
                f"nft add rule {chain} oifname {devices} iifname != {devices} counter drop"]

    def inverse(self) -> Op:
        return RemoveNftTable(owner=self.owner, table=self.table)


@dataclass(frozen=True, kw_only=True)
class RemoveNftTable(Op):
    table: str
    summary_text: ClassVar[str] = "delete nftables table {table}"

    def explain(self) -> list[str]:
        return [f"nft delete table inet {self.table}"]


OP_TYPES: dict[str, type[Op]] = {cls.__name__: cls for cls in (
    CreateNamespace, DeleteNamespace, DeleteLink, CreateBridge, CreateVeth, CreateMacvlan, CreateMacvtap, CreateTap,
    SetMaster, ConfigureLink, AddAddress, AddRoute, SetSysctl, SetImpairment, SetTxChecksum, OvsAddBridge,
    OvsDeleteBridge, OvsAddPort, OvsAddFlows, MakeDirectory, RemoveDirectory, WriteFile, RemoveFile, StartProcess,
    StopProcess, ContainForwarding, RemoveNftTable,
)}


def op_from_json(data: dict[str, Any]) -> Op:
    """Rebuild an op from `Op.to_json()` output (the journal stores ops this way)."""
    data = dict(data)
    cls = OP_TYPES[data.pop("op")]
    kwargs = {}
    for f in fields(cls):
        if f.name in data:
            value = data[f.name]
            if isinstance(value, list):
                value = tuple(tuple(v) if isinstance(v, list) else v for v in value)
            kwargs[f.name] = value
    return cls(**kwargs)
