"""Attacks 6, 8 and 9, and issue 35's hole 7: the agent holds under abuse. A member's slow request is dropped at the
whole-request deadline, their connections past the cap are refused at once, labs past their quota are refused before
anything is built, requests nested 200,000 deep, with a 5,000-digit number or with a number that is not finite get the
one-line answer any bad request gets, and 40 connections sending large requests leave the agent's memory where it
was."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from agent_process import Agent
from residue import snapshot
from security.members import RAW_CLIENT, raw, tiny_lab
from vtopo.server.policy import Policy

pytestmark = pytest.mark.privileged

LIMITS = """request_seconds = 3
connections_per_user = 4
labs_per_member = 1
nodes_per_member = 3
vm_memory_mb_per_member = 512
"""


@pytest.fixture
def strict_agent():
    with Agent.running(LIMITS) as running:
        yield running


def answer_of(result) -> list[str]:
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_a_slow_sender_is_dropped_at_the_deadline_for_the_whole_request(strict_agent, users):
    sent = raw(strict_agent, users["a"].pw_name, """
for byte in b'{"v": 2, "type": "status", "lab": ""':  # a byte a second: each recv is quick, the request is not
    try:
        connection.sendall(bytes([byte]))
    except BrokenPipeError:
        break
    time.sleep(1)
print(round(time.monotonic() - started))
print(connection.recv(4096).decode().strip())
""")
    seconds, answer = answer_of(sent)
    assert 3 <= int(seconds) <= 5
    assert '"errors": ["error: the request did not arrive within 3 s"]' in answer


def test_connections_past_the_cap_are_refused_and_others_users_are_not(strict_agent, users):
    crowd = raw(strict_agent, users["a"].pw_name, """
held = [socket.socket(socket.AF_UNIX) for _ in range(3)]
for extra in held:
    extra.connect(sys.argv[1])
time.sleep(0.5)
fifth = socket.socket(socket.AF_UNIX)
fifth.connect(sys.argv[1])
print(fifth.recv(4096).decode().strip())
""")
    (answer,) = answer_of(crowd)
    assert (f'"error: {users["a"].pw_name} has 4 connections to the agent open already, the most one user may; close '
            "one (a terminal, a capture) and try again") in answer
    assert strict_agent.vtopo(users["a"].pw_name, "status").returncode == 0, "closed connections are not counted"
    assert strict_agent.vtopo(users["b"].pw_name, "status").returncode == 0


@pytest.mark.parametrize("request_line, says", [  # Python expressions, made in the member's process
    ('b"[" * 200_000', "not a JSON line: it is nested too deeply"),
    ('b\'{"v": 2, "type": "exec", "lab": "x", "node": "c1", "argv": [], "rows": \' + b"9" * 5000 + b"}"',
     "not a JSON line: a number has more than 20 digits"),
    ('b\'{"v": 2, "type": "status", "lab": "\' + b"x" * (9 << 20)', "a request is at most 8388608 bytes"),
], ids=["nested-200000", "digits-5000", "too-long"])
def test_a_deep_huge_or_long_request_gets_the_answer_any_bad_request_gets(agent, users, request_line, says):
    sent = raw(agent, users["a"].pw_name, f"""
try:
    connection.sendall({request_line} + b"\\n")
except BrokenPipeError:
    pass  # the agent stopped reading at the limit; its answer waits
