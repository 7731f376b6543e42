"""A deploy the agent runs, seen by its owner while it runs: `vtopo status` says "deploying" (not "interrupted"), its
owner may cancel it and everything it had built is removed; another member may neither cancel it nor see inside.
Startup commands that sleep stand for a VM's slow first start."""
from __future__ import annotations

import sys
import time

import pytest

from residue import snapshot
from tests.agent.test_agent_verbs import saved_copy
from vtopo.lab import open_lab
from vtopo.model import io

pytestmark = pytest.mark.privileged

CANCEL = "import sys; from vtopo.client.agent_client import AgentClient; print(AgentClient().cancel(sys.argv[1]))"
LABS = "from vtopo.client.agent_client import AgentClient; print([(e.lab, e.doing) for e in AgentClient().labs()])"


def slow_lab(directory, seconds: int):  # type: ignore[no-untyped-def]
    path = saved_copy("bridge-veth", directory, name="slow-lab", prefix="vsl")
    topology = open_lab(path).topology
    for node in topology.nodes.values():
        if node.name in ("c2", "c3"):
            node.startup_commands = [f"sleep {seconds}"]
    io.save(topology, path)
    path.chmod(0o644)
    return path


def test_a_deploy_in_progress_is_deploying_for_its_owner_and_can_be_cancelled(agent, users, readable_dir):
    a, b = users["a"].pw_name, users["b"].pw_name
    before = snapshot()
    lab = slow_lab(readable_dir, 4)
    deploying = agent.spawn(a, "deploy", str(lab), "--allow-commands", "c2", "--allow-commands", "c3")
    try:
        deadline = time.monotonic() + 30
        while "deploying" not in (status := agent.vtopo(a, "status", "slow-lab")).stdout:
            assert time.monotonic() < deadline and deploying.poll() is None, status.stdout + status.stderr
            time.sleep(0.2)
        assert "interrupted" not in status.stdout and "degraded" not in status.stdout, status.stdout
        assert "('slow-lab', 'deploying')" in agent.run_as(b, sys.executable, "-c", LABS).stdout
        refused = agent.run_as(b, sys.executable, "-c", CANCEL, "slow-lab")
        assert refused.returncode != 0 and "only vtopo-test-a or root may cancel the deploy of" in refused.stderr
        cancelled = agent.run_as(a, sys.executable, "-c", CANCEL, "slow-lab")
        assert cancelled.stdout.strip() == "True", cancelled.stderr
        _, said = deploying.communicate(timeout=60)
        assert deploying.returncode != 0 and "the deploy of lab slow-lab was cancelled" in said, said
    finally:
        if deploying.poll() is None:
            deploying.kill()
            deploying.wait()
    assert "no lab is deployed" in agent.vtopo(a, "status").stdout or \
        "slow-lab" not in agent.vtopo(a, "status").stdout
    assert snapshot() - before == {}
