"""Links, addresses, routes, sysctls and qdiscs through rtnetlink, one socket per network namespace.

A netlink socket stays bound to the namespace it was opened in, so each namespace's socket is opened
once (inside `entered()`, or while the namespace is being made) and reused: no helper process per namespace.

Each request is packed with struct (vtopo.host.rtnl_wire) and sent on a plain rtnetlink socket, and its
acknowledgement is read back at once, with struct unless it is a refusal, which pyroute2 decodes. pyroute2's
`IPRoute` runs an asyncio request machine around every call, about 250 us of Python per request against the
kernel's few microseconds. Sending many requests before reading their acks saves nothing measurable (400 link
changes in one namespace: 18 us each either way; 400 veth pairs: 440-650 us each either way, the kernel's own
work), and would report a failure after later requests had run. qdiscs, whose options pyroute2's tc plugins compute,
still go through `IPRoute`.
"""
from __future__ import annotations

import array
import asyncio
import ctypes
import errno
import fcntl
import ipaddress
import os
import socket
import struct
import threading
import time
from collections.abc import Container, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType

from pyroute2 import IPRoute
from pyroute2.netlink import (NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP, NLM_F_EXCL, NLM_F_REQUEST, NLMSG_DONE, NLMSG_ERROR,
                              nlmsg)
from pyroute2.netlink.exceptions import NetlinkError as _Pyroute2Error
from pyroute2.netlink.rtnl import (RTM_DELADDR, RTM_DELLINK, RTM_DELROUTE, RTM_GETLINK, RTM_GETSTATS, RTM_NEWADDR,
                                   RTM_NEWLINK, RTM_NEWROUTE, RTM_SETLINK)
from pyroute2.netlink.rtnl.ifinfmsg import IFF_UP
from pyroute2.netlink.rtnl.marshal import MarshalRtnl

from vtopo.host import rtnl_wire as wire
from vtopo.host.netns import NetlinkError, NetnsNotFoundError, create_netns, entered, open_netns
from vtopo.ops import TBF_LATENCY_MS, LinkType, MacvlanMode, RouteProtocol, tbf_burst, tbf_rate

__all__ = ["InterfaceEvent", "LinkEvents", "NamespaceGone", "LinkInfo", "Netlink", "NetlinkError", "NetnsNotFoundError", "MACVLAN_MODES", "link_counters"]

MACVLAN_MODES = frozenset(mode.value for mode in MacvlanMode)

_IFNAMSIZ = 16
_TUNSETIFF = 0x400454CA  # _IOW('T', 202, int), as on x86 and arm
_TUNSETPERSIST = 0x400454CB
_IFF_TAP = 0x0002
_IFF_NO_PI = 0x1000
_IFF_VNET_HDR = 0x4000
_IFF_TUN_EXCL = 0x8000
_SIOCETHTOOL = 0x8946
_SIOCGIFINDEX = 0x8933
_IFREQ_INDEX = struct.Struct("16si20x")  # struct ifreq: the name, then ifr_ifindex
_ETHTOOL_STXCSUM = 0x17
_IFREQ_SIZE = 40
_TC_H_ROOT = 0xFFFFFFFF
_MAX_TC_RATE = 2**32 - 1  # bytes/s in tbf's 32-bit rate, about 34 Gbit/s
_DEVICE_WAIT_S = 2.0
_SOL_NETLINK = 270
_NETLINK_EXT_ACK = 11  # an error ack carries the kernel's explanation
_RECEIVE_BUFFER = 1 << 16  # the kernel's dump chunks are at most 32 KiB
_CHANGE = NLM_F_REQUEST | NLM_F_ACK
_CREATE = _CHANGE | NLM_F_CREATE | NLM_F_EXCL
_RT_TABLE_MAIN = 254
_RTN_UNICAST = 1
_IFF_LOWER_UP = 0x10000  # the interface has its carrier
_U32 = struct.Struct("=I")
_STATS_LINK_64 = 1 << (1 - 1)  # IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64): the filter_mask bit of the 64-bit counters


@dataclass(frozen=True)
class LinkInfo:
    """One interface as a dump reports it."""

    name: str
    index: int
    kind: str | None
    alias: str | None
    master_index: int | None


def _where(netns: str | None) -> str:
    return f" in netns {netns}" if netns else ""


@contextmanager
def _kernel(operation: str) -> Iterator[None]:
    """Turn a refusal from the kernel into NetlinkError naming `operation`."""
    try:
        yield
    except NetlinkError:
        raise
    except _Pyroute2Error as e:
        message = os.strerror(e.code)
        detail = e.args[1] if len(e.args) > 1 else None  # the kernel's extended ack, when it gave one
        if detail and detail != message:
            message = f"{message} ({detail})"
        raise NetlinkError(operation, message, e.code) from e
    except OSError as e:
        code = e.errno or errno.EIO
        raise NetlinkError(operation, os.strerror(code), code) from e


def _named_link(name: str, *attributes: bytes, index: int = 0, flags: int = 0, change: int = 0) -> bytes:
    return wire.link(wire.text(wire.IFLA_IFNAME, name), *attributes, index=index, flags=flags, change=change)


