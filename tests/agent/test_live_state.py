"""The agent pushes each lab's state as it changes: the designer (as a member) sees a cable pulled inside a node on its
canvas within 100 ms (the median of three pulls), with no status read after its deploy; `vtopo status --watch` prints
each change; a member cannot follow another member's lab, even by following its name before it is deployed; followers
that come and go, and an agent that stops, leave no descriptor or thread behind."""
from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agent_process import Agent
from residue import snapshot
from tests.agent.designer_script import DEPLOY, IMPORTS, WINDOW, run_designer
from vtopo.deployed import DeployedLab
from vtopo.lab_terms import HostFacts
from vtopo.model import io
from vtopo.model.topology import Node, Topology
from vtopo.resources import TOPOLOGIES

LAB = "bridge-veth"
PULLED = "c1-eth0--br0-p1"  # the link from c1's eth0 to the bridge
PULLS = 3  # the cable is pulled (and plugged back) this many times

DESIGNER = IMPORTS + f"""
PULLS = {PULLS}
""" + """
import traceback
from tests.gui.helpers import answer_next_dialog
from vtopo.client.agent_client import AgentClient

reads = []
status = AgentClient.status
AgentClient.status = lambda self, lab=None: reads.append("".join(traceback.format_stack())) or status(self, lab)

def when(condition):  # the time `condition` first holds, looked at every millisecond
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, window.log.toPlainText()[-2000:]
        QTest.qWait(1)
    return time.time()

app = QApplication([])
""" + WINDOW + DEPLOY + """
QTest.qWait(500)  # whatever the deploy's end asks of the agent is done
reads.clear()
link = window.editor.scene.links[sys.argv[4]]
seconds = []
for _ in range(PULLS):
    pull = subprocess.Popen([sys.executable, "-m", "vtopo", "exec", "bridge-veth", "c1", "--", "sh", "-c",
                             "date +%s.%N; ip link set eth0 down"], stdout=subprocess.PIPE, text=True)
    drawn = when(lambda: link.down)
    pulled = float(pull.communicate()[0].split()[0])  # in c1 just before `ip link set`: the time includes its start
    seconds.append(drawn - pulled)
    plugged = subprocess.run([sys.executable, "-m", "vtopo", "exec", "bridge-veth", "c1", "--", "ip", "link", "set",
                              "eth0", "up"])
    when(lambda: not link.down)
reads_after_deploy = list(reads)
answer_next_dialog("Destroy")
QTest.mouseClick(toolbar.widgetForAction(window.menu_actions.destroy), Qt.MouseButton.LeftButton)
wait_for(lambda: not window.deploy.busy and window.deploy.deployed_lab == "")
print(json.dumps({"seconds": seconds, "reads": reads_after_deploy, "log": window.log.toPlainText()}))
"""


@pytest.mark.privileged
def test_the_designer_as_a_member_sees_a_cable_pulled_inside_a_node_within_100_ms(agent, users, readable_dir):
    user = users["a"]
    os.chown(readable_dir, user.pw_uid, user.pw_gid)
    before = snapshot()
    seen = run_designer(agent, user.pw_name, DESIGNER, readable_dir, TOPOLOGIES / f"{LAB}.vtopo", PULLED,
                        timeout=300)
    assert 0 < statistics.median(seen["seconds"]) <= 0.1, seen  # of PULLS: one pull delayed by a busy machine
    assert seen["reads"] == [], "the designer read the lab's status instead of hearing of the change"
    assert "lab destroyed" in seen["log"]
    assert snapshot() - before == {}


def _lines_until(watch: subprocess.Popen[str], text: str, seconds: float = 30) -> list[str]:
    """What `vtopo status --watch` printed, up to the first line holding `text`; a watch silent for `seconds` is
    killed, so that a line that never comes fails the test instead of blocking it."""
    assert watch.stdout is not None
    lines: list[str] = []
    deadline = threading.Timer(seconds, watch.kill)
    deadline.start()
    try:
        while line := watch.stdout.readline():
            lines.append(line)
            if text in line:
                return lines
    finally:
        deadline.cancel()
    raise AssertionError(f"no line with {text!r} within {seconds} s: {lines} "
                         f"{watch.stderr.read() if watch.stderr and watch.poll() is not None else ''}")


