"""Changing a running lab of 900 containers on one bridge: a link's rate set live, a link taken down and up, a node
stopped and started, each a request the agent answers in this process. Prints; asserts no times.

Each change is timed from the request to its answer, as the agent runs it: finding the lab's record, working out what
to change, doing it, writing the record and reading it again for `vtopo status` and the designer. The agent resolves
the lab once (vtopo.host.resolved_labs), at the first request; a rate set derives the lab so changed and resolves
nothing. Resolving and lowering the lab alone, which each request once cost, is timed beside them.
"""
from __future__ import annotations

import os
import socket
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from benchmarks.report import machine_facts, write_fragment
from benchmarks.test_deploy_bench import seconds, settle, star, timed
from vtopo import protocol as p
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.host.deployer import Deployer
from vtopo.lab import registry
from vtopo.model.topology import Topology
from vtopo.server.agent_server import Agent, Asked, Caller, Replies
from vtopo.server.policy import Policy

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

CONTAINERS = 900
TRIALS = 5


def changes(lab: str, trial: int) -> dict[str, p.Message]:
    """Each change by its command, in the trial (a rate that differs from the one before it)."""
    return {
        "vtopo link LAB c0 br set --rate R": p.LinkRequest(lab, "c0", "br", p.LinkAction.SET, rate_mbit=100 + trial),
        "vtopo link LAB c1 br down": p.LinkRequest(lab, "c1", "br", p.LinkAction.DOWN),
        "vtopo link LAB c1 br up": p.LinkRequest(lab, "c1", "br", p.LinkAction.UP),
        "vtopo node LAB c2 stop": p.NodeRequest(lab, "c2", p.NodeAction.STOP),
        "vtopo node LAB c2 start": p.NodeRequest(lab, "c2", p.NodeAction.START),
    }


@contextmanager
def deployed_with_agent(topology: Topology) -> Iterator[tuple[float, Agent, Asked]]:
    """`topology` deployed (the seconds it took), and the agent answering root in this process; destroyed after."""
    deployer = Deployer()
    settle()
    deployed = timed(lambda: deployer.deploy(topology))
    agent = Agent()
    ours, theirs = socket.socketpair()
    try:
        yield deployed, agent, Asked(Caller(os.getpid(), 0, 0), [], Replies(ours), Policy())
    finally:
        agent.live.close()
        ours.close()
        theirs.close()
        deployer.destroy(topology.name)


def printed_and_tabled(runs: dict[str, list[float]], cell: Callable[[str], str]) -> list[str]:
    """Print each run's median and trials, and return them as rows of a markdown table (`cell`: a run's name there)."""
    rows = []
    for name, times in runs.items():
        median, trials = seconds(statistics.median(times)), ", ".join(map(seconds, times))
        print(f"  {name:<36} {median:>8}   (trials {trials})")
        rows.append(f"| {cell(name)} | {median} | {trials} |")
    return rows


def test_changes_to_a_running_lab_of_900_containers() -> None:
    facts = machine_facts()
    topology = star(CONTAINERS)
    with deployed_with_agent(topology) as (deployed, agent, asked):
        runs: dict[str, list[float]] = {command: [] for command in changes(topology.name, 0)}
        for trial in range(TRIALS):
            for command, request in changes(topology.name, trial).items():
                started = time.perf_counter()
                answer = agent.handle(request, asked)
                runs[command].append(time.perf_counter() - started)
                assert answer.code == 0, answer.errors
    resolved = statistics.median(timed(lambda: compile_plan(resolve(topology, registry()).valid()))
                                 for _ in range(TRIALS))
    print(f"\n{CONTAINERS} containers on one bridge (deployed in {seconds(deployed)}), median of {TRIALS}:")
    rows = printed_and_tabled(runs, lambda command: f"`{command}`")
    print(f"  the lab resolved and lowered, which a request no longer does: {seconds(resolved)}")
    lines = ["### Changing a running lab", "", facts, "",
             f"{CONTAINERS} containers on one Linux bridge (deployed in {seconds(deployed)}); each change a request "
             f"the agent answers in one process, timed from the request to its answer; median of {TRIALS}. The first "
             "trial's first request resolves the lab.", "",
             "| change | median | trials |", "|---|---|---|", *rows]
    lines += ["", f"The agent resolves a running lab once and keeps it while its record holds that lab; a rate set "
              f"derives the lab so changed. Resolving and lowering the lab, which each request did before, takes "
              f"{seconds(resolved)} alone (median of {TRIALS})."]
    write_fragment("operate", "\n".join(lines))
    assert all(times for times in runs.values())
