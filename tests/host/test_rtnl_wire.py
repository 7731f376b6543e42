"""The bytes vtopo packs for each rtnetlink request shape (vtopo.host.rtnl_wire) are the bytes pyroute2's own encoder
makes of the same request: offline, no kernel needed. The nlmsghdr, which the socket adds, is left out.

CASES builds the pieces directly; REQUESTS goes through every Netlink method that sends a request, with the socket
replaced by a recorder, so each request a deploy, a destroy or a status sends is compared, with its type and flags."""
from __future__ import annotations

import ipaddress
import socket
import contextlib
import os
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pyroute2.netlink import NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP, NLM_F_EXCL, NLM_F_REQUEST
from pyroute2.netlink.rtnl import (RTM_DELLINK, RTM_GETLINK, RTM_GETSTATS, RTM_NEWADDR, RTM_NEWLINK, RTM_NEWROUTE,
                                   RTM_SETLINK)
from pyroute2.netlink.rtnl.ifaddrmsg import ifaddrmsg
from pyroute2.netlink.rtnl.ifinfmsg import IFF_UP, ifinfmsg
from pyroute2.netlink.rtnl.ifstatsmsg import ifstatsmsg
from pyroute2.netlink.rtnl.rtmsg import rtmsg

from vtopo.host import netlink
from vtopo.host import rtnl_wire as wire
from vtopo.host.netlink import Netlink
from vtopo.ops import RouteProtocol

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


# ---------------------------------------------------------------- every request Netlink sends

CHANGE, CREATE, DUMP = NLM_F_REQUEST | NLM_F_ACK, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, (
    NLM_F_REQUEST | NLM_F_DUMP)
INDEXES = {"v1-br0": 12, "v1-br0-p1": 13, "eth0": 5, "lower": 3, "v1-sw-p1": 21, "v1-h1-eth0": 7}
HOST_FD, NETNS_FD = 900, 901  # the descriptors the recorder hands out for the host's namespace and for a lab's (above
# any the test process holds: the agents and watchers of earlier tests keep some open)


class ifinfmsg_as_iproute2(ifinfmsg):
    """ifinfmsg with IFLA_IFALIAS as iproute2 sends it (and the kernel reads it, by its length): no terminator."""

    nla_map = tuple(("IFLA_IFALIAS", "cdata") if entry[0] == "IFLA_IFALIAS" else entry for entry in ifinfmsg.nla_map)
    _nlmsg_base__compiled_nla = False  # compiled for this class, not inherited from ifinfmsg's


class Sent:
    """The socket of each namespace: it writes down each request, and answers a dump of links with one link."""

    def __init__(self) -> None:
        self.requests: list[tuple[str | None, int, int, bytes]] = []

    def socket(self, netns: str | None) -> Any:
        recorder = self

        class Socket:
            def index(self, name: str) -> int:
                return INDEXES[name]

            def request(self, payload: bytes, kind: int, flags: int = CHANGE) -> list[Any]:
                recorder.requests.append((netns, kind, flags, payload))
                return [{"index": 4, "ifname": "lower"}] if kind == RTM_GETLINK else []

            def runs(self, payload: bytes, kind: int, flags: int = CHANGE) -> Iterator[tuple[bytes, int]]:
                recorder.requests.append((netns, kind, flags, payload))
                return iter([])

            def close(self) -> None:
                pass

        return Socket()


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Netlink, Sent]]:
    recorder = Sent()
    monkeypatch.setattr(Netlink, "_rtnl", lambda self, netns: recorder.socket(netns))
    monkeypatch.setattr(netlink, "entered", lambda netns: contextlib.nullcontext())
    monkeypatch.setattr(netlink, "_Rtnl", lambda: recorder.socket("counted"))
    null = os.open(os.devnull, os.O_RDONLY)
    monkeypatch.setattr(netlink, "open_netns", lambda netns: os.dup2(null, NETNS_FD))
    monkeypatch.setattr(netlink, "os", TapsAppear())
    nl = Netlink()
    nl._host_fd, host_fd = HOST_FD, nl._host_fd
    yield nl, recorder
    nl._host_fd = host_fd
    nl.close()
    os.close(null)


