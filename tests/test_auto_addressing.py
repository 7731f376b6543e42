"""Automatic addressing: the pool a lab sets, read and written, and the addresses and gateways new links take."""
from __future__ import annotations

import pytest

from vtopo.compile.auto_addressing import address_links, apply_edits
from vtopo.compile.resolve import resolve
from vtopo.kinds.registry import load_registry
from vtopo.model import io
from vtopo.model.addressing import AddressPool
from vtopo.model.allocation import NodeRole, Port, allocate
from vtopo.model.problems import LabError, Severity
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology
from vtopo.resources import TOPOLOGIES

POOL = AddressPool(ipv4="10.0.0.0/16")


def port(link: str, side: str, node: str, *addresses: str, switch: bool = False) -> Port:
    return Port(link, side, node, addresses, addressed=not switch, switch=switch)


def test_a_router_router_link_takes_the_pools_first_free_subnet():
    taken = [port("old", "a", "x", "10.0.0.1/24"), port("old", "b", "y", "10.0.0.2/24")]
    new = [port("l1", "a", "r1"), port("l1", "b", "r2")]
    allocation = allocate(POOL, taken + new, {}, ["l1"])
    assert allocation.addresses == {("l1", "a"): ["10.0.1.1/24"], ("l1", "b"): ["10.0.1.2/24"]}


def test_a_full_lan_says_so():
    ports = [port("l1", "a", "h1", "10.0.0.1/30"), port("l1", "b", "sw", switch=True),
             port("l2", "a", "h2", "10.0.0.2/30"), port("l2", "b", "sw", switch=True),
             port("l3", "a", "h3"), port("l3", "b", "sw", switch=True)]
    allocation = allocate(POOL, ports, {}, ["l3"])
    assert allocation.empty and allocation.shortages == ["the LAN's subnet 10.0.0.0/30 is full"]


def test_a_new_subnet_overlaps_no_network_of_the_lab_however_wide():
    wide = [port("old", "a", "x", "10.0.0.1/23"), port("old", "b", "y", "10.0.2.9/30")]
    new = [port("l1", "a", "r1"), port("l1", "b", "r2")]
    assert allocate(POOL, wide + new, {}, ["l1"]).addresses[("l1", "a")] == ["10.0.3.1/24"]
    covering = [port("old", "a", "x", "10.0.0.1/8"), port("old", "b", "y", "10.0.0.2/8")]
    assert allocate(POOL, covering + new, {}, ["l1"]).shortages == ["the pool 10.0.0.0/16 has no free /24 subnet left"] * 2


def test_a_host_joining_a_switch_takes_its_lans_subnet_and_the_next_free_host_address():
    ports = [port("l1", "a", "h1", "10.0.5.1/24"), port("l1", "b", "sw", switch=True),
             port("l2", "a", "sw", switch=True), port("l2", "b", "sw2", switch=True),  # a LAN over two switches
             port("l3", "a", "sw2", switch=True), port("l3", "b", "h2", "10.0.5.2/24"),
             port("l4", "a", "sw2", switch=True), port("l4", "b", "h3")]
    assert allocate(POOL, ports, {}, ["l4"]).addresses == {("l4", "b"): ["10.0.5.3/24"]}


def test_a_router_joining_a_lan_becomes_the_gateway_of_its_hosts_that_have_none():
    ports = [port("l1", "a", "h1", "10.0.0.1/24"), port("l1", "b", "sw", switch=True),
             port("l2", "a", "h2", "10.0.0.2/24"), port("l2", "b", "sw", switch=True),
             port("l3", "a", "r1"), port("l3", "b", "sw", switch=True)]
    roles = {"h1": NodeRole(gateway=""), "h2": NodeRole(gateway="10.0.0.254"), "r1": NodeRole(routes=True)}
    allocation = allocate(POOL, ports, roles, ["l3"])
    assert allocation.addresses == {("l3", "a"): ["10.0.0.3/24"]}
    assert allocation.gateways == {"h1": "10.0.0.3"}  # h2 keeps the gateway it has


def test_both_pools_give_an_address_each_and_an_exhausted_pool_says_so():
    pool = AddressPool(ipv4="192.168.0.0/30", ipv4_prefix=30, ipv6="fd00::/48")
    ports = [port("l1", "a", "r1"), port("l1", "b", "r2"), port("l2", "a", "r1"), port("l2", "b", "r3")]
    allocation = allocate(pool, ports, {}, ["l1", "l2"])
    assert allocation.addresses[("l1", "a")] == ["192.168.0.1/30", "fd00::1/64"]
    assert allocation.addresses[("l2", "b")] == ["fd00:0:0:1::2/64"]
    assert allocation.shortages == ["the pool 192.168.0.0/30 has no free /30 subnet left"] * 2


