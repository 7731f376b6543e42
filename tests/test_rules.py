"""The shared rules: the editor and the compiler ask the same function, so they agree."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model.rules import is_valid_node_name, lab_tag, link_refusal
from vtopo.model.topology import Endpoint, Link, Node, Topology


@dataclass(frozen=True)
class FirewallLike:
    """A third-party kind that lists the container, while the container does not list it."""

    name: str = "firewall"
    connects_to: frozenset[str] = frozenset({"container"})
    connect_hint: str = ""


def test_a_link_is_allowed_when_either_kind_lists_the_other():
    container = registry().kinds["container"]
    assert "firewall" not in container.connects_to
    assert link_refusal(FirewallLike(), container) == ""
    assert link_refusal(container, FirewallLike()) == ""


def test_the_compiler_refuses_exactly_the_pairs_the_rule_refuses():
    kinds = registry().kinds
    for a, b in itertools.product(sorted(kinds), repeat=2):
        topology = Topology(name="pair")
        topology.add_node(Node(id="a", name="a", kind=a))
        topology.add_node(Node(id="b", name="b", kind=b))
        topology.add_link(Link(id="l", a=Endpoint("a", kinds[a].ports.name(kinds[a].ports.first)),
                               b=Endpoint("b", kinds[b].ports.name(kinds[b].ports.first))))
        refused = [p.message for p in resolve(topology, registry()).problems if "cannot be linked" in p.message]
        assert refused == ([link_refusal(kinds[a], kinds[b])] if link_refusal(kinds[a], kinds[b]) else []), (a, b)


def test_names_and_tags():
    assert is_valid_node_name("r1") and is_valid_node_name("lan-a_2")
    assert not is_valid_node_name("-r") and not is_valid_node_name("r 1") and not is_valid_node_name("")
    assert lab_tag("vt1a2") == "vtopo:vt1a2"
