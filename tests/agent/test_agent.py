"""The agent as students use it: a member deploys, pings, runs commands as themselves and destroys; another
member sees the lab but cannot touch it; a non-member is refused at the socket; a killed agent leaves nothing
that `vtopo cleanup` does not remove."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.test_deploy_bench import star
from residue import snapshot
from waiting import wait_for
from vtopo.model import io
from vtopo.model.topology import Topology
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

BRIDGE_VETH = str(TOPOLOGIES / "bridge-veth.vtopo")  # c1 10.0.0.1, c2 10.0.0.2, c3 10.0.0.3 on br0
STATE = Path("/var/lib/vtopo/labs")
HEAVY = ("networkx", "pyroute2", "PySide6")
LIST_MODULES = "import sys\nfrom vtopo.cli.main import main\nassert main({argv!r}) == 0\nprint(*sys.modules)"


def ps_users() -> list[str]:
    """`user command` of every process."""
    return subprocess.run(["ps", "-eo", "user:32,comm", "--no-headers"], capture_output=True, text=True).stdout \
        .splitlines()


def save_readable(topology: Topology, path: Path) -> None:
    io.save(topology, path)
    path.chmod(0o644)  # saved 0600, like any lab file


def test_a_member_deploys_runs_as_themselves_and_only_they_may_touch_the_lab(agent, users):
    a, b, c = users["a"].pw_name, users["b"].pw_name, users["c"].pw_name
    before = snapshot()
    deployed = agent.vtopo(a, "deploy", BRIDGE_VETH)
    assert deployed.returncode == 0, deployed.stderr
    assert "== apply" in deployed.stdout and "[1/" not in deployed.stdout  # each stage, not each operation
    try:
        status = agent.vtopo(None, "status", "bridge-veth")
        assert f"owner {a}: running" in status.stdout

        inside = agent.vtopo(a, "exec", "bridge-veth", "c1", "--", "sh", "-c", "id -u; cat /proc/self/uid_map")
        assert inside.returncode == 0, inside.stderr
        assert [line.split() for line in inside.stdout.splitlines()] == [["0"], ["0", str(users["a"].pw_uid), "1"]]
        for light in (["exec", "bridge-veth", "c1", "--", "true"], ["status", "bridge-veth"]):  # a check starts 16
            assert_light(agent.run_as(a, sys.executable, "-c", LIST_MODULES.format(argv=light)))
        capabilities = agent.vtopo(a, "exec", "bridge-veth", "c1", "--", "grep", "CapEff", "/proc/self/status")
        assert int(capabilities.stdout.split()[1], 16) & (1 << 12)  # CAP_NET_ADMIN, in the lab's user namespace
        on_a_terminal = agent.run_as(a, "script", "-qec", f"{sys.executable} -m vtopo exec bridge-veth c1 -- "
                                     "sh -c 'id -u; tty; test -w /root || echo cannot write /root'", "/dev/null")
        assert on_a_terminal.returncode == 0, on_a_terminal.stderr
        uid, terminal, root = on_a_terminal.stdout.replace("\r", "").splitlines()[-3:]
        assert uid == "0" and terminal.startswith("/dev/pts/") and root == "cannot write /root"
        root_file = agent.vtopo(a, "exec", "bridge-veth", "c1", "--", "sh", "-c", "echo x > /root/vtopo-agent-test")
        assert root_file.returncode != 0 and "Permission denied" in root_file.stderr
        assert not Path("/root/vtopo-agent-test").exists()
        ping = agent.vtopo(a, "exec", "bridge-veth", "c1", "--", "ping", "-c", "2", "-i", "0.2", "-W", "2", "10.0.0.2")
        assert ping.returncode == 0, ping.stdout + ping.stderr
        route = agent.vtopo(a, "exec", "bridge-veth", "c1", "--", "ip", "route", "add", "192.0.2.0/24", "dev", "eth0")
        assert route.returncode == 0, route.stderr  # CAP_NET_ADMIN, in the node's own namespace
        in_node = agent.vtopo(a, "exec", "bridge-veth", "c1", "--", "ip", "route", "show", "192.0.2.0/24")
        assert "192.0.2.0/24 dev eth0" in in_node.stdout

        for explained in (agent.vtopo(a, "node", "bridge-veth", "c2", "stop", "--explain"),  # said, nothing done
                          agent.vtopo(a, "link", "bridge-veth", "c3", "br0:p3", "down", "--explain")):
            assert explained.returncode == 0 and explained.stdout.startswith("#!/bin/sh\n"), explained.stderr
            assert " link set dev " in explained.stdout and " down" in explained.stdout, explained.stdout
        stopped = agent.vtopo(a, "node", "bridge-veth", "c2", "stop")  # the agent operates the owner's lab
        assert stopped.stdout.strip() == "stopped c2 in lab bridge-veth", stopped.stdout + stopped.stderr
        down = agent.vtopo(a, "link", "bridge-veth", "c3", "br0:p3", "down")
        assert down.returncode == 0, down.stderr
        for target in ("10.0.0.2", "10.0.0.3"):
            assert agent.vtopo(a, "exec", "bridge-veth", "c1", "--", "ping", "-c", "1", "-W", "1", target) \
                .returncode == 1, f"{target} answers although its node is stopped or its link down"
        for again in (agent.vtopo(a, "node", "bridge-veth", "c2", "start"),
                      agent.vtopo(a, "link", "bridge-veth", "c3", "br0:p3", "up")):
            assert again.returncode == 0, again.stderr
        measured = agent.vtopo(a, "ping", "bridge-veth", "c1", "c2", "-c", "2")
        assert measured.returncode == 0 and "2 received" in measured.stdout, measured.stdout + measured.stderr
        rate = agent.vtopo(a, "iperf", "bridge-veth", "c1", "c2", "-t", "1", "--json")
        assert rate.returncode == 0, rate.stderr
        result = json.loads(rate.stdout)
        assert result["status"] == "ok" and result["forward"]["received"]["bits_per_second"] > 1e6, rate.stdout
        assert wait_for(lambda: not [line for line in ps_users() if line.split()[0] == a], 5), \
            "the iperf3 server outlived the run"  # the agent ends it once its client is gone (polled every 0.1 s)

        seen = agent.vtopo(b, "status")
        assert f"lab bridge-veth, owner {a}: running" in seen.stdout and "prefix" not in seen.stdout  # root's, a's
        for refused in (agent.vtopo(b, "destroy", "bridge-veth"),
                        agent.vtopo(b, "exec", "bridge-veth", "c1", "--", "id", "-u"),
                        agent.vtopo(b, "node", "bridge-veth", "c2", "stop"),
                        agent.vtopo(b, "node", "bridge-veth", "c2", "stop", "--explain"),
                        agent.vtopo(b, "link", "bridge-veth", "c3", "br0:p3", "down"),
                        agent.vtopo(b, "link", "bridge-veth", "c3", "br0:p3", "down", "--explain"),
                        agent.vtopo(b, "deploy", "--update", BRIDGE_VETH)):
            assert refused.returncode == 1
            assert refused.stderr.strip().startswith(f"error: lab bridge-veth belongs to {a}; only {a} or root "
                                                     "may "), refused.stderr
            assert refused.stdout == ""
        not_theirs = agent.vtopo(b, "ping", "bridge-veth", "c1", "c2", "-c", "1")
        assert not_theirs.returncode != 0 and f"belongs to {a}" in not_theirs.stdout + not_theirs.stderr
        assert agent.vtopo(b, "cleanup").stderr.strip() == ("error: only root may clean up: it destroys every "
                                                           "user's interrupted labs")

        outsider = agent.vtopo(c, "status")
        assert outsider.returncode == 1
        assert outsider.stderr.strip() == (f"error: {c} may not use the vtopo agent: only root and members of the "
                                           f"vtopo group may. Ask an administrator to run `usermod -aG vtopo {c}`, "
                                           "then log out and in again")
        assert agent.vtopo(None, "status", "bridge-veth").returncode == 0  # untouched by b and c
    finally:
        destroyed = agent.run_as(a, sys.executable, "-c", LIST_MODULES.format(argv=["destroy", "bridge-veth"]))
    assert_light(destroyed)
    assert snapshot() - before == {}


def assert_light(listed: subprocess.CompletedProcess[str]) -> None:
    """A command the agent carries out loads none of the deploy stack: the client starts at once."""
    assert listed.returncode == 0, listed.stderr
    assert not [name for name in listed.stdout.split() if name.split(".")[0] in HEAVY], listed.stdout


def test_two_users_deploy_two_labs_at_once(agent, users, readable_dir):
    before = snapshot()
    labs = {}
    for key, prefix in (("a", "vt1"), ("b", "vt2")):
        topology = star(20)
        topology.name, topology.prefix = f"agent-{key}", prefix
        save_readable(topology, readable_dir / f"{key}.vtopo")
        labs[key] = topology.name
    deploys = {key: agent.spawn(users[key].pw_name, "deploy", "-v", str(readable_dir / f"{key}.vtopo"))
               for key in labs}
    try:
        for key, process in deploys.items():
            shown, errors = process.communicate(timeout=120)
            assert process.returncode == 0, errors
            assert "[1/" in shown, shown  # -v: each operation
        for key, name in labs.items():
            ping = agent.vtopo(users[key].pw_name, "exec", name, "c0", "--", "ping", "-c", "1", "-W", "2", "10.0.1.1")
            assert ping.returncode == 0, ping.stdout + ping.stderr
    finally:
        for key, name in labs.items():
            agent.vtopo(users[key].pw_name, "destroy", name)
    assert snapshot() - before == {}


def test_a_killed_agent_leaves_nothing_that_cleanup_does_not_remove(agent, users, readable_dir):
    before = snapshot()
    topology = star(120)
    topology.name, topology.prefix = "agent-killed", "vt3"
    save_readable(topology, readable_dir / "killed.vtopo")
    journal = STATE / "vt3" / "journal.jsonl"
    deploy = agent.spawn(users["a"].pw_name, "deploy", str(readable_dir / "killed.vtopo"))
    deadline = time.monotonic() + 60
    while not (journal.exists() and journal.read_text().count("\n") >= 50):
        assert deploy.poll() is None, f"the deploy ended before the agent was killed: {deploy.communicate()}"
        assert time.monotonic() < deadline, "the deploy did not get going"
        time.sleep(0.01)
    agent.kill()
    _, errors = deploy.communicate(timeout=30)
    assert deploy.returncode == 1
    assert "the agent closed the connection without an answer" in errors
    status = agent.vtopo(None, "status", "agent-killed")  # in-process: no agent runs
    assert re.search(r"incomplete \(deploy was interrupted at op \d+ of \d+\)", status.stdout), status.stdout

    agent.start()  # over the socket the killed agent left
    cleaned = agent.vtopo(None, "cleanup")
    assert cleaned.returncode == 0, cleaned.stderr
    assert "destroyed lab agent-killed" in cleaned.stdout
    assert snapshot() - before == {}