def test_an_end_with_addresses_or_on_dhcp_and_a_lab_without_a_pool_are_left_alone():
    ports = [port("l1", "a", "r1", "192.0.2.1/24"), Port("l1", "b", "h1", (), addressed=False, switch=False)]
    assert allocate(POOL, ports, {}, ["l1"]).empty
    assert allocate(AddressPool(), [port("l2", "a", "r1"), port("l2", "b", "r2")], {}, ["l2"]).empty


@pytest.mark.parametrize("addressing, message", [
    ({"ipv4": "10.0.0.1/16"}, "at $.lab.addressing.ipv4: 10.0.0.1/16 has host bits set; the network is 10.0.0.0/16"),
    ({"ipv4": "fd00::/48"}, "at $.lab.addressing.ipv4: fd00::/48 is an IPv6 network, not an IPv4 one"),
    ({"ipv4": "lan"}, "at $.lab.addressing.ipv4: 'lan' is not an IPv4 network such as 10.0.0.0/16"),
    ({"ipv4": "10.0.0.0/16", "ipv4_prefix": 8}, "at $.lab.addressing.ipv4_prefix: the subnets of 10.0.0.0/16 must "
                                                "have a prefix from /16 to /30, not /8"),
    ({"ipv6_prefix": 64}, "at $.lab.addressing: addressing needs a pool"),
    ({"ipv4": "10.0.0.0/16", "prefix": 24}, "at $.lab.addressing.prefix: addressing has no field 'prefix'"),
    ({"ipv4": 10}, "at $.lab.addressing.ipv4: ipv4 must be a string, not a number"),
])
def test_a_wrong_pool_is_one_line_naming_its_field(addressing, message):
    document = io.to_document(Topology("lab"))
    document["lab"]["addressing"] = addressing
    with pytest.raises(LabError) as raised:
        io.from_document(document)
    assert len(raised.value.problems) == 1
    assert message in str(raised.value.problems[0])


def test_the_pool_survives_save_and_load():
    lab = Topology("lab", addressing=AddressPool(ipv4="10.9.0.0/16", ipv4_prefix=26, ipv6="fd00:9::/48"))
    text = io.dumps(lab)
    assert '"addressing": {\n      "ipv4": "10.9.0.0/16",\n      "ipv4_prefix": 26,' in text
    assert io.loads(text).addressing == lab.addressing
    assert "addressing" not in io.dumps(Topology("plain"))


def test_a_trunk_with_subinterfaces_takes_no_address_of_its_own():
    lab = io.load(TOPOLOGIES / "router-on-a-stick.vtopo")
    lab.addressing = POOL
    assert address_links(lab, load_registry(), list(lab.links)).empty


def two_lans_and_a_router() -> Topology:
    lab = Topology("lab", prefix="aa", addressing=POOL)
    for name, kind in (("h1", "container"), ("h2", "container"), ("br1", "bridge"), ("br2", "bridge"),
                       ("r1", "router")):
        lab.add_node(Node(name, name, kind))
    for number, (a, a_port, b, b_port) in enumerate((("h1", "eth0", "br1", "p1"), ("r1", "eth0", "br1", "p2"),
                                                      ("h2", "eth0", "br2", "p1"), ("r1", "eth1", "br2", "p2"))):
        lab.add_link(Link(f"l{number}", Endpoint(a, a_port), Endpoint(b, b_port)))
        apply_edits(lab, address_links(lab, load_registry(), [f"l{number}"]))
    return lab


def test_two_lans_drawn_link_by_link_are_addressed_and_routed_with_no_problem():
    lab = two_lans_and_a_router()
    addresses = {f"{link.a.node}:{link.a.port}": link.a.interface.addresses for link in lab.links.values()}
    assert addresses == {"h1:eth0": ["10.0.0.1/24"], "r1:eth0": ["10.0.0.2/24"], "h2:eth0": ["10.0.1.1/24"],
                         "r1:eth1": ["10.0.1.2/24"]}
    assert [lab.nodes[h].settings for h in ("h1", "h2")] == [{"default_route": "10.0.0.2"},
                                                            {"default_route": "10.0.1.2"}]
    assert [p for p in resolve(lab, load_registry()).problems if p.severity is Severity.ERROR] == []
    assert not [link.b.interface.addresses for link in lab.links.values() if link.b.interface.addresses]


def test_vtopo_address_fills_in_only_the_missing_addresses(tmp_path, capsys):
    from vtopo.cli.main import main

    lab = two_lans_and_a_router()
    lab.update_link("l0", a=Interface())
    lab.update_link("l3", a=Interface())
    path = tmp_path / "lab.vtopo"
    io.save(lab, path)
    assert main(["address", str(path)]) == 0
    addressed = io.load(path)
    assert addressed.links["l0"].a.interface.addresses == ["10.0.0.1/24"]
    assert addressed.links["l3"].a.interface.addresses == ["10.0.1.2/24"]
    assert "gave 2 link ends addresses" in capsys.readouterr().out
