"""Changing a running lab of 900 containers on one bridge: a link's rate set live, a link taken down and up, a node
stopped and started, each timed in this process (as the agent runs them). Prints; asserts no times.

Each change is timed from the call to its return: finding the lab's record, working out what to change, doing it
and writing the record. A change of one link's rate is one link's work: it reads the link's devices from the lab's
record and compiles nothing, and the lab's compile in context, which it cost before, is timed beside it.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import pytest

from benchmarks.report import machine_facts, write_fragment
from benchmarks.test_deploy_bench import seconds, settle, star, timed
from vtopo.host.deployer import Deployer
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.lab_operations import set_link_impairment, set_link_state, start_node, stop_node

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

CONTAINERS = 900
TRIALS = 5


def changes(lab: str) -> dict[str, Callable[[int], object]]:
    """Each change by its command, given the trial's number (a rate that differs from the one before it)."""
    return {
        "vtopo link LAB c0 br set --rate R": lambda trial: set_link_impairment(lab, "c0", "br",
                                                                                rate_mbit=100 + trial),
        "vtopo link LAB c1 br down": lambda _: set_link_state(lab, "c1", "br", up=False),
        "vtopo link LAB c1 br up": lambda _: set_link_state(lab, "c1", "br", up=True),
        "vtopo node LAB c2 stop": lambda _: stop_node(lab, "c2"),
        "vtopo node LAB c2 start": lambda _: start_node(lab, "c2"),
    }


def test_changes_to_a_running_lab_of_900_containers() -> None:
    facts = machine_facts()
    topology = star(CONTAINERS)
    deployer = Deployer()
    settle()
    deployed = timed(lambda: deployer.deploy(topology))
    try:
        runs: dict[str, list[float]] = {command: [] for command in changes(topology.name)}
        for trial in range(TRIALS):
            for command, change in changes(topology.name).items():
                started = time.perf_counter()
                change(trial)
                runs[command].append(time.perf_counter() - started)
    finally:
        deployer.destroy(topology.name)
    medians = {command: statistics.median(times) for command, times in runs.items()}
    resolved = statistics.median(timed(lambda: resolve(topology, registry()).valid().lab) for _ in range(TRIALS))
    print(f"\n{CONTAINERS} containers on one bridge (deployed in {seconds(deployed)}), median of {TRIALS}:")
    for command, median in medians.items():
        print(f"  {command:<36} {seconds(median):>8}   (trials {', '.join(seconds(t) for t in runs[command])})")
    print(f"  the lab compiled in context, which a rate set no longer does: {seconds(resolved)}")
    lines = ["### Changing a running lab", "", facts, "",
             f"{CONTAINERS} containers on one Linux bridge (deployed in {seconds(deployed)}); each change timed in "
             f"one process, as the agent runs it, from the call to its return; median of {TRIALS}.", "",
             "| change | median | trials |", "|---|---|---|"]
    lines += [f"| `{command}` | {seconds(median)} | {', '.join(seconds(t) for t in runs[command])} |"
              for command, median in medians.items()]
    lines += ["", f"A rate set reads the link's devices from the lab's record (what its deploy made for the link) and "
              f"compiles nothing; the lab compiled in context, which it did before, takes {seconds(resolved)} alone "
              f"(median of {TRIALS})."]
    write_fragment("operate", "\n".join(lines))
    assert all(times for times in runs.values())
