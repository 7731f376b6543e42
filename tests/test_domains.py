"""Broadcast domains of every shipped lab against golden files, and the student mistakes they reveal."""
from __future__ import annotations

from dataclasses import replace

import pytest

from golden import GOLDEN, assert_golden
from vtopo.lab_terms import HostFacts
from vtopo.compile.broadcast_domains import broadcast_domains_of, domain_problems
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.model.topology import Topology
from vtopo.resources import TOPOLOGIES

LABS = sorted(TOPOLOGIES.glob("*.vtopo"))


def describe(topology: Topology) -> str:
    lab = resolve(topology, registry(), HostFacts()).valid().lab
    lines = [domain.describe() for domain in broadcast_domains_of(lab)]
    lines += [str(problem) for problem in domain_problems(lab)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("lab_file", LABS, ids=[p.stem for p in LABS])
def test_domains_match_golden_and_shipped_labs_do_not_warn(lab_file):
    topology = open_lab(lab_file).topology
    assert_golden(GOLDEN / "domains" / f"{lab_file.stem}.txt", describe(topology))
    assert domain_problems(resolve(topology, registry(), HostFacts()).valid().lab) == []


def lab(name: str) -> Topology:
    return open_lab(TOPOLOGIES / f"{name}.vtopo").topology


def readdress(topology: Topology, node: str, address: str) -> None:
    node_id = topology.node_named(node).id
    link = topology.links_of(node_id)[0]
    side, end = ("a", link.a) if link.a.node == node_id else ("b", link.b)
    topology.update_link(link.id, **{side: replace(end.interface, addresses=[address])})


def messages(topology: Topology) -> list[str]:
    return [f"{p.subject}: {p.message}" for p in resolve(topology, registry()).problems if p.severity.value == "warning"]


def test_l2_vs_l3_shows_two_lans_and_the_router_link():
    lines = describe(lab("l2-vs-l3")).splitlines()
    assert lines == ["domain 1: 10.1.0.0/24 via lan1: h1:eth0, h2:eth0, r1:eth0",
                     "domain 2: 10.2.0.0/24 via lan2: h3:eth0, r2:eth0",
                     "domain 3: 10.0.12.0/30: r1:eth1, r2:eth1"]


def test_private_macvlan_children_are_domains_of_their_own():
    assert len(broadcast_domains_of(resolve(lab("macvlan-private"), registry(), HostFacts()).valid().lab)) == 2
    assert len(broadcast_domains_of(resolve(lab("macvlan-bridge"), registry(), HostFacts()).valid().lab)) == 1


def test_an_interface_off_its_domains_subnet_is_named():
    topology = lab("l2-vs-l3")
    readdress(topology, "h2", "10.1.1.11/24")
    found = messages(topology)
    assert any(m.startswith("node h2: h2:eth0 is on 10.1.1.0/24 (10.1.1.11) but the rest of its broadcast domain "
                            "is on 10.1.0.0/24") and "cannot reach h1:eth0, r1:eth0" in m for m in found), found


def test_two_subnets_in_one_domain():
    topology = lab("bridge-veth")
    c3 = topology.node_named("c3").id
    topology.remove_link(topology.links_of(c3)[0].id)
    topology.remove_node(c3)
    readdress(topology, "c2", "10.0.5.2/24")
    assert any("one broadcast domain holds two subnets, 10.0.0.0/24 and 10.0.5.0/24" in m for m in messages(topology))


def test_container_without_default_route_in_a_routed_lab():
    topology = lab("l2-vs-l3")
    topology.update_node(topology.node_named("h3").id, settings={})
    assert any(m.startswith("node h3: h3 has no IPv4 default route") and "10.2.0.1" in m for m in messages(topology))


def test_container_with_no_router_on_its_wire():
    topology = lab("l2-vs-l3")
    lan2 = topology.node_named("lan2").id
    lan_link = next(l for l in topology.links_of(topology.node_named("r2").id) if lan2 in (l.a.node, l.b.node))
    topology.remove_link(lan_link.id)
    found = messages(topology)
    assert any(m.startswith("node h3: no router shares a broadcast domain with h3") for m in found), found


def test_a_routing_bridges_ipv6_address_is_no_gateway_since_the_host_forwards_ipv4_only():
    """The host routes between its numbered bridges by their own IPv4 forwarding sysctl; IPv6 forwarding is the
    host's global setting, which vtopo leaves alone: the bridge says so, and nothing names its IPv6 address as a
    node's gateway."""
    topology = lab("host-routed-bridges")
    for bridge, address in (("br1", "2001:db8:1::1/64"), ("br2", "2001:db8:2::1/64")):
        node = topology.node_named(bridge)
        topology.update_node(node.id, settings={**node.settings,
                                                "host_addresses": [*node.settings["host_addresses"], address]})
    for container, address in (("c1", "2001:db8:1::10/64"), ("c3", "2001:db8:2::10/64")):
        node_id = topology.node_named(container).id
        link = topology.links_of(node_id)[0]
        topology.update_link(link.id, a=replace(link.a.interface, addresses=[*link.a.interface.addresses, address]))
    found = messages(topology)
    assert [m for m in found if "routes IPv4 only" in m] == [
        f"node {bridge}: the host routes IPv4 only: Linux forwards IPv6 only with the host's global setting "
        f"(net.ipv6.conf.all.forwarding), which vtopo leaves alone, so {address} takes no IPv6 packet to another "
        "segment; put a router node between the segments for IPv6"
        for bridge, address in (("br1", "2001:db8:1::1/64"), ("br2", "2001:db8:2::1/64"))], found
    assert not any("2001:db8:1::1" in m and "gateway" in m for m in found), found
