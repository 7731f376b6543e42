"""The one-line info a student reads for each protocol the issue names. The kernel here has no Geneve driver and
OSPF's database exchange only happens as adjacencies form, so these frames are built with scapy; ARP, ICMP, OSPF
Hello, TCP and VXLAN are also checked on captured traffic (tests/labs/test_capture.py)."""
from __future__ import annotations

import pytest
from scapy.contrib.geneve import GENEVE
from scapy.contrib.ospf import OSPF_DBDesc, OSPF_Hdr, OSPF_LSUpd, OSPF_Router_LSA
from scapy.layers.dhcp import BOOTP, DHCP
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import Dot1AD, Dot1Q, Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Packet

from vtopo.capture import RawPacket, summarize

MACS = {"src": "02:00:00:00:00:01", "dst": "02:00:00:00:00:02"}
TO_ALL_OSPF_ROUTERS = IP(src="10.0.12.1", dst="224.0.0.5", ttl=1) / OSPF_Hdr(src="1.1.1.1", area="0.0.0.0")
INNER = Ether() / IP(src="10.9.0.1", dst="10.9.0.2") / ICMP(id=5, seq=2)
UNDERLAY = IP(src="192.0.2.1", dst="192.0.2.2")
CLIENT = b"\x02\x00\x00\x00\x00\x07"


@pytest.mark.parametrize(("frame", "protocol", "info"), [
    (IP(src="0.0.0.0", dst="255.255.255.255") / UDP(sport=68, dport=67) / BOOTP(chaddr=CLIENT, xid=0x3903F326)
     / DHCP(options=[("message-type", "discover"), "end"]), "DHCP", "DISCOVER xid 0x3903f326 from 02:00:00:00:00:07"),
    (IP(src="10.0.0.10", dst="10.0.2.1") / UDP(sport=67, dport=67)
     / BOOTP(op=2, chaddr=CLIENT, xid=7, yiaddr="10.0.2.100", giaddr="10.0.2.1")
     / DHCP(options=[("message-type", "offer"), "end"]), "DHCP",
     "OFFER xid 0x00000007 from 02:00:00:00:00:07 your address 10.0.2.100 relayed by 10.0.2.1"),
    (TO_ALL_OSPF_ROUTERS / OSPF_DBDesc(), "OSPF", "DB-Desc from router 1.1.1.1 area 0.0.0.0"),
    (TO_ALL_OSPF_ROUTERS / OSPF_LSUpd(lsalist=[OSPF_Router_LSA()]), "OSPF", "LS-Update from router 1.1.1.1 area 0.0.0.0"),
    (IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=40000, dport=5201, flags="SA", seq=100, ack=7) / b"xy", "TCP",
     "40000 → 5201 [SA] seq 100 ack 7 len 2"),
    (IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=5000, dport=53) / b"abc", "UDP", "5000 → 53 len 3"),
    (UNDERLAY / UDP(sport=1234, dport=4789) / VXLAN(vni=42) / INNER, "VXLAN",
     "vni 42: 10.9.0.1 → 10.9.0.2 ICMP echo request id 5 seq 2"),
    (UNDERLAY / UDP(sport=1234, dport=6081) / GENEVE(vni=7, proto=0x6558) / INNER, "Geneve",
     "vni 7: 10.9.0.1 → 10.9.0.2 ICMP echo request id 5 seq 2"),
], ids=["dhcp-discover", "dhcp-relayed-offer", "ospf-db-desc", "ospf-ls-update", "tcp", "udp", "vxlan",
        "geneve"])
def test_info_line(frame: Packet, protocol: str, info: str) -> None:
    data = bytes(Ether(**MACS) / frame)
    summary = summarize(RawPacket(1, 0.0, data, len(data)))
    assert (summary.protocol, summary.info) == (protocol, info)
    assert (summary.src_mac, summary.dst_mac) == (MACS["src"], MACS["dst"])


@pytest.mark.parametrize(("tags", "vlans", "shown"), [
    ((), (), "02:00:00:00:00:01 → 02:00:00:00:00:02  10.0.0.1"),
    ((Dot1Q(vlan=10),), (10,), "02:00:00:00:00:01 → 02:00:00:00:00:02 vlan 10  10.0.0.1"),
    ((Dot1AD(vlan=100), Dot1Q(vlan=20)), (100, 20), "02:00:00:00:00:02 vlan 100 vlan 20  10.0.0.1"),
], ids=["untagged", "802.1q", "q-in-q"])
def test_a_frames_tags_are_in_its_line_outermost_first(tags: tuple[Packet, ...], vlans: tuple[int, ...],
                                                       shown: str) -> None:
    frame = Ether(**MACS)
    for tag in tags:
        frame = frame / tag
    data = bytes(frame / IP(src="10.0.0.1", dst="10.0.0.2") / ICMP(id=5, seq=2))
    summary = summarize(RawPacket(1, 0.0, data, len(data)))
    assert summary.vlans == vlans
    assert shown in summary.line()
    assert (summary.protocol, summary.info, summary.src_ip) == ("ICMP", "echo request id 5 seq 2", "10.0.0.1")
