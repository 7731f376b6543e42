"""Attacks 3 and 4: a lab has one identity. Names are unique on the host, vtopo chooses prefixes, and no string is
both a lab's name and another's prefix: member b cannot take member a's name, a prefix equal to a's name, or a name
equal to a's prefix, one after the other or at the same moment; and root's commands by name act on the lab of that
name."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from residue import snapshot
from security.members import (deploy_both, deployed_by, namespace_file, namespace_of_exec, one_line, prefix_of, raw,
                              tiny_lab)
from vtopo.model import io
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

pytestmark = pytest.mark.privileged


def assert_lab_is_theirs(agent, owner: str, lab: str) -> None:
    """`lab` runs, belongs to `owner`, and the owner's and root's commands by its name run in its namespace."""
    shown = agent.vtopo(None, "status", lab)
    assert f"lab {lab} (prefix {prefix_of(lab)})" in shown.stdout and f"owner {owner}: running" in shown.stdout, \
        shown.stdout
    assert namespace_of_exec(agent, owner, lab, "c1") == namespace_of_exec(agent, None, lab, "c1") == \
        namespace_file(lab, "c1")


def test_a_second_lab_of_a_name_is_refused_naming_its_owner(agent, users, readable_dir):
    a, b = users["a"].pw_name, users["b"].pw_name
    (readable_dir / "b").mkdir(mode=0o755)
    with deployed_by(agent, a, tiny_lab(readable_dir, "shared", address="10.9.0.1/24")):
        during = snapshot()
        theirs = agent.vtopo(b, "deploy", str(tiny_lab(readable_dir / "b", "shared", address="10.9.0.2/24")))
        assert one_line(theirs) == (f"error: a lab named shared is already deployed, by {a}; destroy it first, or give "
                                    "this lab another name")
        assert snapshot() - during == {}, "nothing of b's lab was built"
        assert_lab_is_theirs(agent, a, "shared")
        assert "10.9.0.1/24" in agent.vtopo(a, "exec", "shared", "c1", "--", "ip", "-br", "addr").stdout
        refused = agent.vtopo(b, "destroy", "shared")
        assert one_line(refused) == f"error: lab shared belongs to {a}; only {a} or root may destroy it"


def test_a_prefix_equal_to_a_labs_name_or_prefix_is_refused(agent, users, readable_dir):
    a, b = users["a"].pw_name, users["b"].pw_name
    with deployed_by(agent, a, tiny_lab(readable_dir, "alpha")):
        for hint in ("alpha", prefix_of("alpha")):
            lab = tiny_lab(readable_dir, f"bravo-{hint}", prefix=hint)
            assert one_line(agent.vtopo(b, "deploy", str(lab))) == (
                f"error: lab bravo-{hint} asks for the prefix {hint}, which is the name or prefix of a deployed lab; "
                "remove lab.prefix from the file and vtopo chooses one")
        assert_lab_is_theirs(agent, a, "alpha")


def test_a_name_equal_to_a_labs_prefix_is_refused(agent, users, readable_dir):
    a, b = users["a"].pw_name, users["b"].pw_name
    with deployed_by(agent, a, tiny_lab(readable_dir, "charlie")):
        taken = prefix_of("charlie")
        assert one_line(agent.vtopo(b, "deploy", str(tiny_lab(readable_dir, taken)))) == (
            f"error: {taken} is the prefix of a deployed lab; give this lab another name")
        for verb in (["destroy", taken], ["exec", taken, "c1", "--", "true"], ["status", taken]):
            assert "no deployed lab is named" in one_line(agent.vtopo(b, *verb)), verb  # a prefix names no lab
        assert_lab_is_theirs(agent, a, "charlie")


@pytest.mark.parametrize("race", ["same name", "prefix equal to a name", "name equal to a prefix"])
def test_two_members_racing_for_one_identity_leave_one_lab_which_everyone_finds(race, agent, users, readable_dir):
    a, b = users["a"].pw_name, users["b"].pw_name
    before = snapshot()
    if race == "same name":
        (readable_dir / "b").mkdir(mode=0o755)
        labs = {a: tiny_lab(readable_dir, "delta"), b: tiny_lab(readable_dir / "b", "delta", address="10.9.0.2/24")}
    elif race == "prefix equal to a name":
        labs = {a: tiny_lab(readable_dir, "echo1"), b: tiny_lab(readable_dir, "foxtrot", prefix="echo1")}
    else:
        labs = {a: tiny_lab(readable_dir, "golf", prefix="hotel1"), b: tiny_lab(readable_dir, "hotel1")}
    names = {user: path.stem for user, path in labs.items()}
    results = deploy_both(agent, (a, str(labs[a])), (b, str(labs[b])))
    won = [user for user, result in results.items() if result.returncode == 0]
    try:
        assert len(won) == 1, {user: result.stderr for user, result in results.items()}
        (winner,), loser = won, b if won == [a] else a
        assert "error: " in one_line(results[loser])
        assert_lab_is_theirs(agent, winner, names[winner])
        if names[loser] != names[winner]:
            assert "no deployed lab is named" in one_line(agent.vtopo(None, "status", names[loser]))
    finally:
        for user in won:
            assert agent.vtopo(user, "destroy", names[user]).returncode == 0
    assert snapshot() - before == {}


STREAM_RATES = """
import json, sys
from pathlib import Path
from vtopo.client.agent_client import AgentClient, AgentError
try:
    for changes in AgentClient(Path(sys.argv[1])).link_rates(sys.argv[2], float(sys.argv[3])):
        print(json.dumps({link: [rate.bits_per_second, rate.packets_per_second] for link, rate in changes.items()}),
              flush=True)