class TapsAppear:
    """os for netlink.py, where a macvtap's device is free when vtopo picks its number, and there once the kernel
    made the macvtap."""

    def __init__(self) -> None:
        self.looked_for: set[str] = set()
        self.path = types.SimpleNamespace(exists=self.exists)

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def exists(self, path: str) -> bool:
        seen = path in self.looked_for
        self.looked_for.add(path)
        return seen


def link(fields: dict[str, Any], *attributes: Any) -> bytes:
    return encoded(ifinfmsg_as_iproute2, fields, list(attributes))


def kind_of(kind: str, *data: Any) -> Any:
    return ("IFLA_LINKINFO", {"attrs": [("IFLA_INFO_KIND", kind), *([("IFLA_INFO_DATA", {"attrs": list(data)})]
                                                                    if data else [])]})


def bridge_vlan(index: int, vid: int, flags: list[str]) -> bytes:
    """A bridge port's VLAN as iproute2's `bridge vlan add|del dev PORT vid N [pvid] [untagged]` sends it."""
    return encoded(ifinfmsg, {"family": socket.AF_BRIDGE, "index": index}, [("IFLA_AF_SPEC", {"attrs": [
        ("IFLA_BRIDGE_VLAN_INFO", {"vid": vid, "flags": flags})]})])