class _Rtnl:
    """A plain rtnetlink socket in the namespace of the thread that opens it: one request, then its answer."""

    def __init__(self, opened: socket.socket | None = None) -> None:
        """`opened`: a socket another process opened in its namespace (and bound), which this one takes over."""
        if opened is None:
            opened = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC, socket.NETLINK_ROUTE)
            opened.bind((0, 0))
        self._socket = opened
        self._socket.setsockopt(_SOL_NETLINK, _NETLINK_EXT_ACK, 1)
        self._marshal = MarshalRtnl()
        self._buffer = bytearray(_RECEIVE_BUFFER)
        self._received = memoryview(self._buffer)
        self._sequence = 0

    def close(self) -> None:
        self._socket.close()

    def index(self, name: str) -> int:
        """The ifindex of `name` in the socket's namespace (SIOCGIFINDEX works on any socket, this one included)."""
        ifreq = fcntl.ioctl(self._socket.fileno(), _SIOCGIFINDEX, _IFREQ_INDEX.pack(_ifname(name), 0))
        return int(_IFREQ_INDEX.unpack(ifreq)[1])

    def request(self, payload: bytes, kind: int, flags: int = _CHANGE) -> list[nlmsg]:
        """Send a request of type `kind` and wait for its ack (or a dump's end); return the replies before it, decoded.

        Raises pyroute2's NetlinkError, with the kernel's extended ack, for a refusal.
        """
        return [self._decoded(bytes(reply)) for reply in self.replies(payload, kind, flags)]

    def _decoded(self, message: bytes) -> nlmsg:
        (decoded,) = self._marshal.parse(message)
        return decoded

    def replies(self, payload: bytes, kind: int, flags: int = _CHANGE) -> Iterator[memoryview]:
        """Send a request of type `kind`; each reply before its ack (or a dump's end), as the kernel wrote it, seen in
        the receive buffer until the next is asked for. Read them all: the socket holds the rest of the answer until
        then.

        Raises pyroute2's NetlinkError, with the kernel's extended ack, for a refusal.
        """
        for run, length in self.runs(payload, kind, flags):
            for offset in range(0, len(run), length):
                yield run[offset:offset + length]

    def runs(self, payload: bytes, kind: int, flags: int = _CHANGE) -> Iterator[tuple[memoryview, int]]:
        """The replies of `replies` a run at a time: replies that follow each other in one read, all of one length
        (given with the run). A dump's replies of one kind are alike, a read of ~140 of them one run (a dump of
        counters: a reply per interface, every second while rates are shown), which is then read a field at a time
        over the whole run (vtopo.host.rtnl_wire.link_stats_64_run) rather than a reply at a time."""
        self._sequence += 1
        header = wire.HEADER.pack(wire.HEADER.size + len(payload), kind, flags, self._sequence, 0)
        self._socket.send(header + payload)
        while True:
            size = self._socket.recv_into(self._buffer)
            offset = self._alike(size)
            if offset:
                yield self._received[:offset], _U32.unpack_from(self._buffer)[0]
            while offset + wire.HEADER.size <= size:
                length, reply_type, _, sequence, _ = wire.HEADER.unpack_from(self._buffer, offset)
                start, offset = offset, offset + max(wire.HEADER.size, (length + 3) & ~3)
                if sequence != self._sequence:
                    continue  # a late answer to an earlier request
                if reply_type == NLMSG_DONE:
                    return
                if reply_type == NLMSG_ERROR:
                    if wire.ERRNO.unpack_from(self._buffer, start + wire.HEADER.size)[0] == 0:
                        return  # a plain ack is read without decoding it: most requests get only that
                    raise self._decoded(bytes(self._buffer[start:start + length]))["header"]["error"]
                yield self._received[start:start + length], length

    def _alike(self, size: int) -> int:
        """Where the replies to the request in progress that the read of `size` bytes starts with end, when they are
        more than one and all of the first one's length; 0 otherwise. Each header is read at once over them all."""
        length = _U32.unpack_from(self._buffer)[0] if size >= wire.HEADER.size else 0
        count = size // length if length >= wire.HEADER.size and length % 4 == 0 else 0
        if count < 2:
            return 0
        replies, step = self._received[:count * length], length // 4
        lengths, sequences = replies.cast("I")[::step].tolist(), replies[8:].cast("I")[::step].tolist()
        types = replies.cast("H")[2::step * 2].tolist()
        if (lengths.count(length) != count or sequences.count(self._sequence) != count
                or NLMSG_DONE in types or NLMSG_ERROR in types):
            return 0
        return count * length