except AgentError as error:
    print("\\n".join(error.result.errors), flush=True)
"""


def pair_lab(directory: Path, name: str, prefix: str) -> Path:
    """Containers c1 and c2 linked to each other: the link's counters are read in c1's namespace, by its name."""
    topology = Topology(name=name, prefix=prefix)
    for index in (1, 2):
        topology.add_node(Node(id=f"c{index}", name=f"c{index}", kind="container"))
    topology.add_link(Link(id="l1", a=Endpoint("c1", "eth0", Interface(addresses=["10.9.0.1/24"])),
                           b=Endpoint("c2", "eth0", Interface(addresses=["10.9.0.2/24"]))))
    path = directory / f"{name}.vtopo"
    io.save(topology, path)
    path.chmod(0o644)
    return path


def test_a_link_rates_stream_ends_with_its_lab_and_never_reads_the_next_lab_of_its_name(agent, users, readable_dir):
    """Issue 35, hole 6: member a streams the link rates of their lab every 15 s, destroys it, and b deploys a lab of
    the same name and prefix at once and sends traffic over its link. a's stream read namespaces by name, so its
    next reading was b's; it now ends with one line as soon as a's lab is gone."""
    a, b = users["a"].pw_name, users["b"].pw_name
    lab = pair_lab(readable_dir, "counted", prefix="vtcnt")
    assert agent.vtopo(a, "deploy", str(lab)).returncode == 0
    stream = subprocess.Popen(["runuser", "-u", a, "--", sys.executable, "-c", STREAM_RATES, str(agent.socket),
                               "counted", "15"], env=agent.env, stdout=subprocess.PIPE, text=True, cwd="/",
                              start_new_session=True)
    try:
        assert set(json.loads(stream.stdout.readline())) == {"l1"}, "a's first reading, at once"
        assert agent.vtopo(a, "destroy", "counted").returncode == 0
        with deployed_by(agent, b, lab):
            assert prefix_of("counted") == "vtcnt"
            pinged = agent.vtopo(b, "exec", "counted", "c1", "--", "ping", "-c", "5", "-i", "0.2", "10.9.0.2")
            assert pinged.returncode == 0, pinged.stdout + pinged.stderr
            try:
                rest, _ = stream.communicate(timeout=30)
            except subprocess.TimeoutExpired:  # it went on reading: what it read comes with the failure
                os.killpg(stream.pid, signal.SIGKILL)
                rest, _ = stream.communicate()
    finally:
        if stream.poll() is None:
            os.killpg(stream.pid, signal.SIGKILL)  # runuser and the client
            stream.wait()
    assert rest == "error: lab counted was destroyed: its link rates end here\n"


def test_the_agent_resolves_the_next_lab_of_a_name_anew_for_its_own_member(agent, users, readable_dir):
    """The agent keeps each running lab resolved (vtopo.host.resolved_labs). Member a operates their lab (the agent
    resolves and keeps it), destroys it, and b deploys a lab of the same name and prefix, with another node and
    another address: b's requests read b's lab, never what the agent kept of a's."""
    a, b = users["a"].pw_name, users["b"].pw_name
    (readable_dir / "b").mkdir(mode=0o755)
    with deployed_by(agent, a, tiny_lab(readable_dir, "kept", prefix="vtkept")):
        assert agent.vtopo(a, "node", "kept", "c1", "stop").returncode == 0
        assert agent.vtopo(a, "node", "kept", "c1", "start").returncode == 0
    with deployed_by(agent, b, tiny_lab(readable_dir / "b", "kept", prefix="vtkept", address="10.9.0.2/24",
                                        nodes=2)):
        assert prefix_of("kept") == "vtkept"
        stopped = agent.vtopo(b, "node", "kept", "c2", "stop")
        assert stopped.returncode == 0, stopped.stderr
        assert "10.9.0.2/24" in agent.vtopo(b, "exec", "kept", "c1", "--", "ip", "-br", "addr").stdout
        assert agent.vtopo(b, "link", "kept", "c2", "br", "set", "--rate", "5").returncode == 0
        assert one_line(agent.vtopo(a, "node", "kept", "c1", "stop")) == (
            f"error: lab kept belongs to {b}; only {b} or root may stop nodes of it")


