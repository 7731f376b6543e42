"""`vtopo stage` on a deployed assignment: the stage's checks run live, and moving on needs them to pass."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from vtopo.checks.engine import run_checks
from vtopo.checks.live import LiveProbe
from vtopo.checks.spec import typed_checks
from vtopo.lab import registry
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

ASSIGNMENT = TOPOLOGIES / "ospf-assignment.vtopo"


SOLVED = {  # the stages' solutions, with fast hellos so that the test need not wait 40 s for a dead interval
    name: f"hostname {name}\n!\n" + "".join(
        f"interface {port}\n ip ospf network point-to-point\n ip ospf hello-interval 1\n ip ospf dead-interval 4\n!\n"
        for port in ("eth1", "eth2")) + f"router ospf\n ospf router-id {n}.{n}.{n}.{n}\n" + "".join(
        f" network {network} area 0\n" for network in networks) + (" passive-interface eth0\n" if lan else "") + "!\n"
    for name, n, networks, lan in [
        ("r1", 1, ["10.1.0.0/24", "10.0.12.0/30", "10.0.13.0/30"], True),
        ("r2", 2, ["10.0.12.0/30", "10.0.23.0/30"], False),
        ("r3", 3, ["10.3.0.0/24", "10.0.13.0/30", "10.0.23.0/30"], True)]}
CONVERGED_WITHIN_S = 60.0


def test_stage_judges_the_deployed_lab_and_moves_only_past_complete_stages(deployed, tmp_path):
    """A student's way through the assignment: stage 1 holds on deploy, stage 2 once OSPF is typed into vtysh."""
    running = deployed(ASSIGNMENT)
    environment = {**os.environ, "VTOPO_DATA_DIR": str(tmp_path)}

    def stage(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "vtopo", "stage", str(ASSIGNMENT), *args], capture_output=True,
                              text=True, timeout=120, env=environment)

    first = stage()
    assert first.returncode == 0, first.stderr
    assert "  pass  r1 reaches r2" in first.stdout and first.stdout.endswith("stage 1 is complete\n")
    assert stage("3").stderr == ("stage 2 (OSPF in area 0) is not complete: r1 is adjacent to r2, r1 is adjacent to "
                                 "r3, r2 is adjacent to r3 fail; pass them first, or move with --force\n")
    second = stage("2")
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("stage 2 of 3: OSPF in area 0\n")
    assert "  FAIL  r1 is adjacent to r2" in second.stdout and second.stdout.endswith("stage 2 is not complete\n")
    assert stage().stdout.startswith("stage 2 of 3"), "the stage reached is kept"

    for name, config in SOLVED.items():  # the student types stage 2's solution into each router's vtysh
        lines = [line.strip() for line in config.splitlines() if line.strip() not in ("!", f"hostname {name}")
                 and "passive-interface" not in line and "10.1.0.0" not in line and "10.3.0.0" not in line]
        typed = running.run(name, "vtysh", "-c", "configure terminal", *(arg for line in lines for arg in ("-c", line)))
        assert typed.returncode == 0, typed.stdout + typed.stderr
    deadline = time.monotonic() + CONVERGED_WITHIN_S
    while not (now := stage()).stdout.endswith("stage 2 is complete\n"):
        assert time.monotonic() < deadline, now.stdout
        time.sleep(1)
    third = stage("3")
    assert third.returncode == 0 and third.stdout.startswith("stage 3 of 3: Reach every host"), third.stderr
    assert "  FAIL  h1 reaches h3" in third.stdout, "the LANs are not announced yet"



def test_the_solved_assignment_passes_every_stage_and_every_hidden_check(deployed, tmp_path):
    """The assignment's checks are right: routers configured as the solutions say pass all of them, the hidden
    ones included, and `vtopo stage` then moves through to the last stage."""
    topology = io.load(ASSIGNMENT)
    for name, config in SOLVED.items():
        topology.node_named(name).settings["config"] = config  # type: ignore[union-attr]
    solved = tmp_path / "ospf-assignment.vtopo"
    io.save(topology, solved)
    running = deployed(solved)
    checks, problems = typed_checks(topology, registry())
    assert problems == [] and any(check.check.hidden for check in checks)
    deadline = time.monotonic() + CONVERGED_WITHIN_S
    while failing := [o.check.check.name for o in run_checks(checks, LiveProbe(running.lab)) if not o.passed]:
        assert time.monotonic() < deadline, f"still failing: {failing}"
        time.sleep(1)
    moved = subprocess.run([sys.executable, "-m", "vtopo", "stage", str(solved), "3"], capture_output=True,
                           text=True, timeout=120, env={**os.environ, "VTOPO_DATA_DIR": str(tmp_path / "data")})
    assert moved.returncode == 0, moved.stderr
    assert moved.stdout.startswith("stage 3 of 3: Reach every host") and moved.stdout.endswith("stage 3 is complete\n")