class Netlink:
    """rtnetlink in the host and named namespaces, for the thread that made it, outside `entered()`.

    The host namespace (netns None) is the one the creating thread is in. An open socket keeps its
    namespace alive: `release(netns)` before deleting the namespace.
    """

    def __init__(self) -> None:
        self._thread = threading.get_ident()
        self._host_fd = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        self._sockets: dict[str | None, _Rtnl] = {None: _Rtnl()}
        self._qdisc_loop: asyncio.AbstractEventLoop | None = None  # opened for the first qdisc change
        self._qdisc_sockets: dict[str | None, IPRoute] = {}
        self._indexes: dict[tuple[str | None, str], int] = {}
        self._closed = False

    def __enter__(self) -> Netlink:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close every socket; the object is unusable afterwards."""
        if self._closed:
            return
        self._closed = True
        while self._sockets:
            self._sockets.popitem()[1].close()
        while self._qdisc_sockets:
            self._close_qdisc_socket(self._qdisc_sockets.popitem()[1])
        if self._qdisc_loop is not None:
            self._qdisc_loop.close()
        os.close(self._host_fd)

    def release(self, netns: str) -> None:
        """Close the sockets of `netns`, if open, so that deleting the namespace destroys it."""
        self._indexes.clear()  # the namespace's links, and the host ends of its veths, are about to go
        rtnl = self._sockets.pop(netns, None)
        if rtnl is not None:
            rtnl.close()
        ipr = self._qdisc_sockets.pop(netns, None)
        if ipr is not None:
            self._close_qdisc_socket(ipr)

    def _close_qdisc_socket(self, ipr: IPRoute) -> None:
        ipr.close()
        assert self._qdisc_loop is not None
        self._qdisc_loop.run_until_complete(asyncio.sleep(0))  # lets the transport finish closing

    def _check_usable(self) -> None:
        if threading.get_ident() != self._thread:
            raise RuntimeError("a Netlink object is used only by the thread that created it")
        if self._closed:
            raise RuntimeError("Netlink is closed")

    def _rtnl(self, netns: str | None) -> _Rtnl:
        self._check_usable()
        rtnl = self._sockets.get(netns)
        if rtnl is None:
            with entered(netns):
                rtnl = self._sockets[netns] = _Rtnl()
        return rtnl

    def add_netns(self, name: str) -> None:
        """Create namespace `name`, opening its socket while this thread is inside it anyway."""
        self._check_usable()

        def open_socket() -> None:
            self._sockets[name] = _Rtnl()

        create_netns(name, inside=open_socket)

    def adopt(self, netns: str, rtnl: int) -> None:
        """Take the rtnetlink socket `rtnl`, which another process opened inside `netns`, as this one's there: no need
        to enter the namespace to open one. The kernel judges each request on it by the powers of the process that
        opened it: a lab's namespace helper may change only what the lab's user namespace owns."""
        self._check_usable()
        self._sockets[netns] = _Rtnl(socket.socket(fileno=rtnl))

    def _qdisc_socket(self, netns: str | None) -> IPRoute:
        self._check_usable()
        ipr = self._qdisc_sockets.get(netns)
        if ipr is None:
            if self._qdisc_loop is None:
                self._qdisc_loop = asyncio.new_event_loop()  # shared, so that a socket costs one file descriptor
            with entered(netns):
                ipr = self._qdisc_sockets[netns] = IPRoute(groups=0, ext_ack=True, use_event_loop=self._qdisc_loop)
        return ipr

    def _index(self, name: str, netns: str | None) -> int:
        """The ifindex of `name`, looked up once: building a lab configures each link several times."""
        key = (netns, name)
        if key not in self._indexes:
            try:  # a tenth of the time of RTM_GETLINK, whose whole answer pyroute2 decodes
                self._indexes[key] = self._rtnl(netns).index(name)
            except OSError as e:
                if e.errno in (errno.ENODEV, errno.EINVAL):
                    raise OSError(errno.ENODEV, os.strerror(errno.ENODEV), name) from None
                raise
        return self._indexes[key]

    def _change_link(self, netns: str | None, message: bytes, create: bool = False) -> None:
        self._rtnl(netns).request(message, RTM_NEWLINK, _CREATE if create else _CHANGE)

    @contextmanager
    def _placed(self, netns: str | None, via: str | None) -> Iterator[tuple[bytes, ...]]:
        """The attribute that puts a new link in `netns` when the request goes through `via`'s socket."""
        if netns == via:
            yield ()
        elif netns is None:
            yield (wire.u32(wire.IFLA_NET_NS_FD, self._host_fd),)
        else:
            fd = open_netns(netns)
            try:
                yield (wire.u32(wire.IFLA_NET_NS_FD, fd),)
            finally:
                os.close(fd)

    def add_bridge(self, name: str, netns: str | None, *, stp: bool, forward_delay: int, ageing_time: int,
                   vlan_filtering: bool = False) -> None:
        """Create a bridge; its timers in clock_t (vtopo.ops.clock_t)."""
        with _kernel(f"add bridge {name}{_where(netns)}" + (" filtering VLANs" if vlan_filtering else "")):
            filtering = [wire.u8(wire.IFLA_BR_VLAN_FILTERING, 1)] if vlan_filtering else []
            bridge = wire.link_kind(LinkType.BRIDGE.value, wire.u32(wire.IFLA_BR_STP_STATE, int(stp)),
                                    wire.u32(wire.IFLA_BR_FORWARD_DELAY, forward_delay),
                                    wire.u32(wire.IFLA_BR_AGEING_TIME, ageing_time), *filtering)
            self._change_link(netns, _named_link(name, bridge), create=True)

    def set_bridge_vlan(self, name: str, netns: str | None, vid: int, *, pvid: bool = False, untagged: bool = False,
                        present: bool = True) -> None:
        """Add VLAN `vid` to bridge port `name` (`pvid`: untagged frames coming in join it; `untagged`: its frames
        leave without a tag), or with `present` False delete it."""
        flags = (wire.BRIDGE_VLAN_INFO_PVID if pvid else 0) | (wire.BRIDGE_VLAN_INFO_UNTAGGED if untagged else 0)
        with _kernel(f"{'add' if present else 'delete'} VLAN {vid} on bridge port {name}{_where(netns)}"):
            request = wire.bridge_vlan(self._index(name, netns), vid, flags)
            self._rtnl(netns).request(request, RTM_SETLINK if present else RTM_DELLINK)

    def add_veth(self, name: str, netns: str | None, peer: str, peer_netns: str | None,
                 master: str | None = None, queues: int | None = None) -> None:
        """Create a veth pair in one request, each end directly in its namespace under its final name; with `master`,
        `name` (in `netns`) a port of that bridge, still down; with `queues`, each end with that many transmit and
        receive queues instead of one each per CPU.

        A pair between the host and a namespace is asked for through the host's socket: a lab's namespace's may be
        one the lab's namespace helper opened, whose powers stop at the lab's user namespace (see adopt). One whose
        end joins a bridge is asked for through the bridge's, as the kernel attaches only the end the request
        names."""
        with _kernel(f"add veth {name}{_where(netns)} peer {peer}{_where(peer_netns)}"
                     + (f" on bridge {master}" if master else "")):
            if master is None and netns is not None and peer_netns is None:
                name, netns, peer, peer_netns = peer, peer_netns, name, netns
            port = [wire.u32(wire.IFLA_MASTER, self._index(master, netns))] if master else []
            sized = [wire.queues(queues)] if queues else []
            with self._placed(peer_netns, netns) as placement:
                peer_link = wire.attribute(wire.VETH_INFO_PEER, _named_link(peer, *placement, *sized))
                self._change_link(netns, _named_link(name, wire.link_kind(LinkType.VETH.value, peer_link), *port,
                                                     *sized), create=True)

    def add_macvlan(self, name: str, netns: str | None, lower: str, lower_netns: str | None, mode: str) -> None:
        """Create a macvlan on `lower`, directly in `netns` under its final name."""
        _check_mode(mode)
        with _kernel(f"add macvlan {name}{_where(netns)} on {lower}{_where(lower_netns)}"):
            with self._placed(netns, lower_netns) as placement:
                lower_link = wire.u32(wire.IFLA_LINK, self._index(lower, lower_netns))
                macvlan = wire.macvlan_kind(LinkType.MACVLAN.value, mode)
                self._change_link(lower_netns, _named_link(name, lower_link, macvlan, *placement), create=True)

    def add_vlan(self, name: str, netns: str | None, parent: str, vid: int) -> None:
        """Create an 802.1Q VLAN device on `parent`, beside it in `netns`."""
        with _kernel(f"add VLAN {vid} device {name}{_where(netns)} on {parent}"):
            parent_link = wire.u32(wire.IFLA_LINK, self._index(parent, netns))
            self._change_link(netns, _named_link(name, parent_link, wire.vlan_kind(vid)), create=True)

    def add_vxlan(self, name: str, netns: str | None, mtu: int, vni: int, local: str, remote: str, port: int) -> None:
        """Create a VXLAN device through the host's socket, where its UDP socket stays, directly in `netns`."""
        with _kernel(f"add vxlan {name}{_where(netns)} to {remote}, VNI {vni}"):
            with self._placed(netns, None) as placement:
                vxlan = wire.vxlan_kind(vni, local, remote, port)
                self._change_link(None, _named_link(name, wire.mtu(mtu), vxlan, *placement),
                                  create=True)

    def add_macvtap(self, name: str, lower: str, lower_netns: str | None, mode: str) -> str:
        """Create a macvtap on `lower`, beside it; return its character device, /dev/tapN (N: ifindex).

        Each namespace numbers its links from 1 but /dev is shared, so the ifindex is chosen free in both.
        """
        _check_mode(mode)
        operation = f"add macvtap {name} on {lower}{_where(lower_netns)}"
        with _kernel(operation):
            lower_link = wire.u32(wire.IFLA_LINK, self._index(lower, lower_netns))
            index = max(info.index for info in self.links(lower_netns)) + 1
            while os.path.exists(f"/dev/tap{index}"):
                index += 1
            macvtap = wire.macvlan_kind(LinkType.MACVTAP.value, mode)
            self._change_link(lower_netns, _named_link(name, lower_link, macvtap, index=index), create=True)
        path = f"/dev/tap{index}"
        deadline = time.monotonic() + _DEVICE_WAIT_S
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise NetlinkError(operation, f"{path} did not appear", errno.ETIMEDOUT)
            time.sleep(0.005)
        return path

    def add_tap(self, name: str, netns: str | None) -> None:
        """Create a persistent tap device (`ip tuntap add mode tap`); the kernel says busy if it exists."""
        ifreq = struct.pack("16sH", _ifname(name), _IFF_TAP | _IFF_NO_PI | _IFF_TUN_EXCL).ljust(_IFREQ_SIZE, b"\0")
        with _kernel(f"add tap {name}{_where(netns)}"), entered(netns):
            fd = os.open("/dev/net/tun", os.O_RDWR)  # the device lands in the namespace of this open
            try:
                fcntl.ioctl(fd, _TUNSETIFF, ifreq)
                fcntl.ioctl(fd, _TUNSETPERSIST, 1)
            finally:
                os.close(fd)

    def attach_tap(self, name: str) -> int:
        """A descriptor of /dev/net/tun attached to the host's tap `name`, with virtio-net headers (what QEMU's
        `-netdev tap,fd=N` expects, and what it would ask for itself given the name)."""
        ifreq = struct.pack("16sH", _ifname(name), _IFF_TAP | _IFF_NO_PI | _IFF_VNET_HDR).ljust(_IFREQ_SIZE, b"\0")
        with _kernel(f"attach to tap {name}"):
            fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
            try:
                fcntl.ioctl(fd, _TUNSETIFF, ifreq)
            except BaseException:
                os.close(fd)
                raise
        return fd

    def move_link(self, name: str, netns: str, new_name: str) -> None:
        """Move host interface `name` into `netns`, renamed `new_name` there, in one request."""
        with _kernel(f"move {name} into netns {netns} as {new_name}"):
            with self._placed(netns, None) as placement:
                message = wire.link(wire.text(wire.IFLA_IFNAME, new_name), *placement, index=self._index(name, None))
                self._change_link(None, message)
        self._indexes.pop((None, name), None)

    def delete_link(self, name: str, netns: str | None) -> None:
        """Delete a link (a veth takes its peer with it)."""
        self._indexes.clear()  # a veth takes its peer, a lower device its macvlans
        with _kernel(f"delete link {name}{_where(netns)}"):
            self._rtnl(netns).request(_named_link(name), RTM_DELLINK)

    def set_master(self, name: str, netns: str | None, master: str | None) -> None:
        """Enslave `name` to `master` (a bridge), or release it with None."""
        with _kernel(f"set master of {name}{_where(netns)} to {master or 'none'}"):
            index = 0 if master is None else self._index(master, netns)
            self._change_link(netns, _named_link(name, wire.u32(wire.IFLA_MASTER, index)))

    def set_hairpin(self, name: str, netns: str | None, enabled: bool) -> None:
        """Hairpin mode of bridge port `name`: frames may leave by the port they came in on."""
        with _kernel(f"set hairpin of {name}{_where(netns)} {'on' if enabled else 'off'}"):
            port = wire.nested(wire.IFLA_INFO_SLAVE_DATA, wire.u8(wire.IFLA_BRPORT_MODE, int(enabled)))
            slave = wire.nested(wire.IFLA_LINKINFO, wire.text(wire.IFLA_INFO_SLAVE_KIND, LinkType.BRIDGE.value), port)
            self._change_link(netns, _named_link(name, slave))

    def set_link(
        self,
        name: str,
        netns: str | None,
        *,
        mtu: int | None = None,
        mac: str | None = None,
        up: bool | None = None,
        alias: str | None = None,
        carrier: bool | None = None,
    ) -> None:
        """Change the given properties in one request; `alias` is IFLA_IFALIAS ("" clears it); `carrier` False cuts
        the carrier of a device that has no peer to lose it from (a VXLAN device: IFLA_PROTO_DOWN)."""
        changes: dict[str, object] = {"mtu": mtu, "address": mac, "ifalias": alias,
                                      "protodown": None if carrier is None else not carrier}
        changes = {word: value for word, value in changes.items() if value is not None}
        if not changes and up is None:
            return
        attributes = ([wire.mtu(mtu)] if mtu is not None else []) + (
            [wire.mac(mac)] if mac is not None else []) + ([wire.alias(alias)] if alias is not None else []) + (
            [wire.proto_down(not carrier)] if carrier is not None else [])
        message = _named_link(name, *attributes, flags=IFF_UP if up else 0, change=0 if up is None else IFF_UP)
        settings = ", ".join([f"{word}={value!r}" for word, value in changes.items()]
                             + ([f"state={'up' if up else 'down'!r}"] if up is not None else []))
        with _kernel(f"set {settings} of {name}{_where(netns)}"):
            self._change_link(netns, message)

    def add_address(self, name: str, netns: str | None, cidr: str, *, nodad: bool) -> None:
        """Add an IPv4 or IPv6 address given as "address/prefix"; with `nodad`, without duplicate address detection
        (an IPv6 one is then usable at once)."""
        interface = ipaddress.ip_interface(cidr)
        with _kernel(f"add address {cidr} to {name}{_where(netns)}"):
            request = wire.address(interface, self._index(name, netns), wire.IFA_F_NODAD if nodad else 0)
            self._rtnl(netns).request(request, RTM_NEWADDR, _CREATE)

    def add_route(self, netns: str | None, destination: str, gateway: str, device: str = "", *,
                  protocol: RouteProtocol) -> None:
        """Add a route to `destination` (a network or "default") via `gateway`, out of `device` if given (a
        link-local gateway needs it), tagged with `protocol`."""
        via = ipaddress.ip_address(gateway)
        network = None if destination == "default" else ipaddress.ip_network(destination)
        if network is not None and network.version != via.version:
            raise ValueError(f"route to {destination} via {gateway} mixes IPv4 and IPv6")
        out = f" dev {device}" if device else ""
        with _kernel(f"add route {destination} via {gateway}{out}{_where(netns)}"):
            index = self._index(device, netns) if device else 0
            request = wire.route(network, via, _RT_TABLE_MAIN, protocol, _RTN_UNICAST, index)
            self._rtnl(netns).request(request, RTM_NEWROUTE, _CREATE)

    def delete_address(self, name: str, netns: str | None, cidr: str) -> None:
        interface = ipaddress.ip_interface(cidr)
        with _kernel(f"delete address {cidr} from {name}{_where(netns)}"):
            self._rtnl(netns).request(wire.address(interface, self._index(name, netns)), RTM_DELADDR)

    def delete_route(self, netns: str | None, destination: str, gateway: str, device: str = "") -> None:
        via = ipaddress.ip_address(gateway)
        network = None if destination == "default" else ipaddress.ip_network(destination)
        out = f" dev {device}" if device else ""
        with _kernel(f"delete route {destination} via {gateway}{out}{_where(netns)}"):
            index = self._index(device, netns) if device else 0
            request = wire.route(network, via, _RT_TABLE_MAIN, 0, _RTN_UNICAST, index)
            self._rtnl(netns).request(request, RTM_DELROUTE)

    def set_sysctl(self, netns: str | None, key: str, value: str) -> None:
        """Write a net.* sysctl of `netns` as this process (root): one vtopo sets, or one of a lab of root's whose
        namespaces are the host's. A lab in a user namespace of its own has its sysctls written there (KernelHost)."""
        path = sysctl_path(key)
        _refuse_loading_a_module(path, value)
        with _kernel(f"set sysctl {key}={value}{_where(netns)}"), entered(netns):
            # /proc/sys/net shows the namespace of the thread that opens it
            with open(f"/proc/sys/{path}", "w") as sysctl:
                sysctl.write(value)

    def set_impairment(
        self,
        name: str,
        netns: str | None,
        *,
        delay_ms: float = 0,
        jitter_ms: float = 0,
        loss_pct: float = 0,
        rate_mbit: float = 0,
    ) -> None:
        """Impair what `name` sends: netem for delay, jitter and loss, tbf for the rate; all 0 clears.

        Replaces the root qdisc: netem at the root with tbf as its child, or tbf alone for a rate alone.
        """
        if min(delay_ms, jitter_ms, loss_pct, rate_mbit) < 0 or loss_pct > 100:
            raise ValueError("impairments are non-negative and loss is a percentage")
        rate = tbf_rate(rate_mbit)
        if rate > _MAX_TC_RATE:
            raise ValueError(f"rate {rate_mbit} Mbit/s is above what tbf takes")
        with _kernel(f"set impairment of {name}{_where(netns)}"):
            ipr = self._qdisc_socket(netns)
            index = self._index(name, netns)
            try:
                ipr.tc("del", index=index, parent=_TC_H_ROOT)
            except _Pyroute2Error as e:
                if e.code != errno.ENOENT:  # ENOENT: only the default qdisc was there
                    raise
            tbf_parent = _TC_H_ROOT
            if delay_ms or jitter_ms or loss_pct:
                ipr.tc(
                    "add",
                    "netem",
                    index=index,
                    handle="1:",
                    delay=round(delay_ms * 1000),  # microseconds
                    jitter=round(jitter_ms * 1000),
                    loss=loss_pct,
                )
                tbf_parent = 0x10001  # 1:1, netem's only class
            if rate:
                ipr.tc(
                    "add", "tbf", index=index, handle="2:", parent=tbf_parent, rate=rate, burst=tbf_burst(rate_mbit),
                    latency=TBF_LATENCY_MS * 1000,  # microseconds
                )

    def set_tx_checksum(self, name: str, netns: str | None, enabled: bool) -> None:
        """Turn transmit checksum offload on or off, as `ethtool -K NAME tx on|off` does."""
        value = array.array("I", [_ETHTOOL_STXCSUM, int(enabled)])  # struct ethtool_value
        ifreq = struct.pack("16sP", _ifname(name), value.buffer_info()[0]).ljust(_IFREQ_SIZE, b"\0")
        with _kernel(f"set tx checksum of {name}{_where(netns)} {'on' if enabled else 'off'}"), entered(netns):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:  # resolves NAME in its netns
                fcntl.ioctl(sock.fileno(), _SIOCETHTOOL, ifreq)

    def links(self, netns: str | None) -> list[LinkInfo]:
        """Every link of `netns`."""
        with _kernel(f"list links{_where(netns)}"):
            return [
                LinkInfo(
                    name=msg.get("ifname"),
                    index=msg["index"],
                    kind=msg.get(("linkinfo", "kind")),
                    alias=msg.get("ifalias"),
                    master_index=msg.get("master"),
                )
                for msg in self._rtnl(netns).request(wire.link(), RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP)
            ]

    def master_index(self, name: str, netns: str | None) -> int | None:
        """The ifindex of the bridge `name` is a port of; None when it is nobody's port."""
        with _kernel(f"look up link {name}{_where(netns)}"):
            (reply,) = self._rtnl(netns).request(_named_link(name), RTM_GETLINK, _CHANGE)
            master: int | None = reply.get("master")
            return master

    def index(self, name: str, netns: str | None) -> int:
        """The ifindex of `name` (a macvtap's character device is /dev/tap<ifindex>)."""
        with _kernel(f"look up {name}{_where(netns)}"):
            return self._index(name, netns)

    def link_up(self, name: str, netns: str | None) -> bool:
        """Whether `name` is up and has its carrier (IFF_UP and IFF_LOWER_UP)."""
        with _kernel(f"look up link {name}{_where(netns)}"):
            (reply,) = self._rtnl(netns).request(_named_link(name), RTM_GETLINK, _CHANGE)
            flags = int(reply["flags"])
            return flags & IFF_UP != 0 and flags & _IFF_LOWER_UP != 0

    def link_exists(self, name: str, netns: str | None) -> bool:
        """Whether `netns` has a link called `name`."""
        with _kernel(f"look up link {name}{_where(netns)}"):
            try:
                self._index(name, netns)
            except OSError as e:
                if e.errno == errno.ENODEV:
                    return False
                raise
            return True