# As a member: the agent's list of labs, asked on a connection of its own every 20 ms for `sys.argv[2]` seconds; prints
# each thing the agent said it was doing to lab `sys.argv[3]` (JSON).
WHAT_THE_AGENT_DOES = """
connection.close()
doing = set()
while time.monotonic() - started < float(sys.argv[2]):
    asking = socket.socket(socket.AF_UNIX)
    asking.connect(sys.argv[1])
    asking.sendall(b'{"v": 2, "type": "labs"}\\n')
    answer = b""
    while not answer.endswith(b"\\n"):
        answer += asking.recv(65536)
    asking.close()
    doing |= {lab["doing"] for lab in json.loads(answer)["data"]["labs"] if lab["lab"] == sys.argv[3]}
    time.sleep(0.02)
print(json.dumps(sorted(doing)))
"""


def test_a_deploy_under_another_members_lab_name_takes_nothing_of_that_lab(agent, users, readable_dir):
    """b deploys a large lab under the name of a's: the agent refuses it before b's lab is compiled, where it held a's
    lab for b (shown to everyone as being deployed, by a job of b's that a could not cancel, a's own requests on it
    waiting) for as long as b's lab took to compile, and b could send one such deploy after another."""
    a, b = users["a"].pw_name, users["b"].pw_name
    (readable_dir / "b").mkdir(mode=0o755)
    with deployed_by(agent, a, tiny_lab(readable_dir, "kept")):
        large = tiny_lab(readable_dir / "b", "kept", nodes=250)
        theirs: list[subprocess.CompletedProcess[str]] = []
        deploying = threading.Thread(target=lambda: theirs.extend(agent.vtopo(b, "deploy", str(large))
                                                                  for _ in range(3)))
        deploying.start()
        seen = raw(agent, a, "import json\n" + WHAT_THE_AGENT_DOES, "8", "kept").stdout
        deploying.join()
        assert len(theirs) == 3, "b's three deploys took more than the 8 s watched"
        for refused in theirs:
            assert one_line(refused) == (f"error: a lab named kept is already deployed, by {a}; destroy it first, or "
                                         "give this lab another name")
        assert json.loads(seen) == [""], "a's lab was shown as being deployed"
        assert_lab_is_theirs(agent, a, "kept")
