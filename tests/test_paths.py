"""The path between two nodes, as the measure panel and `vtopo iperf` describe it."""
from __future__ import annotations

import pytest

from vtopo.compile.analysis import describe_path
from vtopo.deployed import DeployedLab
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.resources import TOPOLOGIES


def path(lab: str, source: str, destination: str) -> str:
    context = resolve(open_lab(TOPOLOGIES / f"{lab}.vtopo").topology, registry()).valid().lab
    ids = {node.node.name: node_id for node_id, node in context.nodes.items()}
    return describe_path(context, ids[source], ids[destination])


@pytest.mark.parametrize(("lab", "source", "destination", "expected"), [
    ("bridge-veth", "c1", "c2", "veth → br0 → veth"),
    ("vm-tap-vs-macvtap", "host", "vm1", "br0 (host address) → tap"),
    ("vm-tap-vs-macvtap", "vm1", "host", "tap → br0 (host address)"),
    ("host-routed-bridges", "c1", "c3", "veth → br1 → the host routes → br2 → veth"),
])
def test_paths_read_as_a_student_would_say_them(lab: str, source: str, destination: str, expected: str) -> None:
    assert path(lab, source, destination) == expected


def test_a_routed_path_names_the_routers() -> None:
    described = path("l2-vs-l3", "h1", "h3")
    assert "r1" in described and "r2" in described


def test_a_vm_behind_a_numbered_bridge_aims_at_the_hosts_address_on_it() -> None:
    lab = DeployedLab(resolve(open_lab(TOPOLOGIES / "vm-tap-vs-macvtap.vtopo").topology, registry()).valid().lab)
    assert lab.target_address("vm1", "host") == ("10.0.10.1", "same segment")
    assert lab.target_address("vm2", "host") == ("10.0.11.1", "same segment")
    assert lab.target_address("host", "vm1") == ("10.0.10.2", "same segment")
