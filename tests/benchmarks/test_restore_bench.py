"""Restoring a checkpoint of a running lab of 300 containers on one bridge, after a student stopped nodes, took links
down and limited their rates. Prints; asserts no times.

The agent restores through the paths of `vtopo node` and `vtopo link`, reading the lab it keeps resolved
(vtopo.host.resolved_labs). Its baseline, in the same run, is the same restore of the same changes without the kept
lab: each step then resolves and lowers the lab again.
"""
from __future__ import annotations

import statistics
import time

import pytest

from benchmarks.report import machine_facts, write_fragment
from benchmarks.test_deploy_bench import seconds, star
from benchmarks.test_operate_bench import deployed_with_agent, printed_and_tabled
from vtopo import protocol as p
from vtopo.checkpoints import Restored, restore
from vtopo.host.state import StateStore
from vtopo.model.checkpoints import Checkpoint
from vtopo.model.io import checkpoint_text
from vtopo.model.topology import Topology
from vtopo.reports import DeployReport

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

CONTAINERS = 300
CHANGED = 4  # nodes stopped, links taken down, links rate-limited: each
TRIALS = 3


def no_update(topology: Topology) -> DeployReport:
    raise AssertionError(f"no node of {topology.name} took a state the checkpoint does not have")


def test_restoring_a_checkpoint_of_300_containers() -> None:
    facts = machine_facts()
    topology = star(CONTAINERS)
    lab = topology.name
    checkpoint = Checkpoint("as-deployed")  # every node running, every link up, none impaired
    runs: dict[str, list[float]] = {"the agent's kept lab": [], "resolved at each step (baseline)": []}
    with deployed_with_agent(topology) as (deployed, agent, asked):
        def student_changes(trial: int) -> None:
            for index in range(CHANGED):
                node, down, limited = (f"c{3 * CHANGED * trial + 3 * index + offset}" for offset in range(3))
                for request in (p.NodeRequest(lab, node, p.NodeAction.STOP),
                                p.LinkRequest(lab, down, "br", p.LinkAction.DOWN),
                                p.LinkRequest(lab, limited, "br", p.LinkAction.SET, rate_mbit=10)):
                    answer = agent.handle(request, asked)
                    assert answer.code == 0, answer.errors

        def as_agent() -> Restored:
            answer = agent.handle(p.RestoreRequest(lab, checkpoint_text(checkpoint)), asked)
            assert answer.code == 0, answer.errors
            return Restored.from_json(answer.data)

        def resolving_at_each_step() -> Restored:
            record = StateStore().named(lab)
            assert record is not None
            return restore(record, checkpoint, no_update)

        for trial in range(TRIALS):
            for label, restoring in zip(runs, (as_agent, resolving_at_each_step)):
                student_changes(trial)
                started = time.perf_counter()
                restored = restoring()
                runs[label].append(time.perf_counter() - started)
                assert len(restored.nodes) == CHANGED and len(restored.links) == 2 * CHANGED, restored.lines
    kept, baseline = (statistics.median(times) for times in runs.values())
    print(f"\nRestoring a checkpoint of {CONTAINERS} containers on one bridge (deployed in {seconds(deployed)}): "
          f"{CHANGED} nodes started, {CHANGED} links up, {CHANGED} rate limits removed; median of {TRIALS}")
    rows = printed_and_tabled(runs, lambda label: label)
    print(f"  ratio {kept / baseline:.2f}")
    write_fragment("restore", "\n".join([
        "### Restoring a checkpoint", "", facts, "",
        f"{CONTAINERS} containers on one Linux bridge (deployed in {seconds(deployed)}), after {CHANGED} nodes were "
        f"stopped, {CHANGED} links taken down and {CHANGED} links limited to 10 Mbit/s: the checkpoint of the lab as "
        f"deployed restored, timed from the request to its answer; median of {TRIALS}. The baseline is the same "
        "restore without the lab the agent keeps resolved, each step resolving it again.", "",
        "| restore | median | trials |", "|---|---|---|", *rows, "", f"Ratio: {kept / baseline:.2f}."]))