REQUESTS: dict[str, tuple[Callable[[Netlink], Any], list[tuple[str | None, int, int, bytes]]]] = {
    "add a bridge": (
        lambda nl: nl.add_bridge("v1-br0", None, stp=True, forward_delay=400, ageing_time=3050),
        [(None, RTM_NEWLINK, CREATE, link({}, ("IFLA_IFNAME", "v1-br0"), kind_of(
            "bridge", ("IFLA_BR_STP_STATE", 1), ("IFLA_BR_FORWARD_DELAY", 400), ("IFLA_BR_AGEING_TIME", 3050))))]),
    "add a bridge filtering VLANs": (
        lambda nl: nl.add_bridge("v1-br0", None, stp=False, forward_delay=0, ageing_time=30000, vlan_filtering=True),
        [(None, RTM_NEWLINK, CREATE, link({}, ("IFLA_IFNAME", "v1-br0"), kind_of(
            "bridge", ("IFLA_BR_STP_STATE", 0), ("IFLA_BR_FORWARD_DELAY", 0), ("IFLA_BR_AGEING_TIME", 30000),
            ("IFLA_BR_VLAN_FILTERING", 1))))]),
    "a bridge port's access VLAN, untagged": (
        lambda nl: nl.set_bridge_vlan("v1-br0-p1", None, 10, pvid=True, untagged=True),
        [(None, RTM_SETLINK, CHANGE, bridge_vlan(13, 10, ["pvid", "untagged"]))]),
    "a trunk's VLAN, tagged": (
        lambda nl: nl.set_bridge_vlan("v1-br0-p1", None, 4094),
        [(None, RTM_SETLINK, CHANGE, bridge_vlan(13, 4094, []))]),
    "a bridge port's default VLAN deleted": (
        lambda nl: nl.set_bridge_vlan("v1-br0-p1", None, 1, present=False),
        [(None, RTM_DELLINK, CHANGE, bridge_vlan(13, 1, []))]),
    "add a veth within a namespace": (
        lambda nl: nl.add_veth("a", "v1-c1", "b", "v1-c1"),
        [("v1-c1", RTM_NEWLINK, CREATE, link({}, ("IFLA_IFNAME", "a"), kind_of(
            "veth", ("VETH_INFO_PEER", {"attrs": [("IFLA_IFNAME", "b")]}))))]),
    "add a veth from the host into a namespace, through the host's socket": (
        lambda nl: nl.add_veth("v1-br0-p1", None, "eth0", "v1-c1"),
        [(None, RTM_NEWLINK, CREATE, link({}, ("IFLA_IFNAME", "v1-br0-p1"), kind_of(
            "veth", ("VETH_INFO_PEER", {"attrs": [("IFLA_IFNAME", "eth0"), ("IFLA_NET_NS_FD", NETNS_FD)]}))))]),
    "add a veth from a namespace to the host, through the host's socket": (
        lambda nl: nl.add_veth("eth0", "v1-c1", "v1-br0-p1", None),
        [(None, RTM_NEWLINK, CREATE, link({}, ("IFLA_IFNAME", "v1-br0-p1"), kind_of(
            "veth", ("VETH_INFO_PEER", {"attrs": [("IFLA_IFNAME", "eth0"), ("IFLA_NET_NS_FD", NETNS_FD)]}))))]),
    "add a veth between two namespaces": (
        lambda nl: nl.add_veth("eth1", "v1-c1", "eth1", "v1-c2"),
        [("v1-c1", RTM_NEWLINK, CREATE, link({}, ("IFLA_IFNAME", "eth1"), kind_of(
            "veth", ("VETH_INFO_PEER", {"attrs": [("IFLA_IFNAME", "eth1"), ("IFLA_NET_NS_FD", NETNS_FD)]}))))]),
    "add a macvlan into a namespace": (
        lambda nl: nl.add_macvlan("eth0", "v1-c1", "lower", None, "vepa"),
        [(None, RTM_NEWLINK, CREATE, link({}, ("IFLA_IFNAME", "eth0"), ("IFLA_LINK", 3), kind_of(
            "macvlan", ("IFLA_MACVLAN_MODE", 2)), ("IFLA_NET_NS_FD", NETNS_FD)))]),
    "add an 802.1Q VLAN device beside its parent in a namespace": (
        lambda nl: nl.add_vlan("eth0.10", "v1-r1", "eth0", 10),
        [("v1-r1", RTM_NEWLINK, CREATE, link({}, ("IFLA_IFNAME", "eth0.10"), ("IFLA_LINK", 5), kind_of(
            "vlan", ("IFLA_VLAN_ID", 10))))]),
    "add an 802.1Q VLAN device in the host's namespace": (
        lambda nl: nl.add_vlan("v1-h1-eth0.4094", None, "v1-h1-eth0", 4094),
        [(None, RTM_NEWLINK, CREATE, link({}, ("IFLA_IFNAME", "v1-h1-eth0.4094"), ("IFLA_LINK", 7), kind_of(
            "vlan", ("IFLA_VLAN_ID", 4094))))]),
    "add a macvtap with the ifindex vtopo picks": (
        lambda nl: nl.add_macvtap("v1-vm-0", "lower", None, "bridge"),
        [(None, RTM_GETLINK, DUMP, link({})),
         (None, RTM_NEWLINK, CREATE, link({"index": 5}, ("IFLA_IFNAME", "v1-vm-0"), ("IFLA_LINK", 3), kind_of(
             "macvtap", ("IFLA_MACVTAP_MODE", 4))))]),
    "move a link into a namespace under a new name": (
        lambda nl: nl.move_link("v1-sw-p1", "v1-c1", "eth0"),
        [(None, RTM_NEWLINK, CHANGE, link({"index": 21}, ("IFLA_IFNAME", "eth0"), ("IFLA_NET_NS_FD", NETNS_FD)))]),
    "delete a link": (
        lambda nl: nl.delete_link("eth0", "v1-c1"),
        [("v1-c1", RTM_DELLINK, CHANGE, link({}, ("IFLA_IFNAME", "eth0")))]),
    "set a bridge port's master": (
        lambda nl: nl.set_master("v1-br0-p1", None, "v1-br0"),
        [(None, RTM_NEWLINK, CHANGE, link({}, ("IFLA_IFNAME", "v1-br0-p1"), ("IFLA_MASTER", 12)))]),
    "release a bridge port": (
        lambda nl: nl.set_master("v1-br0-p1", None, None),
        [(None, RTM_NEWLINK, CHANGE, link({}, ("IFLA_IFNAME", "v1-br0-p1"), ("IFLA_MASTER", 0)))]),
    "hairpin off": (
        lambda nl: nl.set_hairpin("v1-br0-p1", None, False),
        [(None, RTM_NEWLINK, CHANGE, link({}, ("IFLA_IFNAME", "v1-br0-p1"), ("IFLA_LINKINFO", {"attrs": [
            ("IFLA_INFO_SLAVE_KIND", "bridge"), ("IFLA_INFO_SLAVE_DATA", {"attrs": [("IFLA_BRPORT_MODE", 0)]})]})))]),
    "a link's MTU, MAC and alias, brought up": (
        lambda nl: nl.set_link("eth0", "v1-c1", mtu=1400, mac="02:00:00:00:00:01", alias="vtopo:v1", up=True),
        [("v1-c1", RTM_NEWLINK, CHANGE, link({"flags": IFF_UP, "change": IFF_UP}, ("IFLA_IFNAME", "eth0"),
                                             ("IFLA_MTU", 1400), ("IFLA_ADDRESS", "02:00:00:00:00:01"),
                                             ("IFLA_IFALIAS", b"vtopo:v1")))]),
    "a link set down, its alias cleared": (
        lambda nl: nl.set_link("eth0", None, alias="", up=False),
        [(None, RTM_NEWLINK, CHANGE, link({"change": IFF_UP}, ("IFLA_IFNAME", "eth0"), ("IFLA_IFALIAS", b"")))]),
    "an IPv4 address": (
        lambda nl: nl.add_address("eth0", "v1-c1", "10.0.0.1/24", nodad=False),
        [("v1-c1", RTM_NEWADDR, CREATE, encoded(ifaddrmsg, {"family": socket.AF_INET, "prefixlen": 24, "index": 5},
                                                [("IFA_ADDRESS", "10.0.0.1"), ("IFA_LOCAL", "10.0.0.1")]))]),
    "an IPv6 address without duplicate address detection": (
        lambda nl: nl.add_address("eth0", "v1-c1", "2001:db8::1/64", nodad=True),
        [("v1-c1", RTM_NEWADDR, CREATE, encoded(ifaddrmsg, {"family": socket.AF_INET6, "prefixlen": 64, "index": 5,
                                                            "flags": wire.IFA_F_NODAD}, [("IFA_ADDRESS", "2001:db8::1")]))]),
    "an IPv6 address with duplicate address detection": (
        lambda nl: nl.add_address("eth0", None, "2001:db8::2/64", nodad=False),
        [(None, RTM_NEWADDR, CREATE, encoded(ifaddrmsg, {"family": socket.AF_INET6, "prefixlen": 64, "index": 5},
                                             [("IFA_ADDRESS", "2001:db8::2")]))]),
    "a default route": (
        lambda nl: nl.add_route("v1-c1", "default", "10.0.0.254", protocol=RouteProtocol.STATIC),
        [("v1-c1", RTM_NEWROUTE, CREATE, encoded(rtmsg, {"family": socket.AF_INET, "table": 254, "proto": 4,
                                                         "type": 1}, [("RTA_GATEWAY", "10.0.0.254")]))]),
    "a route to a network": (
        lambda nl: nl.add_route(None, "198.51.100.0/24", "10.0.0.253", protocol=RouteProtocol.BOOT),
        [(None, RTM_NEWROUTE, CREATE, encoded(rtmsg, {"family": socket.AF_INET, "dst_len": 24, "table": 254,
                                                      "proto": 3, "type": 1},
                                              [("RTA_GATEWAY", "10.0.0.253"), ("RTA_DST", "198.51.100.0")]))]),
    "an IPv6 route via a link-local gateway out of a device": (
        lambda nl: nl.add_route("v1-c1", "2001:db8:1::/64", "fe80::1", "eth0", protocol=RouteProtocol.STATIC),
        [("v1-c1", RTM_NEWROUTE, CREATE, encoded(rtmsg, {"family": socket.AF_INET6, "dst_len": 64, "table": 254,
                                                         "proto": 4, "type": 1},
                                                 [("RTA_GATEWAY", "fe80::1"), ("RTA_DST", "2001:db8:1::"),
                                                  ("RTA_OIF", 5)]))]),
    "a dump of every link": (
        lambda nl: nl.links("v1-c1"),
        [("v1-c1", RTM_GETLINK, DUMP, link({}))]),
    "a dump of every link's 64-bit counters": (
        lambda nl: netlink.link_counters("v1-c1"),
        [("counted", RTM_GETSTATS, DUMP, encoded(ifstatsmsg, {"filter_mask": 1}, []))]),
}


