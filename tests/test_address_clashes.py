"""A pasted copy keeps the original's addresses: the lab then uses an address twice, and routes a subnet on two
wires. Both are warnings naming the interfaces; a subnet split on purpose (private macvlan, OpenFlow) is not."""
from __future__ import annotations

from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.model.fragment import fragment_of, instantiate
from vtopo.model.topology import Position
from vtopo.resources import TOPOLOGIES


def pasted(lab: str, names: set[str]) -> list[str]:
    topology = open_lab(TOPOLOGIES / f"{lab}.vtopo").topology
    ids = {node.id for node in topology.nodes.values() if node.name in names}
    copy = instantiate(fragment_of(topology, ids, set()), {n.name for n in topology.nodes.values()},
                       Position(400, 400))
    for node in copy.nodes:
        topology.add_node(node)
    for link in copy.links:
        topology.add_link(link)
    return [problem.message for problem in resolve(topology, registry()).problems]


def test_a_pasted_host_and_bridge_use_their_addresses_twice() -> None:
    messages = pasted("bridge-veth", {"c1", "br0"})
    assert any(m.startswith("address 10.0.0.1 is used twice in the lab, by c1:eth0 and c4:eth0") for m in messages), \
        messages


def test_pasted_routers_route_their_subnet_on_two_wires() -> None:
    messages = pasted("l2-vs-l3", {"r1", "r2"})
    assert any(" is routed on 2 wires (" in m for m in messages), messages


def test_a_subnet_split_on_purpose_is_not_flagged() -> None:
    for lab in ("macvlan-private", "ovs-openflow"):
        topology = open_lab(TOPOLOGIES / f"{lab}.vtopo").topology
        assert not [p for p in resolve(topology, registry()).problems if "used twice" in p.message or "routed on" in p.message]
