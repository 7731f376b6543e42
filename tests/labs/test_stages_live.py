"""`vtopo stage` on a deployed assignment: the stage's checks run live, and moving on needs them to pass."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

ASSIGNMENT = TOPOLOGIES / "ospf-assignment.vtopo"


def test_stage_judges_the_deployed_lab_and_moves_only_past_complete_stages(deployed, tmp_path):
    deployed(ASSIGNMENT)
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
