"""`vtopo experiment FILE`, the one documented command, as a member of the group through the agent: the lab is
deployed as theirs for each round and destroyed after; their deployed lab is measured as it is; another member is
refused it with one line. A reconvergence test takes the member's link down and up through the agent."""
from __future__ import annotations

import json

import pytest

from experiment_lab import lab_with_experiment
from residue import snapshot
from vtopo.lab import open_lab
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

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


def test_a_members_reconvergence_takes_their_link_down_and_up_through_the_agent(agent, users, readable_dir):
    a = users["a"].pw_name
    before = snapshot()
    topology = open_lab(TOPOLOGIES / "ospf-reconvergence.vtopo").topology
    topology.name = "reconvergence-member"
    path = readable_dir / "reconvergence-member.vtopo"
    io.save(topology, path)
    path.chmod(0o644)
    out = readable_dir / "out"
    out.mkdir()
    out.chmod(0o777)
    done = agent.vtopo(a, "experiment", str(path), "--repeat", "1", "--no-history", "--out", str(out), timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    cell = json.loads((out / "reconvergence-member.experiment.json").read_text())["cells"][0]
    assert cell["unit"] == "s" and len(cell["values"]) == 1 and 0.0 <= cell["values"][0] < 1.0, cell
    assert snapshot() - before == {}
