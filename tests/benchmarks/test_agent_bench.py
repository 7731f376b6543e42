"""Deploying through the agent against deploying in-process, in the same run. Prints; asserts no times.

Both sides start from the lab's text and load, check, compile and apply it; the agent's side adds the socket, the
JSON lines of its progress events and the agent's own process. Target: at most 10% more than in-process.
"""
from __future__ import annotations

import os
import statistics
import time

import pytest

from agent_process import Agent
from benchmarks.report import machine_facts, write_fragment
from benchmarks.test_deploy_bench import seconds, star
from vtopo.agent.client import AgentClient
from vtopo.host.deployer import Deployer
from vtopo.kinds.environment import Trust
from vtopo.lab import read_lab
from vtopo.model import io

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

COUNTS = tuple(int(n) for n in os.environ.get("VTOPO_AGENT_BENCH_COUNTS", "100,400").split(","))
TRIALS = 5


def in_process(text: str, name: str) -> float:
    deployer = Deployer()
    started = time.perf_counter()
    deployer.deploy(read_lab(text))
    took = time.perf_counter() - started
    deployer.destroy(name)
    return took


def through_agent(client: AgentClient, text: str, name: str) -> float:
    started = time.perf_counter()
    client.deploy(text, Trust(), progress=lambda event: None)
    took = time.perf_counter() - started
    client.destroy(name)
    return took


def test_deploying_through_the_agent_against_in_process() -> None:
    lines = ["### Deploying through the agent", "", machine_facts(), "",
             f"N containers on one bridge, deployed from the lab's text in this process and through `vtopo agent` "
             f"(the socket, its progress events and the agent's own process), alternating, median of {TRIALS}. "
             "Target: at most 10% more.", "", "| N | in-process | through the agent | agent / in-process |",
             "|---|---|---|---|"]
    with Agent.running() as agent:
        client = AgentClient(agent.socket)
        for count in COUNTS:
            topology = star(count)
            text = io.dumps(topology)
            runs: dict[str, list[float]] = {"in-process": [], "agent": []}
            for _ in range(TRIALS):  # alternate, so that both see the same machine
                runs["in-process"].append(in_process(text, topology.name))
                runs["agent"].append(through_agent(client, text, topology.name))
            here, there = statistics.median(runs["in-process"]), statistics.median(runs["agent"])
            print(f"\n{count} containers on one bridge, deploy (median of {TRIALS}; load "
                  f"{os.getloadavg()[0]:.2f}):")
            print(f"  in-process     {seconds(here):>8}   {' '.join(seconds(t) for t in runs['in-process'])}")
            print(f"  through agent  {seconds(there):>8}   {' '.join(seconds(t) for t in runs['agent'])}")
            print(f"  agent / in-process {there / here:.2f} (target <= 1.10)")
            lines.append(f"| {count} | {seconds(here)} | {seconds(there)} | {there / here:.2f}x |")
    write_fragment("agent", "\n".join(lines))