print(connection.recv(4096).decode().strip())
""")
    (answer,) = answer_of(sent)
    assert f'"code": 1, "errors": ["error: {says}"]' in answer


def test_a_members_labs_past_their_quota_are_refused_before_anything_is_built(strict_agent, users, readable_dir):
    a = users["a"].pw_name
    before = snapshot()
    assert strict_agent.vtopo(a, "deploy", str(tiny_lab(readable_dir, "quota-one", nodes=2))).returncode == 0
    try:
        during = snapshot()
        refusals = {
            "labs": strict_agent.vtopo(a, "deploy", str(tiny_lab(readable_dir, "quota-two"))),
            "nodes": strict_agent.vtopo(a, "deploy", "--update", str(tiny_lab(readable_dir, "quota-one", nodes=3))),
        }
        assert refusals["labs"].stderr.strip() == (
            f"error: lab quota-two: {a} has 1 labs deployed, the most one member may (labs_per_member); destroy one "
            f"first, or ask an administrator to raise it in {strict_agent.config_file}")
        assert refusals["nodes"].stderr.strip() == (
            f"error: lab quota-one has 4 nodes and {a}'s other labs 0: more than the 3 one member may have "
            f"(nodes_per_member); destroy a lab first, or ask an administrator to raise it in "
            f"{strict_agent.config_file}")
        assert snapshot() - during == {}
        assert strict_agent.vtopo(users["b"].pw_name, "deploy", str(tiny_lab(readable_dir, "quota-b"))).returncode \
            == 0, "the quota is each member's own"
        assert strict_agent.vtopo(users["b"].pw_name, "destroy", "quota-b").returncode == 0
    finally:
        assert strict_agent.vtopo(a, "destroy", "quota-one").returncode == 0
    vm = readable_dir / "vm.vtopo"
    vm.write_text('{"format": "vtopo", "version": 2, "lab": {"name": "quota-vm"}, "nodes": [{"id": "vm1", "name": '
                  '"vm1", "kind": "vm", "settings": {"memory_mb": 1024}}], "links": []}')
    vm.chmod(0o644)
    refused = strict_agent.vtopo(a, "deploy", str(vm))
    assert refused.stderr.strip() == (
        f"error: lab quota-vm's VMs and image nodes take 1,024 MiB and {a}'s other ones 0 MiB: more than the 512 MiB "
        f"one member may have (vm_memory_mb_per_member); give them less memory, destroy a lab first, or ask an "
        f"administrator to raise it in {strict_agent.config_file}")
    assert snapshot() - before == {}


NON_FINITE = [("link-rates", "every_s", "NaN"), ("link-rates", "every_s", "Infinity"),
              ("link-rates", "every_s", "-Infinity"), ("link-rates", "every_s", "1e999"),
              ("link", "rate_mbit", "Infinity"), ("link", "delay_ms", "NaN")]
ASK_ONCE = """connection.sendall(sys.argv[2].encode() + b"\\n")
print(connection.recv(4096).decode().strip())
"""


def test_a_non_finite_number_is_refused_in_one_line_naming_its_field(agent, users, readable_dir):
    """Issue 35, hole 7: member a asks for the link rates of their lab every NaN or Infinity seconds, or sets a
    link's rate to Infinity: the agent answered "the agent failed: ValueError". Each float field of each request
    is refused when the line is read, in one line naming it; a finite every_s of 1e300 s gives a reading at once."""
    a = users["a"].pw_name
    assert agent.vtopo(a, "deploy", str(tiny_lab(readable_dir, "finite", nodes=2))).returncode == 0
    try:
        for verb, field, number in NON_FINITE:
            verb_fields = '"a": "c1", "b": "br", "action": "set", ' if verb == "link" else ""
            line = f'{{"v": 2, "type": "{verb}", "lab": "finite", {verb_fields}"{field}": {number}}}'
            answer = answer_of(raw(agent, a, ASK_ONCE, line))
            says = f"{verb}.{field} must be a finite number, not {float(number)}"
            assert len(answer) == 1 and f'"code": 1, "errors": ["error: {says}"]' in answer[0], answer
        line = '{"v": 2, "type": "link-rates", "lab": "finite", "every_s": 1e300}'
        (reading,) = answer_of(raw(agent, a, ASK_ONCE, line))
        assert {link for links in json.loads(reading)["links"] for link in links} == {"l1", "l2"}  # by rate
        assert "owner " + a + ": running" in agent.vtopo(a, "status", "finite").stdout
    finally:
        assert agent.vtopo(a, "destroy", "finite").returncode == 0


def resident_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def test_forty_connections_with_large_requests_leave_the_agents_memory_bounded(agent, users):
    assert agent.process is not None
    assert agent.vtopo(users["a"].pw_name, "status").returncode == 0  # the agent has served once
    before = resident_mib(agent.process.pid)
    flood = subprocess.Popen(["runuser", "-u", users["a"].pw_name, "--", sys.executable, "-c", RAW_CLIENT + """
chunk = b'{"v": 2, "type": "status", "lab": "' + b"x" * (4 << 20)  # never ends: 4 MiB and no newline
crowd = []
for _ in range(40):
    extra = socket.socket(socket.AF_UNIX)
    extra.connect(sys.argv[1])
    try:
        extra.sendall(chunk)  # the agent reads it all, or refuses the connection past the cap
    except OSError:
        pass
    crowd.append(extra)
print("sent", flush=True)
time.sleep(5)
""", str(agent.socket)], stdout=subprocess.PIPE, text=True)
    try:
        assert flood.stdout is not None and flood.stdout.readline().strip() == "sent"
        time.sleep(1)
        during = resident_mib(agent.process.pid)
    finally:
        flood.wait(timeout=30)
    time.sleep(1)
    after = resident_mib(agent.process.pid)
    print(f"agent resident memory: {before:.0f} MiB before, {during:.0f} MiB with 40 connections sending 4 MiB "
          f"requests, {after:.0f} MiB after")
    allowed = Policy().connections_per_user  # each holds at most a request's 8 MiB, read
    assert during - before < allowed * 8 + 32 and after - before < 32, (before, during, after)
