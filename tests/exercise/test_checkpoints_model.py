"""Checkpoints in a lab file: kept and read back as they were, and checked as the rest of a lab file is, in the file
and in the text a client sends the agent to restore one (a checkpoint is input from whoever wrote the file)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from vtopo.checkpoints import checkpoint_of
from vtopo.kinds.running import SavedState
from vtopo.model import io
from vtopo.model.checkpoints import Checkpoint, NodeState, keep
from vtopo.model.problems import LabError
from vtopo.model.sites import Site
from vtopo.resources import TOPOLOGIES
from vtopo.saving import RunningState

GOOD = Checkpoint("ospf-done", "2026-11-29T12:00:00Z",
                  {"r1": NodeState({"config": "hostname r1\nrouter ospf\n network 10.0.0.0/8 area 0\n"}),
                   "h1": NodeState({"routes": ["10.9.0.0/16 via 10.1.0.1"]}, {"eth0": ["10.1.0.10/24"]})},
                  ["h3"], ["link-r1-r3"], {"link-r1-r2": {"rate_mbit": 10.0}})


def test_a_checkpoint_is_kept_in_the_file_and_read_back_as_it_was() -> None:
    topology = io.load(TOPOLOGIES / "ospf-ring.vtopo")
    topology.checkpoints = keep(keep([], GOOD), Checkpoint("empty"))
    assert io.loads(io.dumps(topology)).checkpoints == [GOOD, Checkpoint("empty")]
    assert io.read_checkpoint(io.checkpoint_text(GOOD)) == GOOD
    replaced = keep(topology.checkpoints, Checkpoint("ospf-done", "later"))
    assert [(checkpoint.name, checkpoint.made) for checkpoint in replaced] == [("ospf-done", "later"), ("empty", "")]


def test_a_checkpoint_is_made_of_what_the_running_lab_read() -> None:
    running = RunningState({"r1": SavedState({"config": "hostname r1\n"}, {})},
                           {"links": [{"id": "l1", "impairment": {"delay_ms": 5}}, {"id": "l2"}]}, "", ["h3"], ["l2"])
    made = checkpoint_of("mine", running)
    assert (made.name, made.nodes, made.stopped, made.down, made.impairments) == \
        ("mine", {"r1": NodeState({"config": "hostname r1\n"})}, ["h3"], ["l2"], {"l1": {"delay_ms": 5}})
    assert made.made.endswith("Z")


@pytest.mark.parametrize(("change", "problem"), [
    (lambda c: c.update(name="../etc"), "$.checkpoints[0].name: '../etc': every checkpoint needs a unique name"),
    (lambda c: c.update(stopped="h3"), "$.checkpoints[0].stopped: stopped must be a list"),
    (lambda c: c["impairments"]["link-r1-r2"].update(loss_pct=200), "loss_pct must be between 0 and 100"),
    (lambda c: c["nodes"]["h1"].update(addresses={"eth0": "10.1.0.10/24"}), "addresses.eth0: eth0 must be a list, not a string"),
    (lambda c: c.update(made="12:00\nrouter bgp 1"), "made: this value holds a newline"),  # a newline only in a setting
])
def test_a_wrong_checkpoint_is_one_problem_naming_it(change, problem) -> None:  # type: ignore[no-untyped-def]
    raw = json.loads(io.checkpoint_text(GOOD))
    change(raw)
    with pytest.raises(LabError) as refused:
        io.read_checkpoint(json.dumps(raw))
    assert len(refused.value.problems) == 1 and problem in str(refused.value.problems[0]), refused.value.problems
    document = io.to_document(io.load(TOPOLOGIES / "ospf-ring.vtopo")) | {"checkpoints": [raw]}
    with pytest.raises(LabError) as in_file:
        io.loads(json.dumps(document))
    assert problem in str(in_file.value.problems[0]), in_file.value.problems


def test_a_lab_spread_over_sites_is_refused_in_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    topology = io.load(TOPOLOGIES / "ospf-ring.vtopo")
    topology.sites = {"far": Site("far", destination="student@far.example")}
    path = tmp_path / "spread.vtopo"
    io.save(topology, path)
    done = subprocess.run([sys.executable, "-m", "vtopo", "checkpoint", str(path), "good"], capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stderr) == (1, "error: lab ospf-ring is spread over sites: checkpoints are of labs "
                                                 "on one machine only\n")
