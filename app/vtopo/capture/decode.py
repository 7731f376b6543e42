"""Packets decoded for display with scapy: a one-line summary per packet, its layers as a tree, a hex dump.

scapy does all the protocol work (ARP, ICMP, OSPF, DHCP, TCP, UDP, VXLAN, Geneve); this module only chooses what
a student reads in each column.
"""
from __future__ import annotations

from dataclasses import dataclass

from scapy.contrib.geneve import GENEVE
from scapy.contrib.ospf import OSPF_Hdr
from scapy.layers.dhcp import BOOTP, DHCP, DHCPTypes
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Packet, Raw
from scapy.utils import hexdump

OSPF_TYPES = {1: "Hello", 2: "DB-Desc", 3: "LS-Request", 4: "LS-Update", 5: "LS-Ack"}
ICMP_TYPES = {0: "echo reply", 8: "echo request", 3: "destination unreachable", 11: "time exceeded"}


@dataclass(frozen=True)
class RawPacket:
    """A packet as captured: its number in the capture, when (seconds since the epoch) and its bytes."""

    number: int
    time_s: float
    data: bytes
    wire_length: int


@dataclass(frozen=True)
class PacketSummary:
    """One row of a packet list."""

    number: int
    time_s: float
    length: int
    src_mac: str
    dst_mac: str
    src_ip: str
    dst_ip: str
    protocol: str
    ttl: int | None
    info: str
    echo: tuple[int, int] | None = None
    """(id, seq) of an ICMP echo request or reply: the same pair at every hop of a ping's path."""
    vlans: tuple[int, ...] = ()
    """The VLAN of each 802.1Q (or 802.1ad) tag the frame carries, outermost first; none for an untagged frame."""

    @property
    def tags(self) -> str:
        """The frame's tags as a student reads them: "vlan 10", "vlan 100 vlan 10" (stacked), "" for none."""
        return " ".join(f"vlan {vlan}" for vlan in self.vlans)

    def line(self, start_s: float = 0.0) -> str:
        """The packet as one line of text, time relative to `start_s`."""
        addresses = f"{self.src_ip} → {self.dst_ip}" if self.src_ip else f"{self.src_mac} → {self.dst_mac}"
        ttl = f" ttl {self.ttl}" if self.ttl is not None else ""
        tags = f" {self.tags}" if self.vlans else ""
        return (f"{self.number:>5} {self.time_s - start_s:10.6f} {self.src_mac} → {self.dst_mac}{tags}  {addresses}  "
                f"{self.protocol}{ttl} {self.length} B  {self.info}")


@dataclass(frozen=True)
class Layer:
    """One decoded layer: its name and its fields as (name, value shown to a person)."""

    name: str
    fields: list[tuple[str, str]]


def summarize(packet: RawPacket) -> PacketSummary:
    frame = Ether(packet.data)
    src_ip = dst_ip = ""
    ttl: int | None = None
    if IP in frame:
        src_ip, dst_ip, ttl = frame[IP].src, frame[IP].dst, frame[IP].ttl
    elif IPv6 in frame:
        src_ip, dst_ip, ttl = frame[IPv6].src, frame[IPv6].dst, frame[IPv6].hlim
    protocol, info = describe(frame)
    echo = None
    if ICMP in frame and frame[ICMP].type in (0, 8):
        echo = (frame[ICMP].id, frame[ICMP].seq)
    return PacketSummary(packet.number, packet.time_s, packet.wire_length, frame.src, frame.dst, src_ip, dst_ip,
                         protocol, ttl, info, echo, _vlans(frame))


def _vlans(frame: Packet) -> tuple[int, ...]:
    """The VLANs of the frame's tags, outermost first (those of a VXLAN's inner frame are not this frame's)."""
    vlans = []
    layer = frame.payload
    while isinstance(layer, (Dot1Q, Dot1AD)):
        vlans.append(int(layer.vlan))
        layer = layer.payload
    return tuple(vlans)


def describe(frame: Packet) -> tuple[str, str]:
    """The protocol a student would name, and a one-line description of what the packet says."""
    if VXLAN in frame:
        return "VXLAN", f"vni {frame[VXLAN].vni}: {_inner(frame[VXLAN].payload)}"
    if GENEVE in frame:
        return "Geneve", f"vni {frame[GENEVE].vni}: {_inner(frame[GENEVE].payload)}"
    if ARP in frame:
        arp = frame[ARP]
        if arp.op == 1:
            return "ARP", f"who-has {arp.pdst} tell {arp.psrc}"
        return "ARP", f"{arp.psrc} is-at {arp.hwsrc}"
    if OSPF_Hdr in frame:
        ospf = frame[OSPF_Hdr]
        return "OSPF", f"{OSPF_TYPES.get(ospf.type, f'type {ospf.type}')} from router {ospf.src} area {ospf.area}"
    if DHCP in frame:
        return "DHCP", _dhcp(frame[BOOTP], frame[DHCP])
    if ICMP in frame:
        icmp = frame[ICMP]
        what = ICMP_TYPES.get(icmp.type, f"type {icmp.type} code {icmp.code}")
        return "ICMP", f"{what} id {icmp.id} seq {icmp.seq}" if icmp.type in (0, 8) else what
    if TCP in frame:
        tcp = frame[TCP]
        return "TCP", (f"{tcp.sport} → {tcp.dport} [{tcp.flags}] seq {tcp.seq} ack {tcp.ack} "
                       f"len {len(tcp.payload)}")
    if UDP in frame:
        udp = frame[UDP]
        return "UDP", f"{udp.sport} → {udp.dport} len {len(udp.payload)}"
    return str(frame.lastlayer().name), str(frame.summary())


def _dhcp(bootp: Packet, dhcp: Packet) -> str:
    """A DHCP message as a student follows the exchange: its type, the client's MAC and the transaction, the
    address offered or given, and the relay it crossed (giaddr)."""
    options = dict(option for option in dhcp.options if isinstance(option, tuple) and len(option) == 2)
    kind = options.get("message-type")
    words = [str(DHCPTypes.get(kind, f"type {kind}")).upper() if kind is not None else "BOOTP",
             f"xid {bootp.xid:#010x} from {_mac(bootp.chaddr)}"]
    if bootp.yiaddr != "0.0.0.0":
        words.append(f"your address {bootp.yiaddr}")
    if bootp.giaddr != "0.0.0.0":
        words.append(f"relayed by {bootp.giaddr}")
    return " ".join(words)


def _mac(chaddr: bytes) -> str:
    return ":".join(f"{byte:02x}" for byte in bytes(chaddr)[:6])


def _inner(payload: Packet) -> str:
    protocol, info = describe(payload)
    addresses = f"{payload[IP].src} → {payload[IP].dst} " if IP in payload else ""
    return f"{addresses}{protocol} {info}"


def layers(data: bytes) -> list[Layer]:
    """The packet's layers, outermost first, each with its fields as scapy shows them."""
    found = []
    layer: Packet = Ether(data)
    while layer and not isinstance(layer, Raw):
        fields = [(f.name, str(f.i2repr(layer, layer.getfieldval(f.name)))) for f in layer.fields_desc]
        found.append(Layer(str(layer.name), fields))
        layer = layer.payload
    if isinstance(layer, Raw):
        found.append(Layer("Data", [("bytes", str(len(layer.load)))]))
    return found


def hex_dump(data: bytes) -> str:
    return str(hexdump(data, dump=True))