def link_counters(netns: str | None) -> dict[int, tuple[int, int]]:
    """Each interface of `netns` by ifindex: its bytes and packets, both directions added. They are the kernel's
    64-bit counters (IFLA_STATS64) from one RTM_GETSTATS dump that asks for nothing else, so each answer is one
    small message. The socket lives only for the dump: it would otherwise keep a destroyed lab's namespace alive."""
    with _kernel(f"read interface counters{_where(netns)}"):
        with entered(netns):
            rtnl = _Rtnl()
        try:
            counters: dict[int, tuple[int, int]] = {}
            for run, length in rtnl.runs(wire.stats(_STATS_LINK_64), RTM_GETSTATS, NLM_F_REQUEST | NLM_F_DUMP):
                counters.update(wire.link_stats_64_run(run, length))
            return counters
        finally:
            rtnl.close()


def _check_mode(mode: str) -> None:
    if mode not in MACVLAN_MODES:
        raise ValueError(f"macvlan mode {mode!r} is not one of {sorted(MACVLAN_MODES)}")


def _ifname(name: str) -> bytes:
    encoded = name.encode()
    if not 0 < len(encoded) < _IFNAMSIZ:
        raise ValueError(f"interface name {name!r} is not 1 to {_IFNAMSIZ - 1} bytes")
    return encoded



