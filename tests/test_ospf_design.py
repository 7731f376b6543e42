"""OSPF's design rules on variations of the teaching lab: what breaks a lab is an error naming the routers, areas and
links; what OSPF allows passes. The broken labs, one per rule, are in golden/invalid/ospf-*.vtopo."""
from __future__ import annotations

from vtopo.lab_terms import HostFacts
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.model.problems import errors_in
from vtopo.model.topology import Topology
from vtopo.resources import TOPOLOGIES


def teaching_lab() -> Topology:
    return open_lab(TOPOLOGIES / "l2-vs-l3.vtopo").topology


def set_router(topology: Topology, name: str, **settings: object) -> None:
    node = topology.node_named(name)
    topology.update_node(node.id, settings={**node.settings, **settings})


def errors(topology: Topology) -> list[str]:
    return [str(p) for p in errors_in(resolve(topology, registry(), HostFacts()).problems)]


def test_a_stub_area_behind_an_area_border_router_is_valid():
    topology = teaching_lab()
    set_router(topology, "r1", areas={"eth1": "1"})
    set_router(topology, "r2", areas={"eth0": "1", "eth1": "1"})  # r2 inside area 1, r1 its ABR
    assert errors(topology) == []


def test_one_area_that_is_not_the_backbone_needs_no_abr():
    topology = teaching_lab()
    set_router(topology, "r1", areas={"eth0": "1", "eth1": "1"})
    set_router(topology, "r2", areas={"eth0": "1", "eth1": "1"})
    assert errors(topology) == []


def test_a_router_in_two_areas_without_the_backbone_and_each_area_cut_off():
    topology = teaching_lab()
    set_router(topology, "r1", areas={"eth0": "2", "eth1": "1"})
    set_router(topology, "r2", areas={"eth0": "1", "eth1": "1"})
    found = errors(topology)
    assert any(e.startswith("error: node r1: r1 has ports in 2 areas (area 0.0.0.1: eth1; area 0.0.0.2: eth0) and "
                            "none in area 0") for e in found), found
    assert any(e.startswith("error: link r1:eth1-r2:eth1: area 0.0.0.1 (r1, r2) does not touch area 0") for e in found)
    assert any(e.startswith("error: link r1:eth0-lan1:p3: area 0.0.0.2 (r1) does not touch area 0") for e in found)


def test_timers_must_match_only_where_hellos_are_sent():
    topology = teaching_lab()
    set_router(topology, "r2", hello_interval=10, dead_interval=40)
    [found] = errors(topology)
    assert found.startswith("error: link r1:eth1-r2:eth1: OSPF timers differ on one link: r1:eth1 says hello 1 s, "
                            "dead 4 s, and r2:eth1 hello 10 s, dead 40 s")
    set_router(topology, "r2", passive=["eth0", "eth1"])  # no hellos on a passive port: nothing to agree on
    assert errors(topology) == []


def test_an_area_joined_only_through_a_passive_port_is_cut_off():
    topology = teaching_lab()
    set_router(topology, "r1", areas={"eth1": "1"}, passive=["eth0", "eth1"])
    set_router(topology, "r2", areas={"eth0": "1", "eth1": "1"})
    assert any("area 0.0.0.1 (r2) does not touch area 0" in e for e in errors(topology))


def test_a_wrong_mask_on_a_router_link_warns_and_a_wrong_subnet_is_an_error():
    topology = teaching_lab()
    link = topology.links["r1-eth1--r2-eth1"]
    topology.update_link(link.id, b=type(link.b.interface)(addresses=["10.0.12.2/24"]))
    problems = resolve(topology, registry(), HostFacts()).problems
    assert errors_in(problems) == []
    [warning] = [str(p) for p in problems]
    assert warning.startswith("warning: node r2: r2:eth1 has 10.0.12.2/24 where the rest of its broadcast domain is "
                              "on 10.0.12.0/30: they still reach each other")
    topology.update_link(link.id, b=type(link.b.interface)(addresses=["10.0.21.2/30"]))
    [error] = errors(topology)
    assert "10.0.12.0/30 and 10.0.21.0/30" in error and "routers on different subnets never become neighbours" in error
