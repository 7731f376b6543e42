"""resolve: a lab in context is a value. Resolving changes nothing it is given, what it hands out cannot be changed,
and a resolved lab dropped is freed at once, with nothing left for the cycle collector."""
from __future__ import annotations

import dataclasses
import gc

import pytest

from cycle_collector import collector_paused
from spread_labs import here, vlans_over_two_sites
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.lab_terms import Trust
from vtopo.model import io
from vtopo.model.sites import Site
from vtopo.resources import TOPOLOGIES

REMOTE = Site("b", "root@198.18.0.2")


def test_resolving_a_lab_spread_over_sites_leaves_the_lab_as_it_was():
    topology = vlans_over_two_sites([here(), REMOTE], "b").topology
    before = io.dumps(topology)
    for site in ("", "b"):
        resolved = resolve(topology, registry(), trust=Trust(site=site, tunnel_vnis=(5000, 5999)))
        compile_plan(resolved)
        assert len(resolved.topology.nodes) > len(topology.nodes)  # the switch split over the sites, on a copy
    assert io.dumps(topology) == before


def test_this_sites_part_leaves_the_whole_lab_in_context_as_it_was():
    resolved = resolve(vlans_over_two_sites([here(), REMOTE], "b").topology, registry(),
                       trust=Trust(tunnel_vnis=(5000, 5999)))
    every_node = set(resolved.lab.nodes)
    part = resolved.this_site
    assert set(part.nodes) < every_node and set(resolved.lab.nodes) == every_node
    assert {end.node.id for end in part.ends} <= set(part.nodes)
    assert all(end.owner.lab is part for end in part.ends)


def test_a_resolved_lab_cannot_be_changed():
    resolved = resolve(open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology, registry())
    with pytest.raises(dataclasses.FrozenInstanceError):
        resolved.problems = ()  # type: ignore[misc]
    assert isinstance(resolved.problems, tuple)


def test_a_resolved_labs_nodes_and_ends_cannot_be_changed():
    resolved = resolve(open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology, registry())
    node, end = next(iter(resolved.lab.nodes.values())), resolved.lab.ends[0]
    part = resolved.this_site
    for context, field in ((node, "settings"), (end, "device"), (end, "peer"), (resolved.lab, "nodes"),
                           (part.ends[0], "medium")):
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to {field} of this .*frozen once "
                                                                  "resolved"):
            setattr(context, field, getattr(context, field))
    assert end.device and node.ends


def test_a_dropped_resolved_lab_is_freed_without_the_cycle_collector():
    topology = open_lab(TOPOLOGIES / "l2-vs-l3.vtopo").topology
    compile_plan(resolve(topology, registry()))  # the first compile in a process loads NetworkX
    with collector_paused():
        resolved = resolve(topology, registry())
        assert resolved.lab.nodes and compile_plan(resolved).steps
        del resolved
        assert gc.collect() < 40  # NetworkX's few views of the emptied graphs


def test_a_node_read_after_its_lab_was_dropped_says_what_to_hold():
    node = next(iter(resolve(open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology, registry()).lab.nodes.values()))
    with pytest.raises(ReferenceError, match="hold the lab in context"):
        _ = node.names
