"""The explained script is what a deploy does, field by field.

Every op of every shipped lab, and a specimen of every op with every field set (SPECIMENS), is applied twice: on a
ScriptHost, whose lines are read back the way iproute2, tc, sysctl, ethtool, nft, ovs-vsctl and sh read them, and on
the real KernelHost, with the kernel and the tools replaced at their last step by recorders: the bytes of each netlink
request (read back with pyroute2's decoder), each tc request, the sysctl file written, each ioctl, the argv and stdin
of ovs-vsctl and ovs-ofctl, the JSON handed to nft, the calls into files, processes and libvirt. Both readings must be
the same list of effects. tests/test_explain_mutations.py breaks the kernel side on purpose and watches this fail.
"""
from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import os
import shlex
import struct
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyroute2.netlink.rtnl import RTM_DELLINK, RTM_GETLINK, RTM_NEWADDR, RTM_NEWLINK, RTM_NEWROUTE
from pyroute2.netlink.rtnl.ifaddrmsg import ifaddrmsg
from pyroute2.netlink.rtnl.ifinfmsg import IFF_UP, ifinfmsg
from pyroute2.netlink.rtnl.rtmsg import rtmsg

from vtopo import ops as o
from vtopo.host import kernel_host, netlink, nftables, ovs, owned_files
from vtopo.host import rtnl_wire as wire
from vtopo.host.applier import Applier
from vtopo.kinds.environment import HostFacts
from vtopo.lab import open_lab, plan_of
from vtopo.model.rules import lab_tag
from vtopo.resources import TOPOLOGIES

LABS = sorted(TOPOLOGIES.glob("*.vtopo"))
PREFIX = "vfth0"
Effect = tuple[Any, ...]


def _route_protocols() -> dict[str, int]:
    """iproute2's own names of route protocols, from its rt_protos table when installed (else the kernel's header)."""
    names = {"boot": 3, "static": 4}
    for table in (Path("/etc/iproute2/rt_protos"), Path("/usr/share/iproute2/rt_protos"),
                  Path("/usr/lib/iproute2/rt_protos")):
        if table.exists():
            for line in table.read_text().splitlines():
                words = line.split("#")[0].split()
                if len(words) == 2 and words[0].isdigit():
                    names[words[1]] = int(words[0])
    return names


RT_PROTOS = _route_protocols()

