"""Copy and paste without a screen: a fragment keeps the links inside a selection and pastes as fresh nodes."""
from __future__ import annotations

from vtopo.model.fragment import Fragment, fragment_of, instantiate
from vtopo.model.topology import Endpoint, Link, Node, Position, Topology


def test_a_pasted_fragment_has_new_ids_new_names_and_its_inner_links():
    topology = Topology(name="lab")
    for name in ("c1", "c2", "r1"):
        topology.add_node(Node(id=f"id-{name}", name=name, kind="container", position=Position(10, 20)))
    topology.add_link(Link(id="in", a=Endpoint("id-c1", "eth0"), b=Endpoint("id-c2", "eth0")))
    topology.add_link(Link(id="out", a=Endpoint("id-c2", "eth1"), b=Endpoint("id-r1", "eth0")))
    fragment = Fragment.loads(fragment_of(topology, {"id-c1", "id-c2"}, set()).dumps())
    assert fragment is not None and [link.id for link in fragment.links] == ["in"]
    pasted = instantiate(fragment, {n.name for n in topology.nodes.values()}, Position(5, 5))
    assert [n.name for n in pasted.nodes] == ["c3", "c4"]
    assert {n.id for n in pasted.nodes}.isdisjoint(topology.nodes) and pasted.nodes[0].position == Position(15, 25)
    [link] = pasted.links
    assert (link.a.node, link.b.node) == (pasted.nodes[0].id, pasted.nodes[1].id) and link.id != "in"