@pytest.mark.parametrize("request_shape", REQUESTS, ids=list(REQUESTS))
def test_every_request_netlink_sends_is_pyroute2s(request_shape: str, sent: tuple[Netlink, Sent]) -> None:
    nl, recorder = sent
    send, expected = REQUESTS[request_shape]
    send(nl)
    assert [(netns, kind, flags, payload.hex()) for netns, kind, flags, payload in recorder.requests] == [
        (netns, kind, flags, payload.hex()) for netns, kind, flags, payload in expected]


def test_a_reply_of_64_bit_counters_is_read_as_pyroute2_reads_it() -> None:
    """A reply to a dump of the counters, as pyroute2 encodes it: its interface's index, and its octets and packets,
    both directions added."""
    reply = ifstatsmsg()
    reply["ifindex"] = 7
    reply["filter_mask"] = 1
    reply["attrs"] = [("IFLA_STATS_LINK_64", {"rx_packets": 3, "tx_packets": 5, "rx_bytes": 2**40, "tx_bytes": 11})]
    reply.encode()
    assert wire.link_stats_64(bytes(reply.data)) == (7, (2**40 + 11, 8))


def test_64_bit_counters_after_the_padding_some_kernels_put_first_are_read_too() -> None:
    """Where a kernel aligns 64-bit attributes (no efficient unaligned access), a pad attribute comes first."""
    reply = ifstatsmsg()
    reply["ifindex"] = 9
    reply["filter_mask"] = 1
    reply["attrs"] = [("IFLA_STATS_UNSPEC", None),
                      ("IFLA_STATS_LINK_64", {"rx_packets": 1, "tx_packets": 2, "rx_bytes": 30, "tx_bytes": 40})]
    reply.encode()
    assert wire.link_stats_64(bytes(reply.data)) == (9, (70, 3))