SPECIMENS: list[o.Op] = [
    o.CreateUserNamespace(owner="lab", path="/run/vtopo/ns/vfth0.user", uid=1001, gid=1002),
    o.CreateNamespace(owner="node c1", name="vfth0-c1"),
    o.CreateNamespace(owner="node c2", name="vfth0-c2", userns="/run/vtopo/ns/vfth0.user"),
    o.IsolateNode(owner="node c1", netns="vfth0-c1", hostname="c1", hosts_file="/run/vtopo/vfth0/hosts",
                  mount_ns="/run/vtopo/ns/vfth0-c1.mnt", uts_ns="/run/vtopo/ns/vfth0-c1.uts",
                  userns="/run/vtopo/ns/vfth0.user"),
    o.CreateBridge(owner="node br", name="vfth0-br", stp=True, forward_delay_s=4.0, ageing_s=30.5),
    o.CreateBridge(owner="node br", name="vfth0-br2", stp=False, forward_delay_s=0.0, ageing_s=300.0),
    o.CreateVeth(owner="link", name="vfth0-br-p1", netns=None, peer="eth0", peer_netns="vfth0-c1"),
    o.CreateVeth(owner="link", name="eth1", netns="vfth0-c1", peer="vfth0-br-p2", peer_netns=None),
    o.CreateVeth(owner="link", name="eth2", netns="vfth0-c1", peer="eth2", peer_netns="vfth0-c2"),
    o.CreateVeth(owner="link", name="vfth0-a", netns=None, peer="vfth0-b", peer_netns=None),
    o.CreateMacvlan(owner="link", name="eth3", netns="vfth0-c1", lower="vfth0-mv", lower_netns=None, mode="vepa"),
    o.CreateMacvlan(owner="link", name="eth4", netns=None, lower="vfth0-a", lower_netns=None, mode="private"),
    o.CreateMacvtap(owner="link", name="vfth0-vm1-0", lower="vfth0-mv", mode="bridge"),
    o.CreateTap(owner="link", name="vfth0-vm1-1"),
    o.MoveLink(owner="node sw", name="vfth0-sw-p1", netns="vfth0-c1", new_name="eth5"),
    o.SetMaster(owner="link", name="vfth0-br-p1", master="vfth0-br", hairpin=True),
    o.SetMaster(owner="link", name="vfth0-br-p2", master="vfth0-br"),
    o.ConfigureLink(owner="link", name="eth0", netns="vfth0-c1", mtu=1400, mac="02:00:00:00:00:01",
                    alias="vtopo:vfth0", up=True),
    o.ConfigureLink(owner="link", name="vfth0-br-p1", netns=None, mtu=9000, up=False),
    o.ConfigureLink(owner="link", name="eth1", netns="vfth0-c1"),
    o.AddAddress(owner="link", name="eth0", netns="vfth0-c1", cidr="10.0.0.1/24"),
    o.AddAddress(owner="link", name="eth0", netns="vfth0-c1", cidr="2001:db8::1/64"),
    o.AddAddress(owner="link", name="vfth0-br", netns=None, cidr="192.0.2.1/28"),
    o.AddRoute(owner="node c1", netns="vfth0-c1", destination="default", gateway="10.0.0.254"),
    o.AddRoute(owner="node c1", netns="vfth0-c1", destination="198.51.100.0/24", gateway="10.0.0.253"),
    o.AddRoute(owner="node c1", netns="vfth0-c1", destination="2001:db8:1::/64", gateway="fe80::1", device="eth0"),
    o.AddRoute(owner="node h", netns=None, destination="203.0.113.0/24", gateway="192.0.2.2"),
    o.SetSysctl(owner="node r1", netns="vfth0-c1", key="net.ipv4.ip_forward", value="1"),
    o.SetSysctl(owner="node r1", netns="vfth0-c1", key="net/ipv4/conf/eth0.10/rp_filter", value="2"),
    o.SetSysctl(owner="link", netns=None, key="net.ipv6.conf.vfth0-br.disable_ipv6", value="1", device="vfth0-br"),
    o.SetImpairment(owner="link", name="eth0", netns="vfth0-c1", delay_ms=20.5, jitter_ms=3, loss_pct=1.5,
                    rate_mbit=100),
    o.SetImpairment(owner="link", name="vfth0-br-p1", netns=None, delay_ms=7),
    o.SetImpairment(owner="link", name="eth1", netns="vfth0-c1", loss_pct=0.25),
    o.SetImpairment(owner="link", name="eth2", netns="vfth0-c1", rate_mbit=2.5),
    o.SetTxChecksum(owner="link", name="eth0", netns="vfth0-c1"),
    o.SetTxChecksum(owner="link", name="vfth0-br-p1", netns=None, enabled=True),
    o.DeleteLink(owner="link", name="vfth0-a"),
    o.DeleteLink(owner="link", name="eth9", netns="vfth0-c1"),
    o.OvsAddBridge(owner="node sw", name="vfth0-sw", datapath="netdev", fail_mode="secure", lab=PREFIX),
    o.OvsAddPort(owner="link", bridge="vfth0-sw", name="vfth0-sw-p1", ofport=1, lab=PREFIX, port_type="internal"),
    o.OvsAddPort(owner="link", bridge="vfth0-sw", name="vfth0-sw-p2", ofport=2, lab=PREFIX),
    o.OvsAddFlows(owner="node sw", bridge="vfth0-sw", flows=("in_port=1,actions=output:2", "priority=0,actions=drop"),
                  ports=(1, 2)),
    o.OvsDeleteBridge(owner="node sw", name="vfth0-sw"),
    o.ContainForwarding(owner="lab", table="vtopo-vfth0", device_prefix="vfth0-"),
    o.ContainForwarding(owner="lab", table="vtopo-vfth0", device_prefix="vfth0-", host_node_devices=("vfth0-h", "x"),
                        host_addresses=("192.0.2.1", "2001:db8::1", "192.0.2.17")),
    o.RemoveNftTable(owner="lab", table="vtopo-vfth0"),
    o.MakeDirectory(owner="lab", path="/run/vtopo/vfth0"),
    o.MakeDirectory(owner="node r1", path="/run/vtopo/vfth0/r1", user="frr", mode=0o750),
    o.RemoveDirectory(owner="lab", path="/run/vtopo/vfth0"),
    o.WriteFile(owner="node r1", path="/run/vtopo/vfth0/r1/frr.conf", content="hostname r1\nEOF\n"),
    o.WriteHostsFile(owner="lab", path="/run/vtopo/vfth0/hosts", content="10.0.0.1 c1\n"),
    o.RemoveFile(owner="lab", path="/run/vtopo/vfth0/hosts"),
    o.RemoveNamespaceFiles(owner="node c1", paths=("/run/vtopo/ns/vfth0-c1.mnt", "/run/vtopo/ns/vfth0-c1.uts")),
    o.DeleteNamespace(owner="node c1", name="vfth0-c1"),
    o.StartProcess(owner="node vm", name="qemu vm", argv=("/usr/bin/qemu-system-x86_64", "-name", "vm"),
                   netns=None, pid_file="/run/vtopo/vfth0/vm/qemu.pid", ready_path="/run/vtopo/vfth0/vm/qmp",
                   ready_banner='{"QMP"', user="vtopo-qemu", groups=("kvm",), tap_fds=((3, "vfth0-vm1-0"),),
                   tun_fds=((4, "vfth0-vm1-1"),), device_fds=((5, "/dev/vhost-net"),),
                   image_fds=((6, "/var/lib/vtopo/disk.qcow2"),), private_dirs=(("/var/tmp/frr", "/run/x"),),
                   directory="/run/vtopo/vfth0/vm"),
    o.StartProcess(owner="node r1", name="zebra", argv=("/usr/lib/frr/zebra", "-d"), netns="vfth0-c1",
                   pid_file="/run/vtopo/vfth0/r1/zebra.pid"),
    o.StopProcess(owner="node r1", name="zebra", pid_file="/run/vtopo/vfth0/r1/zebra.pid", match="/usr/lib/frr/zebra"),
    o.LoadConfig(owner="node r1", node="r1", netns="vfth0-c1", directory="/run/vtopo/vfth0/r1",
                 argv=("vtysh", "-b", "--config_dir", "/run/vtopo/vfth0/r1")),
    o.RunCommand(owner="node h1", node="h1", command="echo hi", argv=("sh", "-c", "echo hi")),
    o.StartDomain(owner="node vm", name="vfth0-vm", uri="qemu:///system", xml="<domain>\n<name>vfth0-vm</name>\n</domain>",
                  vhost=True),
    o.ResumeDomain(owner="node vm", name="vfth0-vm", uri="qemu:///system"),
    o.DestroyDomain(owner="node vm", name="vfth0-vm", uri="qemu:///system"),
]