@contextmanager
def _watched(agent: Agent, member: str, readable_dir: Path) -> Iterator[subprocess.Popen[str]]:
    """The member's lab deployed, and `vtopo status --watch` of it once it has printed the lab; the block's end
    destroys the lab and leaves nothing behind."""
    before = snapshot()
    lab = readable_dir / f"{LAB}.vtopo"
    lab.write_text((TOPOLOGIES / f"{LAB}.vtopo").read_text())
    lab.chmod(0o644)
    assert agent.vtopo(member, "deploy", str(lab)).returncode == 0
    watch = agent.spawn(member, "status", LAB, "--watch")
    try:
        assert "link c3:eth0-br0:p3" in _lines_until(watch, "link c3:eth0-br0:p3")[-1]
        yield watch
        watch.terminate()
        watch.wait(timeout=30)
    finally:
        watch.kill()
        agent.vtopo(None, "destroy", LAB)
    assert snapshot() - before == {}


@pytest.mark.privileged
def test_status_watch_prints_each_change_as_the_agent_hears_of_it(agent, users, readable_dir):
    member = users["a"].pw_name
    with _watched(agent, member, readable_dir) as watch:
        assert agent.vtopo(member, "exec", LAB, "c1", "--", "ip", "link", "set", "eth0", "down").returncode == 0
        assert "c1:eth0 is down" in _lines_until(watch, "link c1:eth0-br0:p1")[-1]
        stopped = agent.vtopo(member, "node", LAB, "c2", "stop")
        assert stopped.returncode == 0, stopped.stderr
        assert _lines_until(watch, "node c2")[-1].split()[-1] == "stopped"
        assert agent.vtopo(member, "destroy", LAB).returncode == 0
        assert _lines_until(watch, "not deployed")


@pytest.mark.privileged
def test_events_the_agent_had_no_room_for_are_probed_not_lost(agent, users, readable_dir):
    """While the agent is stopped, a cable inside a node goes down and up thousands of times and stays down: more
    than its socket holds. Told it missed events, the agent probes the lab, and its followers hear the cable down."""
    member = users["a"].pw_name
    with _watched(agent, member, readable_dir) as watch:
        assert agent.process is not None
        agent.process.send_signal(signal.SIGSTOP)
        try:
            flaps = "link set eth0 down\nlink set eth0 up\n" * 5000 + "link set eth0 down\n"
            subprocess.run(DeployedLab.find(LAB).command_in("c1", ["ip", "-batch", "-"]), input=flaps, text=True,
                           check=True)
        finally:
            agent.process.send_signal(signal.SIGCONT)
        pulled = _lines_until(watch, "link c1:eth0-br0:p1")[-1]
        assert pulled.split()[2] == "down;" and "c1:eth0" in pulled, pulled
        assert pulled.strip() in agent.vtopo(member, "status", LAB).stdout


@pytest.mark.privileged
def test_status_watch_hears_a_vm_whose_libvirt_domain_is_destroyed_under_it(agent, readable_dir):
    """Root's lab runs a VM as a libvirt domain; `virsh destroy` ends it behind vtopo's back: libvirt's lifecycle
    event reaches the follower (no probe runs: the status read after it is the record's)."""
    guest = Path(os.environ.get("VTOPO_GUEST_DIR", HostFacts.guest_dir))
    if not (guest / "vmlinuz").exists():
        pytest.skip(f"no guest kernel in {guest}: setup builds it")
    before = snapshot()
    topology = Topology(name="vm-events", vm_backend="libvirt")
    topology.add_node(Node(id="v1", name="v1", kind="vm", settings={"memory_mb": 128}))
    lab = readable_dir / "vm-events.vtopo"
    io.save(topology, lab)
    deployed = agent.vtopo(None, "deploy", str(lab))
    assert deployed.returncode == 0, deployed.stderr
    watch = agent.spawn(None, "status", "vm-events", "--watch")
    try:
        assert _lines_until(watch, "node v1")[-1].split()[-1] == "running"
        prefix = agent.vtopo(None, "status", "vm-events").stdout.split("(prefix ", 1)[1].split(")")[0]
        subprocess.run(["virsh", "-c", "qemu:///system", "destroy", f"{prefix}-v1"], capture_output=True, check=True)
        assert _lines_until(watch, "node v1", seconds=10)[-1].split()[-1] != "running"
        watch.terminate()
        watch.wait(timeout=30)
    finally:
        watch.kill()
        agent.vtopo(None, "destroy", "vm-events")
    assert snapshot() - before == {}