# ---------------------------------------------------------------- the host's own network, read


MAIN_TABLE = 254


def host_network(lab_alias_prefix: str) -> tuple[frozenset[str], tuple[str, ...], frozenset[str]]:
    """The host's interfaces by name; the networks of the addresses and main-table routes that lie on an interface
    no lab made (whose alias does not start with `lab_alias_prefix`), default routes left out; and every address on
    an interface of the host's namespace, a lab's included."""
    with IPRoute() as ipr:
        links = {msg["index"]: (msg.get("ifname"), msg.get("ifalias") or "") for msg in ipr.link("dump")}
        theirs = {index for index, (_, alias) in links.items() if not alias.startswith(lab_alias_prefix)}
        addresses = [(msg["index"], msg.get("IFA_ADDRESS"), msg["prefixlen"]) for msg in ipr.addr("dump")]
        networks = {str(ipaddress.ip_interface(f"{address}/{length}").network)
                    for index, address, length in addresses if index in theirs}
        for msg in ipr.route("dump", table=MAIN_TABLE):
            destination, length = msg.get("RTA_DST"), msg["dst_len"]
            if destination and length and msg.get("RTA_OIF", 0) in theirs | {0}:
                networks.add(str(ipaddress.ip_network(f"{destination}/{length}", strict=False)))
    return (frozenset(name for name, _ in links.values() if name), tuple(sorted(networks)),
            frozenset(address for _, address, _ in addresses))


