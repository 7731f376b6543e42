"""A member's load on what everyone shares: what one member asks of the agent about their own labs, however large and
however often, does not hold up another member's requests."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent_process import Agent
from security.members import RAW_CLIENT, deployed_by, raw, saved, tiny_lab
from vtopo.model import io

pytestmark = pytest.mark.privileged

# As a member: `sys.argv[3]` requests (the JSON line sys.argv[2]) one after another, each on a connection of its own;
# prints the seconds each took to be answered (JSON).
TIMED_REQUESTS = """
connection.close()
took = []
for _ in range(int(sys.argv[3])):
    asking = socket.socket(socket.AF_UNIX)
    asking.connect(sys.argv[1])
    sent = time.monotonic()
    asking.sendall(sys.argv[2].encode() + b"\\n")
    answer = b""
    while not answer.endswith(b"\\n"):
        answer += asking.recv(1 << 20)
    took.append(time.monotonic() - sent)
    assert b'"code": 0' in answer, answer
    asking.close()
    time.sleep(0.05)
print(json.dumps(took))
"""

STATUS = '{"v": 2, "type": "status", "lab": ""}'


VERIFY = json.dumps({"v": 2, "type": "status", "lab": "large", "verify": True})


def test_a_members_verify_of_a_large_lab_does_not_hold_up_anothers_status(agent, users, readable_dir):
    """a asks the agent to probe their lab of 150 containers again and again, on three connections at once (`vtopo
    status --verify`), which the agent did holding the lock every read of its record takes: b's `vtopo status` waited
    for the probes queued before it."""
    a, b = users["a"].pw_name, users["b"].pw_name
    with deployed_by(agent, a, tiny_lab(readable_dir, "large", nodes=150)):
        alone = json.loads(raw(agent, b, "import json\n" + TIMED_REQUESTS, STATUS, "10").stdout)
        probes = json.loads(raw(agent, a, "import json\n" + TIMED_REQUESTS, VERIFY, "2").stdout)
        probing = [threading.Thread(target=raw, args=(agent, a, "import json\n" + TIMED_REQUESTS, VERIFY, "8"))
                   for _ in range(3)]
        for thread in probing:
            thread.start()
        beside = json.loads(raw(agent, b, "import json\n" + TIMED_REQUESTS, STATUS, "20").stdout)
        for thread in probing:
            thread.join()
        print(f"b's status alone {statistics.median(alone):.3f} s, beside a's verify (one takes "
              f"{statistics.median(probes):.3f} s) {statistics.median(beside):.3f} s, slowest {max(beside):.3f} s")
        assert statistics.median(beside) < max(0.1, 3 * statistics.median(alone)), (alone, beside, probes)
        assert statistics.median(beside) < statistics.median(probes) / 4, (alone, beside, probes)
        theirs, others = agent.vtopo(a, "status", "large", "--verify"), agent.vtopo(b, "status", "--verify")
        assert f"owner {a}: running" in theirs.stdout, theirs.stdout
        assert theirs.stdout.endswith("the agent's record is what the host has\n"), theirs.stdout
        assert others.stdout == "no lab is deployed\nthe agent's record is what the host has\n", "a's lab is a's"


# As a member: follow lab sys.argv[2] until its whole state is told a second time, or for sys.argv[3] seconds at most;
# prints when each message came (time.monotonic()) and its type, a line each.
FOLLOWED = """
import json
connection.sendall(json.dumps({"v": 2, "type": "follow", "lab": sys.argv[2]}).encode() + b"\\n")
connection.settimeout(float(sys.argv[3]))
states = 0
try:
    for line in connection.makefile("rb"):
        kind = json.loads(line)["type"]
        print(time.monotonic(), kind, flush=True)
        states += kind == "lab-state"
        if states == 2:
            break
except TimeoutError:
    pass
