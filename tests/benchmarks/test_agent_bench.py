"""Deploying through the agent against calling the executor in this process, in the same run. Prints; asserts no
times.

Every side starts from the lab's text and loads, checks, compiles and applies it. Root with no agent (what `vtopo
deploy` and the designer do then) adds the agent's code on a socketpair in this process, and the JSON lines of its
progress events; through `vtopo agent`, its socket and its own process too. Target: at most 10% more than calling
the executor. A member's deploy adds the lab's user namespace (every namespace of the lab made inside it by a helper
process): its cost is the member's column against root's through the agent.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_process import Agent
from benchmarks.report import machine_facts, write_fragment
from members import members, readable_dir  # noqa: F401  (a fixture)
from benchmarks.test_deploy_bench import seconds, star
from vtopo.client.agent_client import AgentClient
from vtopo.host.deployer import Deployer
from vtopo.lab_terms import Trust
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


MEMBER_DEPLOY = """
import sys, time
from vtopo.client.agent_client import AgentClient
from vtopo.lab_terms import Trust
client, text = AgentClient(sys.argv[1]), open(sys.argv[2]).read()
started = time.perf_counter()
client.deploy(text, Trust(), progress=lambda event: None)
print(time.perf_counter() - started)
client.destroy(sys.argv[3])
"""


def as_member(agent: Agent, member: str, lab_file: Path, name: str) -> float:
    """The deploy as a member's client times it, in the member's own process."""
    timed = subprocess.run(["runuser", "-u", member, "--", sys.executable, "-c", MEMBER_DEPLOY, str(agent.socket),
                            str(lab_file), name], env=agent.env, capture_output=True, text=True, check=True, cwd="/")
    return float(timed.stdout)


def test_deploying_through_the_agent_against_in_process(readable_dir: Path) -> None:
    lines = ["### Deploying through the agent", "", machine_facts(), "",
             f"N containers on one bridge, deployed from the lab's text by the executor called in this process, by "
             f"root with no agent running (the agent's code on a socketpair in this process, and its progress "
             f"events), and through `vtopo agent` (its socket and its own process too), as root and as a member of the "
             f"vtopo group (whose lab lives in a user namespace of its own), alternating, median of {TRIALS}. "
             "Target: at most 10% more.", "",
             "| N | the executor | root, no agent | no agent / executor | through the agent | agent / executor | "
             "a member, through the agent | member / root |",
             "|---|---|---|---|---|---|---|---|"]
    with Agent.running() as agent, members() as users:
        client, no_agent = AgentClient(agent.socket), AgentClient(agent.directory / "nothing-listens.sock")
        member = users["a"].pw_name
        for count in COUNTS:
            topology = star(count)
            text = io.dumps(topology)
            lab_file = readable_dir / f"star{count}.vtopo"  # the member reads it
            lab_file.write_text(text)
            lab_file.chmod(0o644)
            runs: dict[str, list[float]] = {"executor": [], "no agent": [], "agent": [], "member": []}
            for _ in range(TRIALS):  # alternate, so that all see the same machine
                runs["executor"].append(in_process(text, topology.name))
                runs["no agent"].append(through_agent(no_agent, text, topology.name))
                runs["agent"].append(through_agent(client, text, topology.name))
                runs["member"].append(as_member(agent, member, lab_file, topology.name))
            here, alone, there, theirs = (statistics.median(runs[key]) for key in runs)
            print(f"\n{count} containers on one bridge, deploy (median of {TRIALS}; load "
                  f"{os.getloadavg()[0]:.2f}):")
            for key, taken in runs.items():
                print(f"  {key:<14} {seconds(statistics.median(taken)):>8}   {' '.join(seconds(t) for t in taken)}")
            print(f"  no agent / executor {alone / here:.2f}, agent / executor {there / here:.2f} (target <= 1.10); "
                  f"member / root through the agent {theirs / there:.2f} (the user namespace's cost)")
            lines.append(f"| {count} | {seconds(here)} | {seconds(alone)} | {alone / here:.2f}x | {seconds(there)} | "
                         f"{there / here:.2f}x | {seconds(theirs)} | {theirs / there:.2f}x |")
    write_fragment("agent", "\n".join(lines))