# ---------------------------------------------------------------- the kernel's side, recorded


class Kernel:
    """Stands in for the kernel and the tools below KernelHost, and writes down each effect asked of them."""

    def __init__(self) -> None:
        self.effects: list[Effect] = []
        self.netns: str | None = None  # the namespace the calling thread has entered
        self.indexes: dict[tuple[str | None, str], int] = {}
        self.fds: dict[int, str | None] = {}  # descriptors of namespaces, to the namespace's name
        self.tun: dict[int, str] = {}  # descriptors of /dev/net/tun, to the tap they were attached to
        self.tables = {"vtopo-vfth0"}  # the nftables tables there are

    def index(self, netns: str | None, name: str) -> int:
        return self.indexes.setdefault((netns, name), 100 + len(self.indexes))

    def name_of(self, index: int) -> str:
        return next(name for (_, name), number in self.indexes.items() if number == index)

    @contextlib.contextmanager
    def entered(self, netns: str | None) -> Iterator[None]:
        outer, self.netns = self.netns, netns
        try:
            yield
        finally:
            self.netns = outer

    def nft(self, commands: list[dict[str, Any]] | None = None, listing: str = "") -> Any:
        if commands is None:
            return {"nftables": [{"table": {"family": "inet", "name": name}} for name in sorted(self.tables)]}
        self.tables |= {command["add"]["table"]["name"] for command in commands if "table" in command.get("add", {})}
        self.effects.append(("nft", commands))
        return {}

    def open_netns(self, netns: str) -> int:
        fd = os.open(os.devnull, os.O_RDONLY)
        self.fds[fd] = netns
        return fd


class Rtnl:
    """A rtnetlink socket in `netns`: each request decoded by pyroute2, as the kernel would read it."""

    def __init__(self, kernel: Kernel, netns: str | None) -> None:
        self.kernel, self.netns = kernel, netns

    def index(self, name: str) -> int:
        return self.kernel.index(self.netns, name)

    def request(self, payload: bytes, kind: int, flags: int = 0) -> list[Any]:
        header = struct.pack("=IHHII", 16 + len(payload), kind, flags, 0, 0)
        if kind == RTM_GETLINK:
            return [_decoded(ifinfmsg, wire.link(wire.text(wire.IFLA_IFNAME, name), index=number))
                    for (netns, name), number in self.kernel.indexes.items() if netns == self.netns]
        if kind in (RTM_NEWLINK, RTM_DELLINK):
            self.kernel.effects.append(self._link(kind, _decoded(ifinfmsg, payload)))
        elif kind == RTM_NEWADDR:
            message = ifaddrmsg(header + payload)
            message.decode()
            address = message.get("IFA_ADDRESS")
            assert message.get("IFA_LOCAL") in (None, address)
            self.kernel.effects.append(("addr", self.netns, self.kernel.name_of(message["index"]),
                                        f"{address}/{message['prefixlen']}", bool(message["flags"] & wire.IFA_F_NODAD)))
        elif kind == RTM_NEWROUTE:
            message = rtmsg(header + payload)
            message.decode()
            destination = message.get("RTA_DST")
            oif = message.get("RTA_OIF")
            self.kernel.effects.append((
                "route", self.netns, f"{destination}/{message['dst_len']}" if destination else "default",
                message.get("RTA_GATEWAY"), self.kernel.name_of(oif) if oif else "", message["proto"],
                message["table"], message["type"], message["scope"]))
        return []

    def _link(self, kind: int, message: Any) -> Effect:
        """A link request as what it asks: its fields, with indexes as names and namespace descriptors as names."""
        fields = _flat(message["attrs"])
        fields = {key: self._named(key, value) for key, value in fields.items()}
        if message["index"] and (message["index"], self.netns) in [(n, ns) for (ns, _), n in self.kernel.indexes.items()]:
            fields["index"] = self.kernel.name_of(message["index"])  # (vtopo numbers a new macvtap: no script word)
        if message["change"] & IFF_UP:
            fields["up"] = bool(message["flags"] & IFF_UP)
        verb = "del" if kind == RTM_DELLINK else "new"
        return ("link", verb, self.netns, tuple(sorted(fields.items())))

    def _named(self, key: str, value: Any) -> Any:
        if key.endswith("IFLA_NET_NS_FD"):
            return self.kernel.fds[value]
        if key in ("IFLA_LINK", "IFLA_MASTER") and value:
            return self.kernel.name_of(value)
        return value


def _decoded(message_class: Any, payload: bytes) -> Any:
    message = message_class(struct.pack("=IHHII", 16 + len(payload), 0, 0, 0, 0) + payload)
    message.decode()
    return message