FOLLOW = """
import json, socket, sys
connection = socket.socket(socket.AF_UNIX)
connection.connect(sys.argv[1])
connection.sendall(json.dumps({"v": 2, "type": "follow", "lab": sys.argv[2]}).encode() + b"\\n")
connection.settimeout(float(sys.argv[3]))
heard = b""
try:
    while chunk := connection.recv(1 << 16):
        heard += chunk
except TimeoutError:
    pass
print(heard.decode())
"""


@pytest.mark.privileged
def test_a_member_cannot_follow_another_members_lab(agent, users, readable_dir):
    """b asks the agent's socket itself, as the protocol allows any client to: for a's lab, and for its name before a
    deploys it. b hears the name and owner every member sees in the list of labs, and nothing of its nodes and links,
    not even when a's cable is pulled."""
    owner, other = users["a"].pw_name, users["b"].pw_name
    lab = readable_dir / f"{LAB}.vtopo"
    lab.write_text((TOPOLOGIES / f"{LAB}.vtopo").read_text())
    lab.chmod(0o644)
    early = subprocess.Popen(["runuser", "-u", other, "--", sys.executable, "-c", FOLLOW, str(agent.socket), LAB, "8"],
                             stdout=subprocess.PIPE, text=True, cwd="/")
    try:
        time.sleep(1)  # b follows the name first
        assert agent.vtopo(owner, "deploy", str(lab)).returncode == 0
        assert agent.vtopo(owner, "exec", LAB, "c1", "--", "ip", "link", "set", "eth0", "down").returncode == 0
        refused = agent.run_as(other, sys.executable, "-c", FOLLOW, str(agent.socket), LAB, "5")
        watched = agent.vtopo(other, "status", LAB, "--watch", timeout=30)
        heard = [json.loads(line) for line in early.communicate(timeout=60)[0].splitlines() if line]
    finally:
        early.kill()
        agent.vtopo(None, "destroy", LAB)
    assert f"lab {LAB} belongs to {owner}" in refused.stdout and '"code": 1' in refused.stdout
    assert watched.returncode != 0 and f"lab {LAB} belongs to {owner}; only {owner} or root may follow it" in \
        watched.stderr
    assert {message["type"] for message in heard} == {"labs-listed", "lab-state"}, heard
    assert all(message["status"] is None for message in heard if message["type"] == "lab-state")
    assert any(entry["lab"] == LAB for message in heard if message["type"] == "labs-listed"
               for entry in message["labs"])


def _follower(agent: Agent) -> socket.socket:
    """A client following the lab on the agent's socket, once the agent has answered."""
    follower = socket.socket(socket.AF_UNIX)
    follower.connect(str(agent.socket))
    follower.sendall(json.dumps({"v": 2, "type": "follow", "lab": LAB}).encode() + b"\n")
    follower.recv(1 << 16)
    return follower


def _counts(pid: int) -> tuple[int, int]:
    """An agent's open descriptors and threads."""
    return len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task"))


@pytest.mark.privileged
def test_followers_that_leave_and_an_agent_that_stops_leave_nothing_behind(users, readable_dir):
    member = users["a"].pw_name
    lab = readable_dir / f"{LAB}.vtopo"
    lab.write_text((TOPOLOGIES / f"{LAB}.vtopo").read_text())
    lab.chmod(0o644)
    with Agent.running() as agent:
        assert agent.process is not None
        assert agent.vtopo(member, "deploy", str(lab)).returncode == 0
        try:
            _follower(agent).close()  # the agent's watcher starts with its first follower
            time.sleep(0.5)
            before = _counts(agent.process.pid)
            followers = [_follower(agent) for _ in range(8)]
            watches = [agent.spawn(member, "status", LAB, "--watch") for _ in range(2)]
            for watch in watches:
                _lines_until(watch, "link c3:eth0-br0:p3")
            assert _counts(agent.process.pid)[1] >= before[1] + 10  # a thread each while they follow
            for follower in followers[:4]:
                follower.close()
            for follower in followers[4:]:  # reset, as by a client killed
                follower.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                follower.close()
            for watch in watches:
                watch.terminate()
                watch.wait(timeout=30)
            deadline = time.monotonic() + 10
            while _counts(agent.process.pid) != before and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _counts(agent.process.pid) == before
            watch = agent.spawn(member, "status", LAB, "--watch")
            _lines_until(watch, "link c3:eth0-br0:p3")
        finally:
            agent.vtopo(member, "destroy", LAB)
        agent.kill(signal.SIGTERM)
        assert watch.wait(timeout=30) == 1  # the agent went away: the watch says so and ends
        assert watch.stdout is not None and "no longer followed" in watch.stdout.read()
