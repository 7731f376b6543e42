"""`vtopo experiment FILE` as root with no agent: the lab deployed afresh for each round and destroyed after, the
spread between rounds in the table and the JSON; a deployed lab measured as it is, never redeployed."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from experiment_lab import COMPARISON, lab_with_experiment
from residue import snapshot

pytestmark = pytest.mark.privileged


def vtopo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vtopo", *args], capture_output=True, text=True, timeout=180)


def test_rounds_deploy_the_lab_afresh_and_report_the_spread_between_them(tmp_path):
    before = snapshot()
    path = lab_with_experiment(tmp_path, "experiment-rounds")
    done = vtopo("experiment", str(path), "--rounds", "2", "--no-history", "--out", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "round 1 of 2: deploying lab experiment-rounds" in done.stdout
    assert "round 2 of 2: deploying lab experiment-rounds" in done.stdout
    result = json.loads((tmp_path / "experiment-rounds.experiment.json").read_text())
    assert result["rounds"] == 2 and all(len(cell["round_means"]) == 2 and len(cell["values"]) == 4
                                         for cell in result["cells"])
    ratio = result["ratios"][0]
    assert len(ratio["rounds"]) == 2 and "over 2 rounds" in ratio["verdict"]
    assert ratio["no_difference"] == (ratio["low"] <= 1.0 <= ratio["high"])
    line = next(line for line in done.stdout.splitlines() if line.startswith(COMPARISON))
    assert line == f"{COMPARISON}: c1-c3/ping / c1-c2/ping = {ratio['verdict']}"
    assert "round means" in done.stdout
    assert snapshot() - before == {}, "each round's lab is destroyed"


def test_a_deployed_lab_is_measured_as_it_is_and_never_redeployed_for_rounds(tmp_path):
    before = snapshot()
    path = lab_with_experiment(tmp_path, "experiment-deployed")
    assert vtopo("deploy", str(path)).returncode == 0
    try:
        refused = vtopo("experiment", str(path), "--rounds", "2", "--out", str(tmp_path))
        assert refused.returncode == 1 and refused.stderr.strip() == (
            "error: --rounds 2 deploys lab experiment-deployed afresh for each round, but it is deployed now: destroy "
            "it first (`vtopo destroy experiment-deployed`), or measure it as it is without --rounds")
        done = vtopo("experiment", str(path), "--no-history", "--out", str(tmp_path))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "deploying" not in done.stdout and "(one round: how far it holds is not measured)" in done.stdout
        assert vtopo("status", "experiment-deployed").returncode == 0, "the lab is still deployed"
    finally:
        vtopo("destroy", "experiment-deployed")
    assert snapshot() - before == {}
