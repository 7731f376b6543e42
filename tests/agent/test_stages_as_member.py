"""`vtopo stage` as a member through a real agent: the owner sees their stage's checks judged live and moves on, the
stage kept in their own data folder; another member is refused the lab, and nothing is left after."""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from residue import snapshot
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged


def test_a_member_works_through_the_stages_of_their_own_lab_only(agent, users, readable_dir):
    a, b = users["a"], users["b"]
    before = snapshot()
    lab = readable_dir / "ospf-assignment.vtopo"
    shutil.copy(TOPOLOGIES / "ospf-assignment.vtopo", lab)
    lab.chmod(0o644)
    data = Path(tempfile.mkdtemp(prefix="vtopo-stage-data-"))
    os.chown(data, a.pw_uid, a.pw_gid)

    def stage(user: str, *args: str, data_dir: Path = data):
        return agent.run_as(user, "env", f"VTOPO_DATA_DIR={data_dir}", sys.executable, "-m", "vtopo", "stage",
                            "ospf-assignment", *args)

    deployed = agent.vtopo(a.pw_name, "deploy", str(lab))
    assert deployed.returncode == 0, deployed.stderr
    try:
        shown = stage(a.pw_name)
        assert shown.returncode == 0, shown.stderr
        assert "  pass  h1 reaches its gateway" in shown.stdout and shown.stdout.endswith("stage 1 is complete\n")
        moved = stage(a.pw_name, "2")
        assert moved.returncode == 0 and moved.stdout.startswith("stage 2 of 3: OSPF in area 0"), moved.stderr
        assert (data / "stages" / "ospf-assignment.stage.json").stat().st_uid == a.pw_uid

        refused = stage(b.pw_name, data_dir=Path("/nonexistent"))
        assert refused.returncode == 1
        assert f"lab ospf-assignment belongs to {a.pw_name}; only {a.pw_name} or root may" in refused.stderr
        unwritable = stage(a.pw_name, "2", data_dir=Path("/proc/vtopo"))  # a folder no one can make
        assert unwritable.returncode == 1 and unwritable.stderr.startswith(
            "cannot keep the stage you are at in /proc/vtopo: "), unwritable.stderr
        assert unwritable.stderr.endswith("; set VTOPO_DATA_DIR to a folder of yours\n")
    finally:
        destroyed = agent.vtopo(a.pw_name, "destroy", "ospf-assignment")
        shutil.rmtree(data)
    assert destroyed.returncode == 0, destroyed.stderr
    assert snapshot() - before == {}
