"""A lab's state pushed by the agent against the poll of a probing status it replaced, in the same run. Prints; asserts
no times.

- `vtopo status` of N containers: a read of the agent's record, against `--verify`, the probe of every namespace and
  interface that every status read made before (target: at most 100 ms).
- With a lab of M containers followed: the agent's and the follower's CPU over IDLE_S idle seconds, against the same
  with a client polling as the designer did (a probing status, then a pause of max(1 s, 5 x its length)). Target: under
  1% of a core each.
- A carrier change (`ip link set eth0 down` in a node) to the follower: the time until it hears of it, against the
  poll's expected wait (half its period plus a probe; measured: the probe, the period it implies).
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent_process import Agent
from benchmarks.report import machine_facts, write_fragment
from benchmarks.test_deploy_bench import seconds, star
from vtopo import protocol as p
from vtopo.client.agent_client import AgentClient
from vtopo.lab_terms import Trust
from vtopo.model import io

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

STATUS_COUNT = int(os.environ.get("VTOPO_LIVE_BENCH_STATUS", "900"))
IDLE_COUNT = int(os.environ.get("VTOPO_LIVE_BENCH_IDLE", "1000"))  # one bridge takes at most 1,024 ports
IDLE_S = float(os.environ.get("VTOPO_LIVE_BENCH_IDLE_S", "60"))
TRIALS = 5
TICKS = os.sysconf("SC_CLK_TCK")

POLLER = """
import sys, time
from vtopo.client.agent_client import AgentClient
client = AgentClient(sys.argv[1])
while True:
    started = time.monotonic()
    client.verify(sys.argv[2])
    time.sleep(max(1.0, 5 * (time.monotonic() - started)))
"""


def cpu_seconds(pid: int) -> float:
    """The user and system CPU a process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def idle_share(agent_pid: int, client: subprocess.Popen[bytes]) -> tuple[float, float]:
    """The share of a core the agent and the client take over IDLE_S seconds."""
    time.sleep(2)  # the client has started and read the lab once
    agent_before, client_before = cpu_seconds(agent_pid), cpu_seconds(client.pid)
    time.sleep(IDLE_S)
    shares = (cpu_seconds(agent_pid) - agent_before) / IDLE_S, (cpu_seconds(client.pid) - client_before) / IDLE_S
    client.kill()
    client.wait()
    return shares


def carrier_to_follower(client: AgentClient, lab: str, netns: str) -> float:
    """Seconds from `ip link set eth0 down` in a node to the follower hearing of it (then the cable is put back)."""
    heard = threading.Event()
    following = client.follow(lab)

    def listen() -> None:
        for message in following:
            if isinstance(message, p.PartsChanged) and any(link.state == "down" for link in message.links):
                heard.set()

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    time.sleep(0.5)  # the whole state has come
    started = time.monotonic()
    subprocess.run(["ip", "-n", netns, "link", "set", "eth0", "down"], check=True)
    assert heard.wait(30), "the follower never heard of the cable pulled"
    took = time.monotonic() - started
    subprocess.run(["ip", "-n", netns, "link", "set", "eth0", "up"], check=True)
    following.close()
    listener.join(30)
    return took


def test_pushed_state_against_polling() -> None:
    lines = ["### A lab's state, pushed by the agent", "", machine_facts(), ""]
    with Agent.running() as agent:
        assert agent.process is not None
        client = AgentClient(agent.socket)
        topology = star(STATUS_COUNT)
        client.deploy(io.dumps(topology), Trust())
        try:
            record, probed = [], []
            for _ in range(TRIALS):  # alternate, so that both see the same machine
                started = time.perf_counter()
                client.status(topology.name)
                record.append(time.perf_counter() - started)
                started = time.perf_counter()
                client.verify(topology.name)
                probed.append(time.perf_counter() - started)
        finally:
            client.destroy(topology.name)
        read, probe = statistics.median(record), statistics.median(probed)
        print(f"\nvtopo status of {STATUS_COUNT} containers: the record {seconds(read)}, the probe {seconds(probe)} "
              f"({probe / read:.0f}x)")
        lines += [f"`vtopo status` of {STATUS_COUNT} containers through the agent, median of {TRIALS}, alternating: "
                  f"a read of its record against `--verify`, the probe every status read made before. Target: at most "
                  "100 ms.", "", "| containers | status (the record) | the probe (before) | probe / record |",
                  "|---|---|---|---|", f"| {STATUS_COUNT} | {seconds(read)} | {seconds(probe)} | {probe / read:.0f}x |",
                  ""]

        topology = star(IDLE_COUNT)
        client.deploy(io.dumps(topology), Trust())
        try:
            prefix = client.status(topology.name)[0].prefix
            follower = subprocess.Popen([sys.executable, "-m", "vtopo", "status", topology.name, "--watch"],
                                        env=agent.env, stdout=subprocess.DEVNULL)
            pushed = idle_share(agent.process.pid, follower)
            poller = subprocess.Popen([sys.executable, "-c", POLLER, str(agent.socket), topology.name], env=agent.env)
            polled = idle_share(agent.process.pid, poller)
            started = time.perf_counter()
            client.verify(topology.name)
            probe = time.perf_counter() - started
            carrier = statistics.median(carrier_to_follower(client, topology.name, f"{prefix}-c{i}")
                                        for i in range(TRIALS))
        finally:
            client.destroy(topology.name)
        period = max(1.0, 5 * probe)
        waited = period / 2 + probe
        print(f"{IDLE_COUNT} containers followed, {IDLE_S:.0f} idle seconds: agent {pushed[0]:.2%} of a core, follower "
              f"{pushed[1]:.2%}; polled as before: agent {polled[0]:.2%}, poller {polled[1]:.2%}")
        print(f"carrier change to the follower: {seconds(carrier)}; the poll's expected wait {seconds(waited)} (probe "
              f"{seconds(probe)}, period {seconds(period)})")
        lines += [f"A lab of {IDLE_COUNT} containers on one bridge, followed by one client (`vtopo status --watch`), "
                  f"against the same client polling as the designer did before (a probing status, then a pause of "
                  f"max(1 s, 5 x its length)), in the same run: each process's CPU over {IDLE_S:.0f} idle seconds "
                  "(target: under 1% of a core each), and the time from `ip link set eth0 down` in a node to the "
                  f"follower (median of {TRIALS}; target: at most 100 ms), against the poll's expected wait (half its "
                  "period plus a probe).", "",
                  "| | pushed (now) | polled (before) | before / now |", "|---|---|---|---|",
                  f"| agent CPU, idle | {pushed[0]:.2%} | {polled[0]:.2%} | "
                  f"{polled[0] / max(pushed[0], 1 / TICKS / IDLE_S):.0f}x |",
                  f"| client CPU, idle | {pushed[1]:.2%} | {polled[1]:.2%} | "
                  f"{polled[1] / max(pushed[1], 1 / TICKS / IDLE_S):.0f}x |",
                  f"| carrier change to the client | {seconds(carrier)} | {seconds(waited)} | {waited / carrier:.0f}x |"]
    write_fragment("live", "\n".join(lines))
