"""The kernel and the tools below vtopo's KernelHost, replaced at their last step by recorders (tests of explain).

`record_kernel` gives an Applier whose KernelHost does all its work but the last step, which writes down an effect:
the bytes of each netlink request, read back with pyroute2's decoder (indexes and namespace descriptors as names; a
bridge port's VLAN with its flags), each qdisc added or deleted, the sysctl file written, each ioctl, the argv and stdin of ovs-vsctl and ovs-ofctl, the JSON handed to
nft, and the calls into the modules for files, processes, namespaces and libvirt.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import struct
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import socket

from pyroute2.netlink.rtnl import (RTM_DELADDR, RTM_DELLINK, RTM_DELROUTE, RTM_GETLINK, RTM_NEWADDR, RTM_NEWLINK,
                                   RTM_NEWROUTE, RTM_SETLINK)
from pyroute2.netlink.rtnl.ifaddrmsg import ifaddrmsg
from pyroute2.netlink.rtnl.ifinfmsg import IFF_UP, ifinfmsg
from pyroute2.netlink.rtnl.rtmsg import rtmsg

from vtopo.host import kernel_host, netlink, nftables, ovs, owned_files
from vtopo.host import rtnl_wire as wire
from vtopo.host.applier import Applier

Effect = tuple[Any, ...]


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
        if kind in (RTM_NEWLINK, RTM_SETLINK, RTM_DELLINK):
            message = _decoded(ifinfmsg, payload)
            recorded = self._bridge_vlan if message["family"] == socket.AF_BRIDGE else self._link
            self.kernel.effects.append(recorded(kind, message))
        elif kind == RTM_NEWADDR:
            message = ifaddrmsg(header + payload)
            message.decode()
            address = message.get("IFA_ADDRESS")
            assert message.get("IFA_LOCAL") in (None, address)
            self.kernel.effects.append(("addr", self.netns, self.kernel.name_of(message["index"]),
                                        f"{address}/{message['prefixlen']}", bool(message["flags"] & wire.IFA_F_NODAD)))
        elif kind == RTM_DELADDR:
            message = ifaddrmsg(header + payload)
            message.decode()
            self.kernel.effects.append(("addr del", self.netns, self.kernel.name_of(message["index"]),
                                        f"{message.get('IFA_ADDRESS')}/{message['prefixlen']}"))
        elif kind in (RTM_NEWROUTE, RTM_DELROUTE):
            message = rtmsg(header + payload)
            message.decode()
            destination = message.get("RTA_DST")
            oif = message.get("RTA_OIF")
            route = ("route", self.netns, f"{destination}/{message['dst_len']}" if destination else "default",
                     message.get("RTA_GATEWAY"), self.kernel.name_of(oif) if oif else "")
            self.kernel.effects.append(
                (*route, message["proto"], message["table"], message["type"], message["scope"]) if kind == RTM_NEWROUTE
                else ("route del", *route[1:], message["table"], message["type"]))
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

    def _bridge_vlan(self, kind: int, message: Any) -> Effect:
        """A bridge port's VLAN added (RTM_SETLINK) or deleted (RTM_DELLINK), with its flags."""
        [info] = message.get_attr("IFLA_AF_SPEC").get_attrs("IFLA_BRIDGE_VLAN_INFO")
        assert not message["attrs"][1:], message  # nothing but the VLAN
        verb = {RTM_SETLINK: "add", RTM_DELLINK: "del"}[kind]
        return ("bridge vlan", verb, self.netns, self.kernel.name_of(message["index"]), info["vid"], info["flags"])

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
        device = self.kernel.name_of(options.pop("index"))
        if command == "del":  # what was there before, at the root
            assert options == {"parent": netlink._TC_H_ROOT}, options
            self.kernel.effects.append(("qdisc del", self.netns, device))
        else:
            assert command == "add"
            self.kernel.effects.append(("qdisc", self.netns, device, kind, tuple(sorted(options.items()))))


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
            *named, lo_alias = args  # the lab's tag, which the script names by its variable
            self.kernel.effects.append((f"maker.{name}", tuple(named)))
            return _Maker(self.kernel, lo_alias)
        return make


