"""The designer following a class-sized lab: COUNT containers, laid out in rows under their bridges, deployed through
the agent and opened in the designer (offscreen), which follows the lab by the agent's pushed changes and shows
each link's rate. Prints; asserts no times.

- The agent's and the designer's CPU over IDLE_S idle seconds (target: under 1% of a core each): the designer
  showing the whole lab (which it draws as an overview), then zoomed in to 100% (each node and link drawing itself,
  with its labels); against the same lab followed by `vtopo status --watch`, the plainest follower, in the same run.
  Idle is what a user sees: no one sends traffic, but each container's kernel sends IPv6 router solicitations, which
  its bridge floods to every port, so every link carries a packet now and then.
- A carrier change (`ip link set eth0 down` in a node) to the canvas: from just before the command to the link
  drawn down (target: at most 100 ms).
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
from benchmarks.test_deploy_bench import address, seconds
from benchmarks.test_live_bench import cpu_seconds
from tests.agent.designer_script import IMPORTS, REPOSITORY, WINDOW
from vtopo.client.agent_client import AgentClient
from vtopo.lab_terms import Trust
from vtopo.model import io
from vtopo.model.topology import Endpoint, Interface, Link, Node, Position, Topology

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

COUNT = int(os.environ.get("VTOPO_DESIGNER_BENCH_COUNT", "2000"))
IDLE_S = float(os.environ.get("VTOPO_DESIGNER_BENCH_IDLE_S", "60"))
PORTS_PER_BRIDGE = 1000  # a Linux bridge takes at most 1,024 ports
ROW = 50  # containers in a row of the layout
SPACING = 100.0  # between two containers' centres, as a user lays a lab out: room for the labels
TRIALS = 5

DESIGNER = IMPORTS + """
from PySide6.QtCore import QEventLoop, QTimer

def idle(seconds):  # the event loop alone, woken by nothing but the agent's changes
    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()

app = QApplication([])
""" + WINDOW + """
def settled():  # the whole state has come, the first check is shown, and in detail every label is placed
    scene = window.editor.scene
    return (window.deploy.deployed_lab == lab.stem and not window.analyzer.pending
            and (not scene.detailed or all(link.placed for link in scene.links.values())))

wait_for(settled, 600)
idle(5)
print("following", flush=True)
idle(float(sys.argv[4]))
window.view.reset_zoom()  # 100%: the nodes and links in view draw themselves
wait_for(settled, 600)
idle(5)
print("zoomed", flush=True)
idle(float(sys.argv[4]))
print("idled", flush=True)
for name in sys.argv[5].split(","):
    link = window.editor.scene.links[name]
    print("ready", flush=True)
    while not link.down:  # looked at every millisecond: the time it is drawn
        QTest.qWait(1)
    print(time.time(), flush=True)
    while link.down:
        QTest.qWait(1)