# ---------------------------------------------------------------- events

_RTNLGRP_LINK, _RTNLGRP_NSID = 1, 28
_NETLINK_ADD_MEMBERSHIP, _NETLINK_LISTEN_ALL_NSID = 1, 8
_RTM_NEWNSID, _RTM_DELNSID, _RTM_GETNSID = 88, 89, 90
_NETNSA_NSID, _NETNSA_FD = 1, 3
_IFINFO = struct.Struct("=BxHiII")  # struct ifinfomsg: family, type, index, flags, change
_ATTRIBUTE = struct.Struct("=HH")  # struct nlattr: length, type
_EVENTS_BUFFER = 1 << 23  # a burst of events (a lab of thousands of interfaces destroyed) waits here
_SO_RCVBUFFORCE = 33  # not in Python's socket module
_SO_ATTACH_FILTER = 26
_BPF_LDH_ABS, _BPF_LDB_ABS, _BPF_JEQ_K, _BPF_RET_K = 0x28, 0x30, 0x15, 0x06  # classic BPF: ld{h,b} [k], jeq #k, ret #k
_BPF_INSTRUCTION = struct.Struct("=HBBI")  # struct sock_filter: code, jump if true, jump if false, k
_EVENT_SIZE = 1 << 16  # the most one event takes: the kernel sends each alone
_ANCILLARY_SPACE = socket.CMSG_SPACE(4)  # the namespace id an event comes with
_MSG_DONTWAIT, _MSG_TRUNC = int(socket.MSG_DONTWAIT), int(socket.MSG_TRUNC)  # as ints: the IntFlags' operators are
# slow for thousands of events a second