class _Maker(Calls):
    """A namespace maker, whose helper brings up lo in each network namespace it makes: that request is recorded as
    the kernel reads it."""

    def __init__(self, kernel: Kernel, lo_alias: str) -> None:
        super().__init__(kernel, "maker")
        self.lo_alias = lo_alias

    def network_namespace(self, name: str) -> int:
        self.kernel.effects.append(("maker.network_namespace", (name,), ()))
        wire.loopback_up(cast(socket.socket, _HelpersSocket(Rtnl(self.kernel, name))), self.lo_alias)
        return os.open(os.devnull, os.O_RDONLY)  # the socket handed over, which Netlink.adopt takes


class _HelpersSocket:
    """The helper's rtnetlink socket: each request goes to the recording `rtnl`, and is acknowledged."""

    def __init__(self, rtnl: Rtnl) -> None:
        self.rtnl = rtnl

    def send(self, message: bytes) -> None:
        _, kind, flags, _, _ = wire.HEADER.unpack_from(message)
        self.rtnl.request(message[wire.HEADER.size:], kind, flags)

    def recv(self, _size: int) -> bytes:
        return wire.HEADER.pack(wire.HEADER.size + 20, wire.NLMSG_ERROR, 0, 1, 0) + wire.ERRNO.pack(0) + bytes(16)


class _Path(type(Path())):  # type: ignore[misc]
    kernel: Kernel

    def unlink(self, missing_ok: bool = False) -> None:
        self.kernel.effects.append(("unlink", str(self), missing_ok))

    def is_dir(self, **_: Any) -> bool:
        return True


def record_kernel(monkeypatch: pytest.MonkeyPatch, prefix: str) -> tuple[Applier, Kernel]:
    """An Applier for the lab `prefix` whose KernelHost runs down to the last step before the kernel and the tools,
    which record. Close the Applier after use."""
    kernel = Kernel()
    monkeypatch.setattr(netlink.Netlink, "_rtnl", lambda self, netns: Rtnl(kernel, netns))
    monkeypatch.setattr(netlink.Netlink, "adopt", lambda self, netns, rtnl: os.close(rtnl))
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
    monkeypatch.setattr(kernel_host, "namespaces", Calls(kernel, "netns", pids_in=[4242, 4243]))
    monkeypatch.setattr(kernel_host, "namespace_maker", Calls(kernel, "namespace_maker"))
    monkeypatch.setattr(kernel_host, "oci_engine", Calls(kernel, "oci_engine"))
    monkeypatch.setattr(kernel_host, "NamespaceMaker", _Makers(kernel))
    monkeypatch.setattr(kernel_host, "owned_files", Calls(kernel, "files"))
    monkeypatch.setattr(kernel_host, "shutil", Calls(kernel, "shutil"))
    monkeypatch.setattr(kernel_host, "Path", _Path)
    _Path.kernel = kernel
    monkeypatch.setattr(kernel_host, "processes", Calls(kernel, "processes", run_command="", run_to_end=(0, "")))
    monkeypatch.setattr(kernel_host, "read_pid", lambda path: kernel.effects.append(("read pid", str(path))) or 4242)
    monkeypatch.setattr(kernel_host, "libvirt_domains", Calls(kernel, "domains", start="<domain/>"))
    monkeypatch.setattr(kernel_host, "open_device", lambda path: kernel.effects.append(("open", path, "rw")) or
                        os.open(os.devnull, os.O_RDWR))
    monkeypatch.setattr(kernel_host, "open_image", lambda path: kernel.effects.append(("open", path, "r")) or
                        os.open(os.devnull, os.O_RDONLY))
    applier = Applier(prefix)
    kernel.fds[applier.netlink._host_fd] = None
    return applier, kernel
