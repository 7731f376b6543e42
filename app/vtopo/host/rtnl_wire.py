"""The bytes of the rtnetlink requests vtopo sends, packed with struct.

pyroute2's message classes take 90-300 us of Python to encode one request (a link brought up: 110 us, a veth
pair: 300 us), more than the kernel takes to carry most of them out, and a deploy sends six per container.
Packing the same bytes with struct takes a few microseconds. Replies are still decoded by pyroute2
(vtopo.host.netlink), but for the interface counters, read a whole namespace at a time every second while the
designer shows link rates: pyroute2 took 50 us a reply, struct takes one. Traffic control requests are still built
by its tc plugins.
"""
from __future__ import annotations

import errno
import functools
import ipaddress
import operator
import os
import socket
import struct

# Attribute numbers: kernel ABI, from linux/if_link.h, if_addr.h, rtnetlink.h and veth.h.
IFLA_ADDRESS, IFLA_IFNAME, IFLA_MTU, IFLA_LINK, IFLA_MASTER = 1, 3, 4, 5, 10
IFLA_LINKINFO, IFLA_IFALIAS, IFLA_NET_NS_FD, IFLA_PROTO_DOWN = 18, 20, 28, 39
IFLA_INFO_KIND, IFLA_INFO_DATA, IFLA_INFO_SLAVE_KIND, IFLA_INFO_SLAVE_DATA = 1, 2, 4, 5
IFLA_AF_SPEC = 26
IFLA_NUM_TX_QUEUES, IFLA_NUM_RX_QUEUES = 31, 32
IFLA_BR_FORWARD_DELAY, IFLA_BR_AGEING_TIME, IFLA_BR_STP_STATE, IFLA_BR_VLAN_FILTERING = 1, 4, 5, 7
IFLA_BRIDGE_VLAN_INFO = 2
BRIDGE_VLAN_INFO_PVID, BRIDGE_VLAN_INFO_UNTAGGED = 0x2, 0x4
IFLA_BRPORT_MODE = 4
IFLA_MACVLAN_MODE = 1
IFLA_VLAN_ID = 1
VETH_INFO_PEER = 1
IFLA_VXLAN_ID, IFLA_VXLAN_GROUP, IFLA_VXLAN_LOCAL, IFLA_VXLAN_PORT = 1, 2, 4, 15
IFLA_VXLAN_GROUP6, IFLA_VXLAN_LOCAL6 = 16, 17
IFA_ADDRESS, IFA_LOCAL = 1, 2
IFA_F_NODAD = 0x02
RTA_DST, RTA_OIF, RTA_GATEWAY = 1, 4, 5
RTM_NEWLINK = 16
NLM_F_REQUEST, NLM_F_ACK = 0x1, 0x4
NLMSG_ERROR = 2
IFF_UP = 0x1

HEADER = struct.Struct("=IHHII")  # struct nlmsghdr: length, type, flags, sequence number, port id
ERRNO = struct.Struct("=i")  # the first field of an NLMSG_ERROR's payload: 0 in an ack, else a negative errno
_ATTRIBUTE = struct.Struct("=HH")  # struct nlattr: length, type
_LINK = struct.Struct("=BxHiII")  # struct ifinfomsg: family, type, index, flags, change
_ADDRESS = struct.Struct("=BBBBi")  # struct ifaddrmsg: family, prefix length, flags, scope, index
_ROUTE = struct.Struct("=BBBBBBBBI")  # struct rtmsg: family, dst/src length, tos, table, protocol, scope, type, flags
_VLAN_INFO = struct.Struct("=HH")  # struct bridge_vlan_info: flags, vid
_STATS = struct.Struct("=BBHII")  # struct if_stats_msg: family, two pads, index, filter mask
_STATS_REPLY = struct.Struct("=16xBBHII")  # a netlink header, then struct if_stats_msg
_LINK_STATS_64 = struct.Struct("=QQQQ")  # struct rtnl_link_stats64's first fields: rx/tx packets, rx/tx bytes
_STATS_64_FIRST = struct.Struct("=20xI6xHQQQQ")  # a netlink header, struct if_stats_msg's index, then its first
# attribute's number and, when that is IFLA_STATS_LINK_64, those fields
_STATS_64_INDEX, _STATS_64_NUMBER, _STATS_64_COUNTERS = 20, 30, 32  # where _STATS_64_FIRST's fields are
IFLA_STATS_LINK_64 = 1
_U32 = struct.Struct("=I")
_U16 = struct.Struct("=H")
_U8 = struct.Struct("=B")


def attribute(number: int, payload: bytes) -> bytes:
    length = _ATTRIBUTE.size + len(payload)
    return _ATTRIBUTE.pack(length, number) + payload + bytes(-length % 4)


def u32(number: int, value: int) -> bytes:
    return attribute(number, _U32.pack(value))


def u16(number: int, value: int) -> bytes:
    return attribute(number, _U16.pack(value))