def counters_reply(index: int, padded: bool = False) -> bytes:
    reply = ifstatsmsg()
    reply["ifindex"] = index
    reply["filter_mask"] = 1
    reply["attrs"] = [*([("IFLA_STATS_UNSPEC", None)] if padded else []),
                      ("IFLA_STATS_LINK_64", {"rx_packets": index, "tx_packets": 2**33 + index, "rx_bytes": 3 * index,
                                              "tx_bytes": 2**50})]
    reply.encode()
    return bytes(reply.data)


@pytest.mark.parametrize("padded", [False, True], ids=["as a kernel writes them", "each after a pad"])
def test_a_run_of_counters_replies_is_read_as_each_reply_is(padded: bool) -> None:
    """A read of a dump's replies, each field read over them all at once, gives what each reply gives alone."""
    replies = [counters_reply(index, padded) for index in range(1, 300)]
    run = memoryview(bytearray(b"".join(replies)))
    assert wire.link_stats_64_run(run, len(replies[0])) == dict(wire.link_stats_64(reply) for reply in replies)


def test_a_dump_of_the_hosts_counters_has_every_interface() -> None:
    """The replies a read holds are taken as one run, and the dump's end is found after them."""
    assert netlink.link_counters(None).keys() == {index for index, _ in socket.if_nameindex()}