@dataclass(frozen=True)
class InterfaceEvent:
    """An interface of the host's namespace (`nsid` None) or of a namespace the host knows by `nsid` changed: `up`
    says whether it is up with its carrier, None when it was removed."""

    nsid: int | None
    name: str
    up: bool | None


@dataclass(frozen=True)
class NamespaceGone:
    """The namespace the host knew by `nsid` is destroyed."""

    nsid: int


@dataclass(frozen=True)
class EventsLost:
    """The kernel had more to say than the socket holds (ENOBUFS): what it dropped is unknown, until probed."""


class LinkEvents:
    """One socket in the host's namespace that hears every interface change there and in each namespace given an id
    in it (`nsid_of`), and each such namespace's end: the kernel's NETLINK_LISTEN_ALL_NSID. One socket and one id
    per namespace, where a socket in each namespace would hold each namespace alive."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC, socket.NETLINK_ROUTE)
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, _SO_RCVBUFFORCE, _EVENTS_BUFFER)  # past rmem_max, as root
        except PermissionError:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _EVENTS_BUFFER)
        self._buffer = bytearray(_EVENT_SIZE)  # read into, where a buffer made for each read would cost more
        _drop_bridge_link_news(self._socket)
        self._socket.bind((0, 1 << (_RTNLGRP_LINK - 1)))
        self._socket.setsockopt(_SOL_NETLINK, _NETLINK_ADD_MEMBERSHIP, _RTNLGRP_NSID)
        self._socket.setsockopt(_SOL_NETLINK, _NETLINK_LISTEN_ALL_NSID, 1)
        self._requests = _Rtnl()

    def fileno(self) -> int:
        return self._socket.fileno()

    def close(self) -> None:
        self._socket.close()
        self._requests.close()

    def nsid_of(self, netns: str) -> int:
        """The id the host's namespace knows `netns` by, given one now if it has none (RTM_NEWNSID)."""
        fd = open_netns(netns)
        try:
            asked = wire.attribute(_NETNSA_FD, struct.pack("=I", fd))
            with _kernel(f"give netns {netns} an id"):
                if (nsid := self._asked_nsid(asked)) >= 0:
                    return nsid
                self._requests.request(bytes(4) + wire.attribute(_NETNSA_NSID, struct.pack("=i", -1)) + asked,
                                       _RTM_NEWNSID)
                return self._asked_nsid(asked)
        finally:
            os.close(fd)

    def _asked_nsid(self, asked: bytes) -> int:
        """The id of the namespace `asked` names (RTM_GETNSID); -1 when it has none. The reply is read where it lies
        (struct rtgenmsg, padded to 4 bytes, then its attributes), as the agent asks it for each namespace of a lab it
        records: pyroute2's decoding took most of the time."""
        nsid = -1
        for reply in self._requests.replies(bytes(4) + asked, _RTM_GETNSID):
            if found := _attribute(bytes(reply), wire.HEADER.size + 4, _NETNSA_NSID):
                nsid = struct.unpack_from("=i", found)[0]
        return nsid

    def read(self, namespaces: Container[int]) -> list[InterfaceEvent | NamespaceGone | EventsLost] | None:
        """What the kernel said in its next message since the last read, of the host's namespace and of `namespaces`
        (their ids): what any other namespace says is not parsed, as a deploy under way makes thousands of messages
        in namespaces nobody watches yet. None when the kernel said nothing more."""
        try:
            size, ancillary, flags, _ = self._socket.recvmsg_into([self._buffer], _ANCILLARY_SPACE, _MSG_DONTWAIT)
        except BlockingIOError:
            return None
        except OSError as error:
            if error.errno != errno.ENOBUFS:
                raise
            return self._lost()
        if flags & _MSG_TRUNC:
            return self._lost()
        nsid = next((struct.unpack("=i", value[:4])[0] for level, kind, value in ancillary
                     if level == _SOL_NETLINK and kind == _NETLINK_LISTEN_ALL_NSID), None)
        events: list[InterfaceEvent | NamespaceGone | EventsLost] = []
        if nsid is not None and nsid not in namespaces:
            return events
        data = bytes(self._buffer[:size])
        offset = 0
        while offset + wire.HEADER.size <= len(data):
            length, kind, _, _, _ = wire.HEADER.unpack_from(data, offset)
            body = data[offset + wire.HEADER.size:offset + max(length, wire.HEADER.size)]
            offset += max(wire.HEADER.size, (length + 3) & ~3)
            if kind in (RTM_NEWLINK, RTM_DELLINK):
                flags = _IFINFO.unpack_from(body)[3]
                name = _attribute(body, _IFINFO.size, wire.IFLA_IFNAME).rstrip(b"\0").decode()
                up = flags & IFF_UP != 0 and flags & _IFF_LOWER_UP != 0
                events.append(InterfaceEvent(nsid, name, up if kind == RTM_NEWLINK else None))
            elif kind == _RTM_DELNSID and nsid is None:  # another namespace's ids are not the host's
                gone = _attribute(body, 4, _NETNSA_NSID)
                if gone:
                    events.append(NamespaceGone(struct.unpack("=i", gone[:4])[0]))
        return events

    def _lost(self) -> list[InterfaceEvent | NamespaceGone | EventsLost]:
        """Events were dropped: those still queued are older than a probe made now, and would undo what it finds."""
        while True:
            try:
                self._socket.recv_into(self._buffer, 0, _MSG_DONTWAIT)
            except BlockingIOError:
                return [EventsLost()]
            except OSError as error:
                if error.errno != errno.ENOBUFS:
                    raise