"""


def two_bridges(count: int) -> Topology:
    """`count` containers, each on one of count / PORTS_PER_BRIDGE bridges, all in one subnet: the bridges in a row,
    and under them the containers, ROW to a row."""
    topology = Topology(name=f"designer{count}", prefix="vd")
    width = ROW * SPACING
    bridges = -(-count // PORTS_PER_BRIDGE)
    for bridge in range(bridges):
        topology.add_node(Node(id=f"br{bridge}", name=f"br{bridge}", kind="bridge", settings={"forward_delay": 0.0},
                               position=Position(width * (bridge + 1) / (bridges + 1), 0.0)))
    for i in range(count):
        topology.add_node(Node(id=f"c{i}", name=f"c{i}", kind="container",
                               position=Position(i % ROW * SPACING, 4 * SPACING + i // ROW * SPACING)))
        topology.add_link(Link(id=f"l{i}", a=Endpoint(f"c{i}", "eth0", Interface(addresses=[address(i)])),
                               b=Endpoint(f"br{i // PORTS_PER_BRIDGE}", f"p{i % PORTS_PER_BRIDGE + 1}")))
    return topology


def line_of(process: subprocess.Popen[str], wanted: str = "") -> str:
    """The next line `process` prints (that starts with `wanted`)."""
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        assert line, f"the designer ended: {process.stderr.read() if process.stderr else ''}"
        if line.startswith(wanted):
            return line.strip()


def idle_shares(pids: tuple[int, int], seconds_: float) -> tuple[float, float]:
    """The share of a core each of two processes takes over `seconds_`."""
    before = [cpu_seconds(pid) for pid in pids]
    time.sleep(seconds_)
    after = [cpu_seconds(pid) for pid in pids]
    return (after[0] - before[0]) / seconds_, (after[1] - before[1]) / seconds_


def test_the_designer_follows_a_class_sized_lab(tmp_path: Path) -> None:
    topology = two_bridges(COUNT)
    lab = tmp_path / f"{topology.name}.vtopo"
    io.save(topology, lab)
    pulled = [f"l{i}" for i in range(0, COUNT, COUNT // TRIALS)][:TRIALS]
    with Agent.running() as agent:
        assert agent.process is not None
        client = AgentClient(agent.socket)
        client.deploy(io.dumps(topology), Trust())
        try:
            prefix = client.status(topology.name)[0].prefix
            designer = subprocess.Popen([sys.executable, "-c", DESIGNER, str(REPOSITORY), str(tmp_path), str(lab),
                                         str(IDLE_S), ",".join(pulled)], env={**agent.env, "QT_QPA_PLATFORM":
                                                                                "offscreen"},
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                line_of(designer, "following")
                whole = idle_shares((agent.process.pid, designer.pid), IDLE_S)
                line_of(designer, "zoomed")
                zoomed = idle_shares((agent.process.pid, designer.pid), IDLE_S)
                line_of(designer, "idled")
                to_canvas = []
                for name in pulled:
                    line_of(designer, "ready")
                    netns = f"{prefix}-c{name[1:]}"
                    started = time.time()
                    subprocess.run(["ip", "-n", netns, "link", "set", "eth0", "down"], check=True)
                    to_canvas.append(float(line_of(designer)) - started)
                    subprocess.run(["ip", "-n", netns, "link", "set", "eth0", "up"], check=True)
            finally:
                designer.kill()
                designer.wait()
            follower = subprocess.Popen([sys.executable, "-m", "vtopo", "status", topology.name, "--watch"],
                                        env=agent.env, stdout=subprocess.DEVNULL)
            time.sleep(2)
            watched = idle_shares((agent.process.pid, follower.pid), IDLE_S)
            follower.kill()
            follower.wait()
        finally:
            client.destroy(topology.name)
    canvas = statistics.median(to_canvas)
    print(f"\n{COUNT} containers, the designer following, {IDLE_S:.0f} idle seconds: showing the whole lab, agent "
          f"{whole[0]:.2%} of a core, designer {whole[1]:.2%}; zoomed in, agent {zoomed[0]:.2%}, designer "
          f"{zoomed[1]:.2%}; `vtopo status --watch` instead: agent {watched[0]:.2%}, follower {watched[1]:.2%}; "
          f"carrier change to the canvas: {seconds(canvas)} (median of {TRIALS})")
    lines = ["### The designer following a class-sized lab", "", machine_facts(), "",
             f"A lab of {COUNT} containers on {-(-COUNT // PORTS_PER_BRIDGE)} bridges, laid out {ROW} to a row under "
             "their bridges, deployed through the agent and opened in the designer (offscreen), which follows it by "
             "the agent's pushed changes and shows each link's rate: each process's CPU over "
             f"{IDLE_S:.0f} idle seconds (target: under 1% of a core each) with the designer showing the whole lab "
             "(drawn as an overview), then zoomed in to 100%, against the same lab followed by `vtopo status --watch` "
             "in the same run; and the time from just before `ip link set eth0 down` in a node to the link drawn down "
             f"on the canvas (median of {TRIALS}; target: at most 100 ms). Idle means no one sends traffic: each "
             "container's kernel still sends IPv6 router solicitations, which its bridge floods to every port, so "
             "every link's rate changes now and then.", "",
             "| | the designer following, whole lab | the designer following, zoomed in | "
             "`vtopo status --watch` following | target |", "|---|---|---|---|---|",
             f"| agent CPU, idle | {whole[0]:.2%} | {zoomed[0]:.2%} | {watched[0]:.2%} | under 1% |",
             f"| follower CPU, idle | {whole[1]:.2%} | {zoomed[1]:.2%} | {watched[1]:.2%} | under 1% |",
             f"| carrier change to the canvas | | {seconds(canvas)} | | at most 100 ms |"]
    write_fragment("designer-live", "\n".join(lines))
