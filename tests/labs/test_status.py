"""`vtopo status` compares the plan with what exists, and exits non-zero unless the whole lab is up."""
from __future__ import annotations

import subprocess
import sys

import pytest

from crashes import deploy_killed_at_call
from residue import snapshot
from vtopo import ops as o
from vtopo.host.cleanup import cleanup
from vtopo.host.deployer import Deployer, lab_owner
from vtopo.lab_terms import Trust
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

LAB = TOPOLOGIES / "bridge-veth.vtopo"


def status(lab: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vtopo", "status", lab], capture_output=True, text=True, timeout=60)


def test_status_of_a_running_lab_says_running_for_every_node_and_link(deployed):
    lab = deployed("bridge-veth")
    shown = status("bridge-veth")
    assert shown.returncode == 0, shown.stdout
    parts = len(lab.topology.nodes) + len(lab.topology.links)
    assert shown.stdout.splitlines()[0].endswith(": running") and shown.stdout.count(" running") == parts + 1


def test_status_of_an_interrupted_deploy_says_where_it_stopped():
    before = snapshot()
    total = len(compile_plan(resolve(open_lab(LAB).topology, registry(), trust=Trust(owner=lab_owner(0)))).steps)  # as root deploys it
    assert deploy_killed_at_call(LAB, 8) == 9
    try:
        shown = status("bridge-veth")
        assert shown.returncode == 1
        assert f"incomplete (deploy was interrupted at op 8 of {total})" in shown.stdout.splitlines()[0]
        assert "incomplete; " in shown.stdout, "the nodes and links it never reached say so"
    finally:
        cleanup(Deployer(), lambda progress: None)
    assert snapshot() - before == {}


def test_status_names_a_link_deleted_by_hand(deployed):
    lab = deployed("bridge-veth")
    veth = next(op for op in compile_plan(resolve(lab.topology, registry())).ops if isinstance(op, o.CreateVeth) and op.netns is None)
    subprocess.run(["ip", "link", "del", veth.name], check=True)
    shown = status("bridge-veth")
    assert shown.returncode == 1
    assert shown.stdout.splitlines()[0].endswith(": degraded")
    broken = next(line for line in shown.stdout.splitlines() if veth.owner.split(" ", 1)[1] in line)
    assert "degraded; missing: " in broken and veth.name in broken


def test_status_names_a_port_taken_out_of_its_bridge_by_hand(deployed):
    lab = deployed("bridge-veth")
    port = next(op for op in compile_plan(resolve(lab.topology, registry())).ops
                if isinstance(op, o.CreateVeth) and op.master)
    subprocess.run(["ip", "link", "set", port.name, "nomaster"], check=True)
    shown = status("bridge-veth")
    assert shown.returncode == 1
    broken = next(line for line in shown.stdout.splitlines() if port.owner.split(" ", 1)[1] in line)
    assert "degraded; missing: " in broken and port.name in broken and port.master in broken
