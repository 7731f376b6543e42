"""`vtopo experiment FILE`, the one documented command, as a member of the group through the agent: the lab is
deployed as theirs for each round and destroyed after; their deployed lab is measured as it is; another member is
refused it with one line."""
from __future__ import annotations

import json

import pytest

from experiment_lab import lab_with_experiment
from residue import snapshot

pytestmark = pytest.mark.privileged


def test_a_member_runs_an_experiment_in_rounds_through_the_agent(agent, users, readable_dir):
    a, b = users["a"].pw_name, users["b"].pw_name
    before = snapshot()
    path = lab_with_experiment(readable_dir, "experiment-member")
    out = readable_dir / "out"
    out.mkdir()
    out.chmod(0o777)
    done = agent.vtopo(a, "experiment", str(path), "--rounds", "2", "--no-history", "--out", str(out), timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "round 2 of 2: deploying lab experiment-member" in done.stdout
    result = json.loads((out / "experiment-member.experiment.json").read_text())
    assert result["rounds"] == 2 and "over 2 rounds" in result["ratios"][0]["verdict"]
    assert agent.vtopo(a, "status").stdout.strip() == "no lab is deployed", "each round's lab is destroyed"

    assert agent.vtopo(a, "deploy", str(path)).returncode == 0
    try:
        as_it_is = agent.vtopo(a, "experiment", str(path), "--no-history", "--out", str(out), timeout=240)
        assert as_it_is.returncode == 0 and "deploying" not in as_it_is.stdout, as_it_is.stdout + as_it_is.stderr
        refused = agent.vtopo(b, "experiment", str(path), "--out", str(out))
        lines = refused.stderr.strip().splitlines()
        assert refused.returncode != 0 and len(lines) == 1 and f"belongs to {a}" in lines[0], refused.stderr
    finally:
        agent.vtopo(a, "destroy", "experiment-member")
    assert snapshot() - before == {}