def u8(number: int, value: int) -> bytes:
    return attribute(number, _U8.pack(value))


def text(number: int, value: str) -> bytes:
    """A NUL-terminated string attribute (names and kinds)."""
    return attribute(number, value.encode() + b"\0")


def nested(number: int, *attributes: bytes) -> bytes:
    return attribute(number, b"".join(attributes))


def link(*attributes: bytes, index: int = 0, flags: int = 0, change: int = 0, family: int = socket.AF_UNSPEC) -> bytes:
    """A link request: struct ifinfomsg, then its attributes."""
    return _LINK.pack(family, 0, index, flags, change) + b"".join(attributes)


def queues(count: int) -> bytes:
    """A new link's number of transmit and of receive queues (the kernel's default: one each per CPU)."""
    return u32(IFLA_NUM_TX_QUEUES, count) + u32(IFLA_NUM_RX_QUEUES, count)


def loopback_up(rtnl: socket.socket, tag: str) -> None:
    """Bring up lo, with `tag` as its alias, in the namespace where the NETLINK_ROUTE socket `rtnl` was opened, and
    wait for the kernel's ack: OSError with the kernel's errno when it refuses. For a process that loads no pyroute2
    (the namespace helper): the request is the only one on the socket."""
    request = link(text(IFLA_IFNAME, "lo"), alias(tag), flags=IFF_UP, change=IFF_UP)
    rtnl.send(HEADER.pack(HEADER.size + len(request), RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 1, 0) + request)
    reply = rtnl.recv(1 << 16)
    if len(reply) < HEADER.size + ERRNO.size or HEADER.unpack_from(reply)[1] != NLMSG_ERROR:
        raise OSError(errno.EPROTO, "the kernel did not acknowledge bringing lo up")
    code = -ERRNO.unpack_from(reply, HEADER.size)[0]
    if code:
        raise OSError(code, f"bring lo up: {os.strerror(code)}")


def bridge_vlan(index: int, vid: int, flags: int) -> bytes:
    """A VLAN of the bridge port with ifindex `index`, with BRIDGE_VLAN_INFO_* `flags`, as `bridge vlan add|del`
    sends it (RTM_SETLINK adds it, RTM_DELLINK deletes it)."""
    return link(nested(IFLA_AF_SPEC, attribute(IFLA_BRIDGE_VLAN_INFO, _VLAN_INFO.pack(flags, vid))), index=index,
                family=socket.AF_BRIDGE)


def link_kind(kind: str, *data: bytes) -> bytes:
    """IFLA_LINKINFO naming the kind of link to create, with its kind's own attributes."""
    return nested(IFLA_LINKINFO, text(IFLA_INFO_KIND, kind), *([nested(IFLA_INFO_DATA, *data)] if data else []))


def macvlan_kind(kind: str, mode: str) -> bytes:
    """IFLA_LINKINFO of a macvlan or macvtap (both take macvlan's attributes) in `mode`, e.g. "bridge"."""
    return link_kind(kind, u32(IFLA_MACVLAN_MODE, _macvlan_modes()[mode]))


@functools.cache
def _macvlan_modes() -> dict[str, int]:
    """enum macvlan_mode, by the modes' names. The ops, which name them, are imported here and not above: the
    namespace helper packs its one request with this module, and starts without them."""
    from vtopo.ops import MacvlanMode

    return {MacvlanMode.PRIVATE: 1, MacvlanMode.VEPA: 2, MacvlanMode.BRIDGE: 4, MacvlanMode.PASSTHRU: 8,
            MacvlanMode.SOURCE: 16}


def vlan_kind(vid: int) -> bytes:
    """IFLA_LINKINFO of an 802.1Q VLAN device tagging its frames with `vid`."""
    from vtopo.ops import LinkType  # see _macvlan_modes

    return link_kind(LinkType.VLAN.value, u16(IFLA_VLAN_ID, vid))


def vxlan_kind(vni: int, local: str, remote: str, port: int) -> bytes:
    """IFLA_LINKINFO of a point-to-point VXLAN device: its VNI, both ends' underlay addresses and the UDP port."""
    local_ip, remote_ip = ipaddress.ip_address(local), ipaddress.ip_address(remote)
    v6 = local_ip.version == 6
    return link_kind("vxlan", u32(IFLA_VXLAN_ID, vni),
                     attribute(IFLA_VXLAN_LOCAL6 if v6 else IFLA_VXLAN_LOCAL, local_ip.packed),
                     attribute(IFLA_VXLAN_GROUP6 if v6 else IFLA_VXLAN_GROUP, remote_ip.packed),
                     attribute(IFLA_VXLAN_PORT, port.to_bytes(2, "big")))


def mtu(value: int) -> bytes:
    return u32(IFLA_MTU, value)


def mac(address: str) -> bytes:
    return attribute(IFLA_ADDRESS, bytes.fromhex(address.replace(":", "")))