def _drop_bridge_link_news(events: socket.socket) -> None:
    """Have the kernel drop, before they are queued, the RTM_NEWLINK messages of the bridge family (AF_BRIDGE): a
    bridge port's state in its bridge, which tell nothing of its name, state or carrier that the port's own message
    does not tell too. They were 2,000 of a deploy's 6,400 messages at 400 containers on a bridge. The bridge family's
    RTM_DELLINK, a port leaving its bridge, is still heard: its link is then broken (see LiveLab.hear)."""
    link_news = struct.unpack("!H", struct.pack("=H", RTM_NEWLINK))[0]  # ldh reads in network byte order
    program = b"".join(_BPF_INSTRUCTION.pack(*instruction) for instruction in (
        (_BPF_LDH_ABS, 0, 0, 4),  # nlmsghdr.nlmsg_type
        (_BPF_JEQ_K, 0, 3, link_news),
        (_BPF_LDB_ABS, 0, 0, wire.HEADER.size),  # ifinfomsg.ifi_family, which a link message always has
        (_BPF_JEQ_K, 0, 1, socket.AF_BRIDGE),
        (_BPF_RET_K, 0, 0, 0),  # dropped
        (_BPF_RET_K, 0, 0, 0xFFFFFFFF)))  # kept whole
    instructions = ctypes.create_string_buffer(program, len(program))
    events.setsockopt(socket.SOL_SOCKET, _SO_ATTACH_FILTER,
                      struct.pack("@HP", len(program) // _BPF_INSTRUCTION.size, ctypes.addressof(instructions)))


def sysctl_path(key: str) -> str:
    """The path under /proc/sys of a net.* sysctl, e.g. "net.ipv4.ip_forward" (slashes if a name has dots)."""
    parts = key.split("/") if "/" in key else key.split(".")
    if parts[0] != "net" or any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"{key!r} is not a net.* sysctl, the only kind a namespace has its own of")
    return "/".join(parts)


_CHOICES_OF_LOADED_MODULES = {"net/ipv4/tcp_congestion_control": "net/ipv4/tcp_available_congestion_control"}
"""Sysctls whose value names a kernel module that the kernel loads, for a writer with the host's CAP_NET_ADMIN, when
it is not loaded yet: the file listing the values it has loaded already."""


def _refuse_loading_a_module(path: str, value: str) -> None:
    """A lab's sysctl, written by root, has the kernel load no module: a lab file (a member's) would choose it."""
    loaded = _CHOICES_OF_LOADED_MODULES.get(path)
    if loaded is None:
        return
    with open(f"/proc/sys/{loaded}", encoding="ascii") as listing:
        choices = listing.read().split()
    if value.strip() not in choices:
        raise ValueError(f"{path.replace('/', '.')} = {value.strip()}: this host has not loaded it (it has "
                         f"{', '.join(choices)}), and a lab has the kernel load no module; root may load it first "
                         f"(modprobe tcp_{value.strip()})")


def _attribute(data: bytes, offset: int, number: int) -> bytes:
    """The first attribute `number` of a message's attributes from `offset` (b"" when it has none): the search stops
    there, since the watcher reads thousands of messages a second and an interface's name comes first."""
    while offset + 4 <= len(data):
        length, found = _ATTRIBUTE.unpack_from(data, offset)
        if length < 4:
            break
        if found & 0x3FFF == number:  # without NLA_F_NESTED and NLA_F_NET_BYTEORDER
            return data[offset + 4:offset + length]
        offset += (length + 3) & ~3
    return b""