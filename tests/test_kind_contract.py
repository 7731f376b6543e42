"""What the core knows about a kind, it learns from the kind's contract, not from the kind's name."""
from __future__ import annotations

import pytest

from vtopo.gui.document.naming import stem_for
from vtopo.gui.console.terminal import shell_for
from vtopo.compile.resolve import resolve
from vtopo.kinds.contract import RunsMachine
from vtopo.lab import registry
from vtopo.model.topology import Endpoint, Link, Node, Topology


def two_switches_twice(kind: str, **settings: object) -> Topology:
    topology = Topology(name="loop")
    for name in ("s1", "s2"):
        topology.add_node(Node(id=name, name=name, kind=kind, settings=dict(settings)))
    for port in (1, 2):
        topology.add_link(Link(id=f"l{port}", a=Endpoint("s1", f"p{port}"), b=Endpoint("s2", f"p{port}")))
    return topology


def loop_warnings(topology: Topology) -> list[str]:
    return [p.message for p in resolve(topology, registry()).problems if "form a loop" in p.message]


def test_a_loop_of_bridges_without_stp_is_told_to_turn_stp_on():
    [warning] = loop_warnings(two_switches_twice("bridge"))
    assert warning.endswith("Turn STP on for these bridges.")
    assert not loop_warnings(two_switches_twice("bridge", stp=True))


def test_a_loop_of_ovs_switches_is_not_told_to_turn_on_a_setting_ovs_lacks():
    [warning] = loop_warnings(two_switches_twice("ovs"))
    assert "STP on" not in warning
    assert "s1, s2 cannot run STP: take a link out of the loop." in warning


@pytest.mark.parametrize("kind, stem, shell", [("router", "r", ["vtysh"]), ("container", "c", ["bash"]),
                                                ("bridge", "br", ["bash"]), ("macvlan", "mvl", ["bash"]),
                                                ("vm", "vm", ["bash"])])
def test_name_stem_and_shell_come_from_the_kind(kind, stem, shell):
    assert stem_for(registry().kinds[kind]) == stem
    assert shell_for(registry().kinds[kind]) == shell


def test_only_vms_make_the_host_probe_for_acceleration():
    assert {name for name, kind in registry().kinds.items() if isinstance(kind, RunsMachine)} == {"vm"}