def alias(value: str) -> bytes:
    """IFLA_IFALIAS as iproute2 sends it, without a terminator: "" clears the alias."""
    return attribute(IFLA_IFALIAS, value.encode())


def proto_down(on: bool) -> bytes:
    """IFLA_PROTO_DOWN: the device stays up and loses its carrier (NO-CARRIER), as `ip link set DEV protodown on`."""
    return u8(IFLA_PROTO_DOWN, int(on))


def address(interface: ipaddress.IPv4Interface | ipaddress.IPv6Interface, index: int, flags: int = 0) -> bytes:
    """An address, with IFA_F_* `flags` (IFA_F_NODAD as `ip addr add ... nodad` sends it)."""
    packed = interface.ip.packed
    attributes = attribute(IFA_ADDRESS, packed) + (attribute(IFA_LOCAL, packed) if interface.version == 4 else b"")
    return _ADDRESS.pack(family(interface.version), interface.network.prefixlen, flags, 0, index) + attributes


def route(destination: ipaddress.IPv4Network | ipaddress.IPv6Network | None,
          gateway: ipaddress.IPv4Address | ipaddress.IPv6Address, table: int, protocol: int, kind: int,
          device_index: int = 0) -> bytes:
    """A route to `destination` (None: the default route) via `gateway`, of universe scope, out of the device
    with `device_index` if not 0."""
    attributes = attribute(RTA_GATEWAY, gateway.packed)
    if destination is not None:
        attributes += attribute(RTA_DST, destination.network_address.packed)
    if device_index:
        attributes += u32(RTA_OIF, device_index)
    prefix_length = 0 if destination is None else destination.prefixlen
    return _ROUTE.pack(family(gateway.version), prefix_length, 0, 0, table, protocol, 0, kind, 0) + attributes


def stats(filter_mask: int) -> bytes:
    return _STATS.pack(socket.AF_UNSPEC, 0, 0, 0, filter_mask)


def link_stats_64(reply: bytes | memoryview) -> tuple[int, tuple[int, int]]:
    """An RTM_NEWSTATS reply (netlink header included) asked for IFLA_STATS_LINK_64 only: the interface's index, and
    its octets and packets, both directions added. The kernel writes that attribute first, where one unpack reads
    it with the index (a dump has a reply per interface of the namespace, every second while rates are shown)."""
    if len(reply) >= _STATS_64_FIRST.size:
        index, number, rx_packets, tx_packets, rx_bytes, tx_bytes = _STATS_64_FIRST.unpack_from(reply)
        if number == IFLA_STATS_LINK_64:
            return index, (rx_bytes + tx_bytes, rx_packets + tx_packets)
    index = _STATS_REPLY.unpack_from(reply)[3]
    rx_packets, tx_packets, rx_bytes, tx_bytes = _LINK_STATS_64.unpack_from(reply, _stats_64_offset(reply, index))
    return index, (rx_bytes + tx_bytes, rx_packets + tx_packets)


def link_stats_64_run(replies: memoryview, length: int) -> dict[int, tuple[int, int]]:
    """Replies as `link_stats_64` reads them, that follow each other in a buffer, each `length` bytes. Where each
    starts with its counters (as a kernel writes them), each field is read at once over all of them: an interface's
    reply costs tens of nanoseconds, where one unpack each cost a microsecond (2,000 bridge ports every second)."""
    count = replies.nbytes // length
    if (length % 8 or length < _STATS_64_FIRST.size or replies.nbytes % length
            or replies.cast("H")[_STATS_64_NUMBER // 2::length // 2].tolist().count(IFLA_STATS_LINK_64) != count):
        return dict(link_stats_64(replies[offset:offset + length]) for offset in range(0, replies.nbytes, length))
    words, counters, step = replies.cast("I"), replies.cast("Q"), length // 8
    rx_packets, tx_packets, rx_bytes, tx_bytes = (counters[field::step].tolist() for field in range(
        _STATS_64_COUNTERS // 8, _STATS_64_COUNTERS // 8 + 4))
    return dict(zip(words[_STATS_64_INDEX // 4::length // 4].tolist(),
                    zip(map(operator.add, rx_bytes, tx_bytes), map(operator.add, rx_packets, tx_packets))))


def _stats_64_offset(reply: bytes | memoryview, index: int) -> int:
    """Where IFLA_STATS_LINK_64's counters start in a reply that may have other attributes before it."""
    offset = _STATS_REPLY.size
    while offset + _ATTRIBUTE.size <= len(reply):
        length, number = _ATTRIBUTE.unpack_from(reply, offset)
        if number == IFLA_STATS_LINK_64:
            return offset + _ATTRIBUTE.size
        offset += max(_ATTRIBUTE.size, (length + 3) & ~3)
    raise ValueError(f"the kernel's counters of interface {index} lack their 64-bit statistics")


def family(version: int) -> int:
    return socket.AF_INET if version == 4 else socket.AF_INET6