"""

EXPLAINED = [json.dumps({"v": 2, "type": "node", "lab": "large", "node": "c1", "action": "stop", "explain": True}),
             json.dumps({"v": 2, "type": "save", "lab": "large", "explain": True})]


def test_a_members_explained_changes_leave_their_labs_record_as_it_was_and_hold_up_nobody(agent, users, readable_dir):
    """a asks again and again, on three connections at once, what stopping a node of their lab of 150 containers and
    saving it would run (`node --explain`, `save --explain`), which changes nothing: the agent rebuilt the lab's record
    after each, holding the lock every status takes, and told the lab's followers its whole state again; b's status
    waited up to 0.11 s. Now a's follower hears the lab's state again only once a stops c1 indeed."""
    a, b = users["a"].pw_name, users["b"].pw_name
    with deployed_by(agent, a, tiny_lab(readable_dir, "large", nodes=150)):
        follower = subprocess.Popen(["runuser", "-u", a, "--", sys.executable, "-c", RAW_CLIENT + FOLLOWED,
                                     str(agent.socket), "large", "60"], env=agent.env, text=True,
                                    stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd="/")
        try:
            assert follower.stdout is not None
            for line in follower.stdout:  # the lab's state as it is now
                if line.endswith(" lab-state\n"):
                    break
            alone = json.loads(raw(agent, b, "import json\n" + TIMED_REQUESTS, STATUS, "10").stdout)
            explaining = [threading.Thread(target=raw, args=(agent, a, "import json\n" + TIMED_REQUESTS, line, "8"))
                          for line in (*EXPLAINED, EXPLAINED[0])]
            for thread in explaining:
                thread.start()
            beside = json.loads(raw(agent, b, "import json\n" + TIMED_REQUESTS, STATUS, "20").stdout)
            for thread in explaining:
                thread.join()
            stopping = time.monotonic()
            stopped = agent.vtopo(a, "node", "large", "c1", "stop")
            heard = [line.split() for line in follower.communicate(timeout=120)[0].splitlines()]
        finally:
            follower.kill()
            follower.wait()
        print(f"b's status alone {statistics.median(alone):.3f} s (slowest {max(alone):.3f} s), beside a's explains "
              f"{statistics.median(beside):.3f} s (slowest {max(beside):.3f} s)")
        assert stopped.returncode == 0, stopped.stderr
        told = [float(at) for at, kind in heard if kind == "lab-state"]
        assert len(told) == 1 and told[0] > stopping, heard
        assert statistics.median(beside) < max(0.1, 3 * statistics.median(alone)), (alone, beside)


# As a member: the link rates of lab sys.argv[2] (every 0.1 s) for sys.argv[3] seconds; prints the first line answered.
RATES = """
connection.sendall(b'{"v": 2, "type": "link-rates", "lab": "%s", "every_s": 0.1}\\n' % sys.argv[2].encode())
first = connection.recv(1 << 20).split(b"\\n")[0]
while time.monotonic() - started < float(sys.argv[3]) and connection.recv(1 << 20):
    pass
print(first.decode())
"""


def test_a_member_follows_link_rates_a_bounded_number_of_times_at_once(users, readable_dir):
    """The agent reads a lab's counters in each of its namespaces for every stream, up to ten times a second: a's 30
    streams on 75 links between containers took a CPU of the agent's (4.8 s of its time in 5 s), and b's status
    waited up to 0.26 s. Past rate_streams_per_member, a's next stream is refused in one line; b's is not."""
    a, b = users["a"].pw_name, users["b"].pw_name
    (readable_dir / "b").mkdir(mode=0o755)
    with Agent.running("rate_streams_per_member = 2\n") as agent, \
            deployed_by(agent, a, tiny_lab(readable_dir, "counted", nodes=2)), \
            deployed_by(agent, b, tiny_lab(readable_dir / "b", "theirs", address="10.9.0.2/24")):
        held = [threading.Thread(target=raw, args=(agent, a, RATES, "counted", "5")) for _ in range(2)]
        for thread in held:
            thread.start()
        time.sleep(2)
        third = raw(agent, a, RATES, "counted", "1").stdout
        others = raw(agent, b, RATES, "theirs", "1").stdout
        for thread in held:
            thread.join()
        again = raw(agent, a, RATES, "counted", "1").stdout
    assert (f"error: {a} follows the link rates of labs 2 times already, the most one member may (each reads every "
            "link's counters up to 10 times a second); close a designer or a rate view and try again, or ask an "
            "administrator to raise rate_streams_per_member in") in third, third
    assert '"type": "link-rates-changed"' in others and '"type": "link-rates-changed"' in again, (others, again)


def peak_memory_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))


def test_a_members_startup_command_that_prints_without_end_passes_nothing_through_the_agents_memory(
        agent, users, readable_dir):
    """What a startup command prints went to a file of root's in /tmp that the agent read whole for the deploy's
    messages: a's command printing 512 MiB in their own node (allowed, as theirs) grew the root agent by 547 MiB, and
    what a process it left in the background printed filled the host's disk, as root, for as long as it ran. The
    agent now keeps the end of what comes through a pipe, and what is printed after the command ended is read into
    /dev/null by a process of a's own."""
    a = users["a"].pw_name
    topology = io.load(tiny_lab(readable_dir, "loud"))
    topology.node_named("c1").startup_commands = ["head -c 512M /dev/zero; echo; echo printed",
                                                  "(sleep 1; exec yes) &"]
    before = peak_memory_kib(agent.process.pid)
    lab = saved(topology, readable_dir)
    deployed = agent.vtopo(a, "deploy", "--allow-commands", "c1", str(lab))
    try:
        assert deployed.returncode == 0 and "printed" in deployed.stdout + deployed.stderr, deployed.stderr
        grown = peak_memory_kib(agent.process.pid) - before
        assert grown < 64 << 10, f"the agent grew by {grown >> 10} MiB"
        time.sleep(2)
        theirs = [pid for pid in os.listdir("/proc") if pid.isdigit() and _uid_of(pid) == users["a"].pw_uid]
        printing = [os.readlink(f"/proc/{pid}/fd/1") for pid in theirs if _command_of(pid) == "yes"]
        assert len(printing) == 1 and printing[0].startswith("pipe:"), printing
        readers = [_command_of(pid) for pid in theirs if _reads(pid, printing[0])]
        assert readers == ["cat"], readers
    finally:
        assert agent.vtopo(a, "destroy", "loud").returncode == 0


def _uid_of(pid: str) -> int:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return -1


def _command_of(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _reads(pid: str, pipe: str) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/fd/0") == pipe
    except OSError:
        return False