def _flat(attributes: list[Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in attributes:
        if isinstance(value, dict) and "attrs" in value:
            flat.update(_flat(value["attrs"], f"{prefix}{name}."))
        else:
            flat[prefix + name] = value
    return flat


class Qdiscs:
    """pyroute2's IPRoute for traffic control in `netns`: each qdisc added, with its options as tc takes them."""

    def __init__(self, kernel: Kernel, netns: str | None) -> None:
        self.kernel, self.netns = kernel, netns

    def tc(self, command: str, kind: str = "", **options: Any) -> None:
        if command == "add":  # (the deletion of what was there first: a fresh device, as the script's, has nothing)
            index = options.pop("index")
            self.kernel.effects.append(("qdisc", self.netns, self.kernel.name_of(index), kind,
                                        tuple(sorted(options.items()))))


class Ioctls:
    """fcntl for the kernel's ioctls: a tap made persistent, tun attached, ethtool's transmit checksum."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel

    def ioctl(self, fd: int, request: int, argument: Any) -> Any:
        if request == netlink._TUNSETIFF:
            name, flags = struct.unpack_from("16sH", argument)
            self.kernel.tun[fd] = name.rstrip(b"\0").decode()
            self.kernel.effects.append(("tun", self.kernel.netns, self.kernel.tun[fd], flags))
        elif request == netlink._TUNSETPERSIST:
            self.kernel.effects.append(("persist", self.kernel.tun[fd], argument))
        elif request == netlink._SIOCETHTOOL:
            name, pointer = struct.unpack_from("16sP", argument)
            command, value = struct.unpack("II", ctypes.string_at(pointer, 8))
            assert command == netlink._ETHTOOL_STXCSUM
            self.kernel.effects.append(("ethtool tx", self.kernel.netns, name.rstrip(b"\0").decode(), bool(value)))
        else:
            raise AssertionError(f"unexpected ioctl {request:#x}")
        return argument


class Calls:
    """A module of host functions: each call written down as an effect named `prefix`.name."""

    def __init__(self, kernel: Kernel, prefix: str, **answers: Any) -> None:
        self.kernel, self.prefix, self.answers = kernel, prefix, answers

    def __getattr__(self, name: str) -> Any:
        if name.isupper():
            return getattr(owned_files, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self.kernel.effects.append((f"{self.prefix}.{name}", args, tuple(sorted(kwargs.items()))))
            return self.answers.get(name)
        return call


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Applier, Kernel]]:
    """An Applier whose KernelHost runs down to the last step before the kernel and the tools, which record."""
    kernel = Kernel()
    monkeypatch.setattr(netlink.Netlink, "_rtnl", lambda self, netns: Rtnl(kernel, netns))
    monkeypatch.setattr(netlink.Netlink, "_qdisc_socket", lambda self, netns: Qdiscs(kernel, netns))
    monkeypatch.setattr(netlink, "entered", kernel.entered)
    monkeypatch.setattr(netlink, "open_netns", kernel.open_netns)
    monkeypatch.setattr(netlink, "create_netns", lambda name, inside: kernel.effects.append(("netns", name)))
    monkeypatch.setattr(netlink, "fcntl", Ioctls(kernel))
    monkeypatch.setattr(netlink, "open", lambda path, mode: _SysctlFile(kernel, path), raising=False)
    monkeypatch.setattr(netlink, "os", _Os(kernel))
    monkeypatch.setattr(ovs, "_run", lambda argv, input=None, timeout_s=0: kernel.effects.append(
        ("run", tuple(argv), input)) or "")
    monkeypatch.setattr(nftables, "_nft", kernel.nft)
    monkeypatch.setattr(kernel_host, "namespaces", Calls(kernel, "netns"))
    monkeypatch.setattr(kernel_host, "namespace_maker", Calls(kernel, "namespace_maker"))
    monkeypatch.setattr(kernel_host, "NamespaceMaker", _Makers(kernel))
    monkeypatch.setattr(kernel_host, "owned_files", Calls(kernel, "files"))
    monkeypatch.setattr(kernel_host, "shutil", Calls(kernel, "shutil"))
    monkeypatch.setattr(kernel_host, "Path", _Path)
    _Path.kernel = kernel
    monkeypatch.setattr(kernel_host, "processes", Calls(kernel, "processes", run_command=""))
    monkeypatch.setattr(kernel_host, "read_pid", lambda path: kernel.effects.append(("read pid", str(path))) or 4242)
    monkeypatch.setattr(kernel_host, "domains", Calls(kernel, "domains", start="<domain/>"))
    monkeypatch.setattr(kernel_host, "open_device", lambda path: kernel.effects.append(("open", path, "rw")) or
                        os.open(os.devnull, os.O_RDWR))
    monkeypatch.setattr(kernel_host, "open_image", lambda path: kernel.effects.append(("open", path, "r")) or
                        os.open(os.devnull, os.O_RDONLY))
    applier = Applier(PREFIX)
    kernel.fds[applier.netlink._host_fd] = None
    try:
        yield applier, kernel
    finally:
        applier.close()


class _SysctlFile(contextlib.AbstractContextManager["_SysctlFile"]):
    def __init__(self, kernel: Kernel, path: str) -> None:
        self.kernel, self.path = kernel, path

    def __exit__(self, *_exc: object) -> None:
        return None

    def write(self, value: str) -> None:
        self.kernel.effects.append(("sysctl", self.kernel.netns, self.path, value))


class _Os:
    """os for netlink.py: /dev/net/tun opened is /dev/null, and /dev/tapN appears as the kernel makes it."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.path = types.SimpleNamespace(exists=self._exists)
        self._asked: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def open(self, path: str, flags: int, *args: Any) -> int:
        return os.open(os.devnull if path == "/dev/net/tun" else path, flags, *args)

    def _exists(self, path: str) -> bool:
        """A tap's device is not there before it is looked for the first time, and is there after."""
        seen = path in self._asked
        self._asked.add(path)
        return seen


class _Makers:
    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel

    def __getattr__(self, name: str) -> Any:
        def make(*args: Any) -> Calls:
            self.kernel.effects.append((f"maker.{name}", args))
            return Calls(self.kernel, "maker")
        return make


class _Path(type(Path())):  # type: ignore[misc]
    kernel: Kernel

    def unlink(self, missing_ok: bool = False) -> None:
        self.kernel.effects.append(("unlink", str(self), missing_ok))

    def is_dir(self, **_: Any) -> bool:
        return True


def kernel_effects(applier: Applier, kernel: Kernel, op: o.Op) -> list[Effect]:
    kernel.effects.clear()
    applier.apply(op)
    return normalized(list(kernel.effects))


# ---------------------------------------------------------------- the script's side, read


def script_effects(op: o.Op) -> list[Effect]:
    """The op's lines as the tools they call would read them, in the effects the kernel side records."""
    reader = ScriptReader()
    lines = o.script_of(op)
    while lines:
        line = lines.pop(0)
        if line.startswith("#"):
            reader.say("comment", line)
            continue
        if "<<'" in line:
            command, delimiter = line.split(" <<'")
            delimiter = delimiter.rstrip("'")
            body = []
            while (text := lines.pop(0)) != delimiter:
                body.append(text)
            reader.heredoc(shlex.split(command), body)
            continue
        reader.line(line)
    return normalized(reader.effects)


def normalized(effects: list[Effect]) -> list[Effect]:
    """A veth pair is one pair of ends, whichever end's namespace asked for it."""
    result = []
    for effect in effects:
        if effect[:2] == ("link", "new") and dict(effect[3]).get("IFLA_LINKINFO.IFLA_INFO_KIND") == "veth":
            fields = dict(effect[3])
            ends = {(fields["IFLA_IFNAME"], fields.get("IFLA_NET_NS_FD", effect[2])),
                    (fields["IFLA_LINKINFO.IFLA_INFO_DATA.VETH_INFO_PEER.IFLA_IFNAME"],
                     fields.get("IFLA_LINKINFO.IFLA_INFO_DATA.VETH_INFO_PEER.IFLA_NET_NS_FD", effect[2]))}
            effect = ("veth", frozenset(ends), len(fields))
        result.append(effect)
    return result


def _netns_option(words: list[str]) -> tuple[str | None, list[str]]:
    if words[1:2] == ["-n"]:
        return words[2], [words[0], *words[3:]]
    return None, words


class ScriptReader:
    """Reads each line as its tool does, into the kernel side's effects."""

    def __init__(self) -> None:
        self.effects: list[Effect] = []

    def say(self, *effect: Any) -> None:
        self.effects.append(effect)

    def link(self, verb: str, netns: str | None, **fields: Any) -> None:
        self.say("link", verb, netns, tuple(sorted(fields.items())))

    def line(self, line: str) -> None:
        words = shlex.split(line.replace('"$LAB_TAG"', shlex.quote(lab_tag(PREFIX))))
        if words[:3] == ["ip", "netns", "exec"]:
            self.inside(words[3], words[4:])
        elif words[0] == "ip":
            netns, words = _netns_option(words)
            self.ip(netns, words[1:])
        elif words[0] == "tc":
            netns, words = _netns_option(words)
            self.tc(netns, words[1:])
        elif words[0] == "bridge":
            assert words[1:4] == ["link", "set", "dev"] and words[5] == "hairpin"
            self.link("new", None, IFLA_IFNAME=words[4], **{
                "IFLA_LINKINFO.IFLA_INFO_SLAVE_KIND": "bridge",
                "IFLA_LINKINFO.IFLA_INFO_SLAVE_DATA.IFLA_BRPORT_MODE": int(words[6] == "on")})
        elif words[0] == "ovs-vsctl":
            self.say("run", ("ovs-vsctl", "--timeout=5", *(["--"] + [w for w in words[1:]])), None)
        elif words[0] == "nft":
            self.nft(words[1:])
        else:
            self.inside(None, words)

    def inside(self, netns: str | None, words: list[str]) -> None:
        if words[0] == "sysctl":
            assert words[1] == "-qw"
            key, value = words[2].split("=", 1)
            path = key if "/" in key else key.replace(".", "/")  # sysctl(8): dots separate unless slashes do
            self.say("sysctl", netns, f"/proc/sys/{path}", value)
        elif words[0] == "ethtool":
            assert words[1] == "-K" and words[3] == "tx"
            self.say("ethtool tx", netns, words[2], words[4] == "on")
        else:
            self.other(netns, words)

    def ip(self, netns: str | None, words: list[str]) -> None:
        family = words[0] == "-6"
        words = words[1:] if family else words
        match words[:2]:
            case ["link", "add"]:
                self.link_add(netns, words[2:])
            case ["link", "del"]:
                self.link("del", netns, IFLA_IFNAME=words[2])
            case ["link", "set"]:
                self.link_set(netns, words[2:])
            case ["addr", "add"]:
                assert words[3] == "dev"
                self.say("addr", netns, words[4], words[2], words[5:] == ["nodad"])
            case ["route", "add"]:
                self.route(netns, words[2:], family)
            case ["tuntap", "add"]:
                assert words[2] == "dev" and words[4:] == ["mode", "tap"]
                self.say("tun", netns, words[3], netlink._IFF_TAP | netlink._IFF_NO_PI | netlink._IFF_TUN_EXCL)
                self.say("persist", words[3], 1)
            case ["netns", "add"]:
                self.say("netns", words[2])
            case ["netns", "del"]:
                self.say("netns.delete_netns", (words[2],), ())
            case _:
                raise AssertionError(f"unread ip command {words}")

    def link_add(self, netns: str | None, words: list[str]) -> None:
        fields: dict[str, Any] = {}
        if words[0] == "link":  # link LOWER name NAME [netns N] type macvlan|macvtap mode M
            fields["IFLA_LINK"] = words[1]
            words = words[2:]
            assert words[0] == "name"
            words = words[1:]
        fields["IFLA_IFNAME"] = words[0]
        words = words[1:]
        if words[0] == "netns":
            fields["IFLA_NET_NS_FD"], words = words[1], words[2:]
        assert words[0] == "type"
        kind, options = words[1], words[2:]
        fields["IFLA_LINKINFO.IFLA_INFO_KIND"] = kind
        data = "IFLA_LINKINFO.IFLA_INFO_DATA."
        if kind == "bridge":
            names = {"stp_state": "IFLA_BR_STP_STATE", "forward_delay": "IFLA_BR_FORWARD_DELAY",
                     "ageing_time": "IFLA_BR_AGEING_TIME"}
            for option, value in zip(options[::2], options[1::2]):
                fields[data + names[option]] = int(value)
        elif kind == "veth":
            assert options[:2] == ["peer", "name"]
            fields[data + "VETH_INFO_PEER.IFLA_IFNAME"] = options[2]
            if options[3:]:
                assert options[3] == "netns"
                fields[data + "VETH_INFO_PEER.IFLA_NET_NS_FD"] = options[4]
        elif kind in ("macvlan", "macvtap"):
            assert options[0] == "mode"
            fields[f"{data}IFLA_{kind.upper()}_MODE"] = options[1]
        else:
            raise AssertionError(f"unread link type {kind}")
        self.link("new", netns, **fields)

    def link_set(self, netns: str | None, words: list[str]) -> None:
        if words[1] == "master":  # ip link set NAME master M
            self.link("new", netns, IFLA_IFNAME=words[0], IFLA_MASTER=words[2])
            return
        assert words[0] == "dev"
        name, words = words[1], words[2:]
        fields: dict[str, Any] = {"IFLA_IFNAME": name}
        while words:
            match words:
                case ["mtu", value, *words]:
                    fields["IFLA_MTU"] = int(value)
                case ["address", value, *words]:
                    fields["IFLA_ADDRESS"] = value
                case ["alias", value, *words]:
                    fields["IFLA_IFALIAS"] = value
                case ["netns", target, "name", new_name, *words]:  # a move: the link by index, renamed there
                    fields = {"index": name, "IFLA_IFNAME": new_name, "IFLA_NET_NS_FD": target}
                case ["up" | "down" as state, *words]:
                    fields["up"] = state == "up"
                case _:
                    raise AssertionError(f"unread ip link set {words}")
        self.link("new", netns, **fields)

    def route(self, netns: str | None, words: list[str], family: bool) -> None:
        destination, words = words[0], words[1:]
        options = dict(zip(words[::2], words[1::2]))
        gateway = options["via"]
        assert family == (ipaddress.ip_address(gateway).version == 6)
        if destination != "default":
            destination = str(ipaddress.ip_network(destination))
        self.say("route", netns, destination, gateway, options.get("dev", ""), RT_PROTOS[options["proto"]],
                 254, 1, 0)  # iproute2's defaults: the main table, a unicast route of universe scope

    def tc(self, netns: str | None, words: list[str]) -> None:
        assert words[:4] == ["qdisc", "add", "dev", words[3]]
        device, words = words[3], words[4:]
        parent = 0xFFFFFFFF
        if words[0] == "root":
            words = words[1:]
        else:
            assert words[:2] == ["parent", "1:1"]
            parent, words = 0x10001, words[2:]
        assert words[0] == "handle"
        handle, kind, words = words[1], words[2], words[3:]
        options: dict[str, Any] = {"handle": handle}
        if kind == "netem":
            options.update(delay=0, jitter=0, loss=0)
            while words:
                match words:
                    case ["delay", delay, jitter, *words] if jitter.endswith("ms"):
                        options.update(delay=_ms_in_us(delay), jitter=_ms_in_us(jitter))
                    case ["delay", delay, *words]:
                        options["delay"] = _ms_in_us(delay)
                    case ["loss", loss, *words]:
                        options["loss"] = float(loss.rstrip("%"))
                    case _:
                        raise AssertionError(f"unread netem options {words}")
            assert parent == 0xFFFFFFFF
        else:
            assert kind == "tbf"
            given = dict(zip(words[::2], words[1::2]))
            options.update(parent=parent, rate=round(float(given["rate"].removesuffix("mbit")) * 1_000_000 / 8),
                           burst=int(given["burst"]), latency=_ms_in_us(given["latency"]))
        self.say("qdisc", netns, device, kind, tuple(sorted(options.items())))

    def nft(self, words: list[str]) -> None:
        self.say("nft words", tuple(words))

    def heredoc(self, words: list[str], body: list[str]) -> None:
        if words[0] == "ovs-ofctl":
            self.say("run", tuple(words), "\n".join(body) + "\n")
        elif words[0] == "cat":
            self.say("file", words[2], "\n".join(body) + "\n")
        else:
            assert words[:2] == ["virsh", "-c"] and words[3:] == ["create", "--paused", "/dev/stdin"]
            self.say("domains.start", (words[2], "\n".join(body)), ())

    def other(self, netns: str | None, words: list[str]) -> None:
        self.say("shell", netns, tuple(words))


def _ms_in_us(text: str) -> int:
    return round(float(text.removesuffix("ms")) * 1000)


# ---------------------------------------------------------------- what the two sides must share


def comparable(effects: list[Effect]) -> list[Effect]:
    """Effects as both sides state them: nft's JSON as the words of the nft commands that ask the same, netem's loss
    as a number, tbf's parent (root unless netem is) stated."""
    result: list[Effect] = []
    for effect in effects:
        match effect:
            case ("nft", commands):
                result += [("nft words", words) for words in nft_words(commands)]
            case ("qdisc", netns, device, "netem", options):
                result.append(("qdisc", netns, device, "netem", tuple(sorted(
                    (key, float(value) if key == "loss" else value) for key, value in options))))
            case ("qdisc", netns, device, "tbf", options):
                fields = dict(options)
                fields.setdefault("parent", 0xFFFFFFFF)
                result.append(("qdisc", netns, device, "tbf", tuple(sorted(fields.items()))))
            case _:
                result.append(effect)
    return result


def nft_words(commands: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """nft's JSON commands as the words of `nft add ...` that ask the same."""
    lines = []
    for command in commands:
        (verb, thing), = command.items()
        (kind, spec), = thing.items()
        if kind == "table":
            lines.append((verb, "table", spec["family"], spec["name"]))
        elif kind == "chain":
            lines.append((verb, "chain", spec["family"], spec["table"], spec["name"],
                          f"{{ type {spec['type']} hook {spec['hook']} priority {spec['prio']}; policy "
                          f"{spec['policy']}; }}"))
        else:
            lines.append((verb, "rule", spec["family"], spec["table"], spec["chain"],
                          *(word for expression in spec["expr"] for word in _nft_expression(expression))))
    return lines


def _nft_expression(expression: dict[str, Any]) -> list[str]:
    (kind, value), = expression.items()
    if kind != "match":
        return [kind]
    left = value["left"]
    if "meta" in left:
        words = [left["meta"]["key"]]
    elif "payload" in left:
        words = [left["payload"]["protocol"], left["payload"]["field"]]
    else:
        words = ["fib", *" . ".join(left["fib"]["flags"]).split(), left["fib"]["result"]]
    right = value["right"]
    shown = "{ " + ", ".join(right["set"]) + " }" if isinstance(right, dict) else right
    return [*words, *([] if value["op"] == "==" else [value["op"]]), shown]


def script_side(op: o.Op) -> list[Effect]:
    return comparable(script_effects(op))


def kernel_side(applier: Applier, kernel: Kernel, op: o.Op) -> list[Effect]:
    return comparable(kernel_effects(applier, kernel, op))


def assert_faithful(applier: Applier, kernel: Kernel, op: o.Op) -> None:
    """What the kernel and the tools were asked is what the script says. Where the kernel side calls into a module of
    the host (files, processes, namespaces, libvirt), whose work no kernel request shows as data, the script's lines
    must name what the call names, and say what it does (a directory's mode, a file's content, a process's argv)."""
    done = kernel_side(applier, kernel, op)
    said = script_side(op)
    calls = [effect for effect in done if _is_call(effect, op)]
    shell = [effect for effect in said if effect[0] in ("shell", "file", "comment") or _is_call(effect, op)]
    assert [e for e in done if e not in calls] == [e for e in said if e not in shell], op
    _assert_calls_said(op, calls, shell)


def _is_call(effect: Effect, op: o.Op) -> bool:
    """A call into a host module, or (for a process start) a tap opened for the process to inherit."""
    return "." in effect[0] or effect[0] in ("unlink", "read pid", "open") or (
        effect[0] == "tun" and isinstance(op, o.StartProcess))


NAMED_IN_SCRIPT = ("netns.delete_netns", "maker.", "namespace_maker.", "files.", "shutil.", "unlink", "open", "read pid",
                   "tun", "domains.start", "domains.resume", "domains.destroy")


def _assert_calls_said(op: o.Op, calls: list[Effect], said: list[Effect]) -> None:
    words = [word for effect in said for word in _words(effect)]
    for call in calls:
        if call[0].startswith(NAMED_IN_SCRIPT):  # their arguments, not the names of keyword arguments
            for value in _values(call[1] if isinstance(call[1], tuple) else call[1:]):
                if isinstance(value, str) and value not in ("", "r", "rw"):
                    assert any(value in word for word in words), (op, call, said)
    if isinstance(op, o.MakeDirectory):
        [(_, (path, mode), _kw), *rest] = calls
        assert ("shell", None, ("chmod", f"{mode:o}", path)) in said
        assert [call[1] for call in rest] == ([(path, op.user)] if op.user else [])
    if isinstance(op, (o.WriteFile, o.WriteHostsFile)):
        [call] = calls
        assert ("file", op.path, op.content) in said
        assert call[0] == ("files.write_file" if isinstance(op, o.WriteHostsFile) else "files.write_for_daemon")
    if isinstance(op, (o.RunCommand, o.LoadConfig)):
        [(name, (argv, _seconds), kwargs)] = calls
        [command] = [_command(effect) for effect in said if effect[0] == "shell"]
        cwd = dict(kwargs).get("cwd")
        assert name == "processes.run_command" and list(command) == (
            ["(", "cd", cwd, "&&", *argv, ")"] if cwd else argv), op
    if isinstance(op, o.StartProcess):
        assert_start_said(op, calls, said)


def _command(effect: Effect) -> list[str]:
    """A shell line's words, with the `ip netns exec` the reader took apart put back."""
    _, netns, words = effect
    return (["ip", "netns", "exec", netns] if netns else []) + list(words)


def _values(value: Any) -> Iterator[Any]:
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from _values(item)
    elif isinstance(value, dict):
        yield from _values(list(value.items()))
    elif isinstance(value, Path):
        yield str(value)
    else:
        yield value


def _words(effect: Effect) -> list[str]:
    return [str(value) for value in _values(effect) if value is not None]


def assert_start_said(op: o.StartProcess, calls: list[Effect], said: list[Effect]) -> None:
    """The script runs the argv the kernel side starts, behind the same namespace entry and privilege drop, and
    redirects exactly the descriptors the kernel side hands over."""
    [(_, (argv, netns, *_rest), kwargs)] = [call for call in calls if call[0] == "processes.start_daemon"]
    options = dict(kwargs)
    [command] = [_command(effect) for effect in said if effect[0] == "shell"]
    assert argv == list(op.argv) and netns == op.netns
    if op.user:
        assert command[:5] == ["(", "umask", "077", "&&", "exec"] and command[-2:] == [")", "&"]
        assert options["umask"] == 0o077
        command = command[5:-2]
    if op.directory:
        assert command[:4] == ["(", "cd", op.directory, "&&"] and command[-1] == ")"
        assert options["cwd"] == Path(op.directory)
        command = command[4:-1]
    launch = (["ip", "netns", "exec", op.netns] if op.netns else []) + list(options["privileges"])
    assert command[:len(launch) + len(argv)] == launch + argv
    redirected = {int(word.split("<")[0]) for word in command[len(launch) + len(argv):] if "<" in word}
    assert redirected == set(options["open_files"]) | set(options["inherited_fds"])


def plans() -> list[tuple[str, list[o.Op]]]:
    """Each shipped lab's ops and their teardown, on this kind of machine and on one with kernel OVS and KVM."""
    cases = []
    for lab_file in LABS:
        for facts in (HostFacts(), HostFacts(ovs_datapath="system", accel="kvm", vhost_net=True)):
            plan = plan_of(open_lab(lab_file).topology, facts)
            cases.append((lab_file.stem, plan.ops + plan.teardown()))
    return cases


PLANS = plans()


@pytest.mark.parametrize("op", SPECIMENS, ids=[f"{op.name_of_op}-{i}" for i, op in enumerate(SPECIMENS)])
def test_a_specimen_of_every_op_is_explained_as_it_runs(op: o.Op, recorded: tuple[Applier, Kernel]) -> None:
    assert_faithful(*recorded, op)


@pytest.mark.parametrize("case", PLANS, ids=[f"{name}-{i % 2}" for i, (name, _) in enumerate(PLANS)])
def test_every_op_of_every_shipped_lab_is_explained_as_it_runs(case: tuple[str, list[o.Op]],
                                                               recorded: tuple[Applier, Kernel]) -> None:
    _, ops = case
    for op in ops:
        assert_faithful(*recorded, op)


def test_the_specimens_cover_every_op() -> None:
    assert {type(op) for op in SPECIMENS} == set(o.OP_TYPES.values())


def test_one_ovs_transaction_runs_what_each_op_explains(recorded: tuple[Applier, Kernel]) -> None:
    applier, kernel = recorded
    batch = [op for op in SPECIMENS if isinstance(op, (o.OvsAddBridge, o.OvsAddPort))]
    kernel.effects.clear()
    applier.apply_ovs_batch(batch)
    [(verb, argv, stdin)] = kernel.effects
    assert verb == "run" and stdin is None
    explained = [" ".join(shlex.split(line)[1:]) for op in batch for line in o.script_of(op)]
    assert " ".join(argv).split(" -- ")[1:] == " -- ".join(explained).split(" -- ")
