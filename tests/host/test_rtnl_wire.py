"""The bytes vtopo packs for each rtnetlink request shape (vtopo.host.rtnl_wire) are the bytes pyroute2's own encoder
makes of the same request: offline, no kernel needed. The nlmsghdr, which the socket adds, is left out."""
from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest
from pyroute2.netlink.rtnl.ifaddrmsg import ifaddrmsg
from pyroute2.netlink.rtnl.ifinfmsg import ifinfmsg
from pyroute2.netlink.rtnl.rtmsg import rtmsg

from vtopo.host import rtnl_wire as wire

HEADER = 16  # struct nlmsghdr, which pyroute2's encoder puts first


def encoded(message_class: type[Any], fields: dict[str, Any], attributes: list[Any]) -> bytes:
    message = message_class()
    for key, value in fields.items():
        message[key] = value
    message["attrs"] = attributes
    message.encode()
    return bytes(message.data[HEADER:])


def named(name: str, *attributes: Any) -> list[Any]:
    return [("IFLA_IFNAME", name), *attributes]


CASES = {
    "a link's MTU and MAC": (
        wire.link(wire.text(wire.IFLA_IFNAME, "v1-c1-eth0"), wire.u32(wire.IFLA_MTU, 1400),
                  wire.mac("02:00:00:00:00:01"), index=7, flags=1, change=1),
        encoded(ifinfmsg, {"index": 7, "flags": 1, "change": 1},
                named("v1-c1-eth0", ("IFLA_MTU", 1400), ("IFLA_ADDRESS", "02:00:00:00:00:01")))),
    "a bridge with STP and its timers": (
        wire.link(wire.text(wire.IFLA_IFNAME, "v1-br0"), wire.link_kind(
            "bridge", wire.u32(wire.IFLA_BR_STP_STATE, 1), wire.u32(wire.IFLA_BR_FORWARD_DELAY, 1500),
            wire.u32(wire.IFLA_BR_AGEING_TIME, 30000))),
        encoded(ifinfmsg, {}, named("v1-br0", ("IFLA_LINKINFO", {"attrs": [
            ("IFLA_INFO_KIND", "bridge"), ("IFLA_INFO_DATA", {"attrs": [
                ("IFLA_BR_STP_STATE", 1), ("IFLA_BR_FORWARD_DELAY", 1500), ("IFLA_BR_AGEING_TIME", 30000)]})]})))),
    "a veth whose peer goes to another namespace": (
        wire.link(wire.text(wire.IFLA_IFNAME, "eth0"), wire.link_kind("veth", wire.attribute(
            wire.VETH_INFO_PEER, wire.link(wire.text(wire.IFLA_IFNAME, "v1-c1-eth0"), wire.u32(wire.IFLA_NET_NS_FD,
                                                                                                 9))))),
        encoded(ifinfmsg, {}, named("eth0", ("IFLA_LINKINFO", {"attrs": [
            ("IFLA_INFO_KIND", "veth"), ("IFLA_INFO_DATA", {"attrs": [
                ("VETH_INFO_PEER", {"attrs": named("v1-c1-eth0", ("IFLA_NET_NS_FD", 9))})]})]})))),
    "a macvlan in bridge mode on a lower device": (
        wire.link(wire.text(wire.IFLA_IFNAME, "v1-m1-c1"), wire.u32(wire.IFLA_LINK, 3),
                  wire.macvlan_kind("macvlan", "bridge")),
        encoded(ifinfmsg, {}, named("v1-m1-c1", ("IFLA_LINK", 3), ("IFLA_LINKINFO", {"attrs": [
            ("IFLA_INFO_KIND", "macvlan"), ("IFLA_INFO_DATA", {"attrs": [("IFLA_MACVLAN_MODE", 4)]})]})))),
    "a port joining its bridge": (
        wire.link(wire.text(wire.IFLA_IFNAME, "v1-br0-p1"), wire.u32(wire.IFLA_MASTER, 12)),
        encoded(ifinfmsg, {}, named("v1-br0-p1", ("IFLA_MASTER", 12)))),
    "a bridge port in hairpin mode": (
        wire.link(wire.text(wire.IFLA_IFNAME, "v1-br0-p1"), wire.nested(wire.IFLA_LINKINFO, wire.text(
            wire.IFLA_INFO_SLAVE_KIND, "bridge"), wire.nested(wire.IFLA_INFO_SLAVE_DATA, wire.u8(
                wire.IFLA_BRPORT_MODE, 1)))),
        encoded(ifinfmsg, {}, named("v1-br0-p1", ("IFLA_LINKINFO", {"attrs": [
            ("IFLA_INFO_SLAVE_KIND", "bridge"), ("IFLA_INFO_SLAVE_DATA", {"attrs": [("IFLA_BRPORT_MODE", 1)]})]})))),
    "an IPv4 address": (
        wire.address(ipaddress.ip_interface("10.0.0.1/24"), 5),
        encoded(ifaddrmsg, {"family": socket.AF_INET, "prefixlen": 24, "index": 5},
                [("IFA_ADDRESS", "10.0.0.1"), ("IFA_LOCAL", "10.0.0.1")])),
    "an IPv6 address without duplicate detection": (
        wire.address(ipaddress.ip_interface("2001:db8::1/64"), 5, wire.IFA_F_NODAD),
        encoded(ifaddrmsg, {"family": socket.AF_INET6, "prefixlen": 64, "index": 5, "flags": wire.IFA_F_NODAD},
                [("IFA_ADDRESS", "2001:db8::1")])),
    "a default route via a gateway": (
        wire.route(None, ipaddress.ip_address("10.0.0.254"), 254, 4, 1),
        encoded(rtmsg, {"family": socket.AF_INET, "table": 254, "proto": 4, "type": 1},
                [("RTA_GATEWAY", "10.0.0.254")])),
    "an IPv6 route via a link-local gateway out of a device": (
        wire.route(ipaddress.ip_network("2001:db8:1::/64"), ipaddress.ip_address("fe80::1"), 254, 4, 1, 6),
        encoded(rtmsg, {"family": socket.AF_INET6, "dst_len": 64, "table": 254, "proto": 4, "type": 1},
                [("RTA_GATEWAY", "fe80::1"), ("RTA_DST", "2001:db8:1::"), ("RTA_OIF", 6)])),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_vtopos_bytes_are_pyroute2s(case: str) -> None:
    ours, theirs = CASES[case]
    assert ours.hex() == theirs.hex()
