"""Root with no agent running is served by the agent's own code, in its own process on a socketpair: the same
requests and the same answers as through `vtopo agent`. A member with no agent is told how to start one."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchmarks.test_deploy_bench import star
from residue import snapshot
from vtopo import protocol
from vtopo.cli.main import main
from vtopo.client.agent_client import AgentClient, agent_running
from vtopo.host.state import StateStore
from vtopo.lab_terms import Trust
from vtopo.model import io
from vtopo.resources import TOPOLOGIES
from vtopo.server.agent_server import SEARCH_PATH, Replies

pytestmark = pytest.mark.privileged


def test_root_without_an_agent_deploys_runs_commands_and_destroys_through_the_agents_code(capfd, monkeypatch):
    assert not agent_running(protocol.SOCKET)
    monkeypatch.setenv("VTOPO_TEST_MARK", "this process's")
    before = snapshot()
    try:
        assert main(["deploy", str(TOPOLOGIES / "bridge-veth.vtopo")]) == 0
        assert main(["exec", "bridge-veth", "c1", "--", "ping", "-c", "1", "-W", "2", "10.0.0.2"]) == 0
        capfd.readouterr()
        # the command runs as the agent runs every command: in the environment it gives, not this process's
        assert main(["exec", "bridge-veth", "c1", "--", "sh", "-c", 'echo "$PATH [$VTOPO_TEST_MARK]"']) == 0
        assert capfd.readouterr().out.strip() == f"{SEARCH_PATH} []"
        assert main(["status", "bridge-veth"]) == 0
        assert "lab bridge-veth" in capfd.readouterr().out
    finally:
        assert main(["destroy", "bridge-veth"]) == 0
    assert snapshot() - before == {}


def test_ctrl_c_during_a_deploy_without_an_agent_cancels_it_and_rolls_it_back(tmp_path: Path):
    topology = star(60)
    lab = tmp_path / "star.vtopo"
    io.save(topology, lab)
    before = snapshot()
    deploy = subprocess.Popen([sys.executable, "-m", "vtopo", "deploy", "-v", str(lab)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    assert deploy.stdout is not None
    applied = 0
    for line in deploy.stdout:  # interrupt it once the agent has applied a few operations
        applied += line.startswith("  [") and "(node " in line
        if applied == 5:
            break
    deploy.send_signal(signal.SIGINT)
    assert deploy.wait(timeout=120) == 130, deploy.stderr.read() if deploy.stderr else ""
    assert StateStore().named(topology.name) is None
    assert snapshot() - before == {}


def test_a_status_read_after_a_deploys_answer_and_before_its_record_is_rebuilt_sees_the_whole_lab(monkeypatch):
    """The agent answers a deploy, then rebuilds its record of the lab: a status asked for in between (held open
    here, as a slow rebuild would leave it) is the lab as the deploy made it, every node and link running."""
    topology = star(20)
    answered, released = threading.Event(), threading.Event()
    answer = Replies.answer

    def answer_then_hold(replies: Replies, result: protocol.Result) -> None:
        answer(replies, result)
        if not answered.is_set():  # the deploy's answer: its thread rebuilds the record once released
            answered.set()
            assert released.wait(60)

    monkeypatch.setattr(Replies, "answer", answer_then_hold)
    deploying = threading.Thread(target=AgentClient().deploy, args=(io.dumps(topology), Trust()))
    deploying.start()
    try:
        assert answered.wait(120)
        (status,) = AgentClient().status(topology.name)
        assert not released.is_set()
    finally:
        released.set()
        deploying.join()
        AgentClient().destroy(topology.name)
    assert (status.state, len(status.nodes), len(status.links)) == ("running", 21, 20)
    assert {part.state for part in [*status.nodes, *status.links]} == {"running"}


def test_a_member_without_an_agent_is_told_how_to_start_one(users):
    nowhere = Path(f"/tmp/vtopo-no-agent-{os.getpid()}/agent.sock")
    member = users["a"].pw_name
    for args in (["status"], ["deploy", str(TOPOLOGIES / "bridge-veth.vtopo")], ["exec", "any", "c1", "--", "true"]):
        result = subprocess.run(["runuser", "-u", member, "--", sys.executable, "-m", "vtopo", *args],
                                env={**os.environ, "VTOPO_AGENT_SOCKET": str(nowhere)}, capture_output=True,
                                text=True, timeout=60, stdin=subprocess.DEVNULL, cwd="/")
        assert result.returncode == 1, result.stderr
        assert result.stderr.strip() == (f"error: no vtopo agent is running at {nowhere}, and only root can work "
                                         "without one: start it with `sudo vtopo agent --daemon` (or `make run`)")
