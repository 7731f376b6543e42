"""802.1Q tags in captures, as a member through the agent, on two OVS switches joined by a trunk: `vtopo capture -f
icmp` on the trunk lists every echo with its tag (vlan 10, vlan 20) and saves them tagged; in the designer, a
capture on the trunk shows the tags in the dock's lines and its VLAN column and its saved pcapng keeps them, and
Follow a ping shows the frame untagged from h1, tagged on the trunk and untagged again to h4."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scapy.utils import rdpcap

from agent_process import Agent
from residue import snapshot
from tests.agent.designer_script import DEPLOY, IMPORTS, WINDOW
from vlan_labs import ADDRESSES, vlan_lab
from vtopo.capture import RawPacket, summarize
from vtopo.model import io

pytestmark = pytest.mark.privileged

REPOSITORY = Path(__file__).parents[2]
LAB = "vlancap"

DESIGNER = IMPORTS + """
from PySide6.QtWidgets import QFileDialog
from tests.gui.helpers import answer_next_dialog, choose, right_click, when_menu_opens
from vtopo.gui.capture.packets import COLUMNS
from vtopo.gui.measure.controller import find_deployed

def echoes(tab):
    rows = [(tab.table.packet(row)[0], tab.table.index(row, COLUMNS.index("VLAN")).data())
            for row in range(tab.table.rowCount())]
    return [(summary.line(), vlan) for summary, vlan in rows if summary.info.startswith("echo")]

app = QApplication([])
""" + WINDOW + DEPLOY + """
scene, view = window.editor.scene, window.view
lab, _ = find_deployed("vlancap")
pairs = (("h1", "10.0.0.4"), ("h3", "10.0.0.5"))
ping = lambda source, destination: subprocess.run(lab.command_in(source, ["ping", "-c", "2", "-i", "0.2", "-W", "1",
                                                  destination]), capture_output=True, timeout=30).returncode == 0
for pair in pairs:  # the switches, just deployed, settle and learn every address
    wait_for(lambda: ping(*pair), 30)
when_menu_opens(choose("Capture on s1:p4"))
right_click(view, scene.links["link-trunk"].line.center())
tabs = window.capture_panel.captures
wait_for(lambda: tabs() and tabs()[0].target is not None)
trunk = tabs()[0]
for pair in pairs:
    ping(*pair)
wait_for(lambda: len(echoes(trunk)) >= 8)
QFileDialog.getSaveFileName = lambda *args, **kwargs: (str(work / "trunk.pcapng"), "")
QTest.mouseClick(trunk.save, Qt.MouseButton.LeftButton)
wait_for(lambda: "saved in" in trunk.status.text())
click(view, scene.nodes["h1"].pos())
click(view, scene.nodes["h4"].pos(), Qt.KeyboardModifier.ControlModifier)
when_menu_opens(choose("Follow a ping from h1 to h4"))
right_click(view, scene.nodes["h4"].pos())
wait_for(lambda: len(tabs()) == 4)  # a tab per hop
hops = tabs()[1:]
wait_for(lambda: all(sum("echo request" in line for line, _ in echoes(tab)) >= 3 for tab in hops))
followed = {tab.title: sorted({vlan for line, vlan in echoes(tab)}) for tab in hops}
wait_for(lambda: all("packets captured" in tab.status.text() for tab in hops))
said = [tab.status.text() for tab in hops]
answer_next_dialog("Destroy")
QTest.mouseClick(toolbar.widgetForAction(window.menu_actions.destroy), Qt.MouseButton.LeftButton)
wait_for(lambda: not window.deploy.busy and window.deploy.deployed_lab == "")
window.capture.shutdown()
print(json.dumps({"trunk": echoes(trunk), "followed": followed, "said": said, "log": window.log.toPlainText()}))
"""


def tags_in_file(path: Path) -> list[tuple[str, str]]:
    """(VLAN, ICMP type) of each echo in a capture file, as tshark reads it."""
    shown = subprocess.run(["tshark", "-r", str(path), "-Y", "icmp", "-T", "fields", "-e", "vlan.id", "-e", "icmp.type"],
                           capture_output=True, text=True, check=True, timeout=60)
    return sorted(tuple(line.split("\t")) for line in shown.stdout.splitlines())  # type: ignore[misc]


def decoded(path: Path) -> list[str]:
    """Each echo in a capture file as vtopo's own decoder lists it."""
    packets = [summarize(RawPacket(number, float(p.time), bytes(p), len(p)))
               for number, p in enumerate(rdpcap(str(path)), 1)]
    return [p.line() for p in packets if p.info.startswith("echo")]


TAGGED_ECHOES = sorted([("10", "8"), ("10", "0")] * 2 + [("20", "8"), ("20", "0")] * 2)
"""Two pings h1 -> h4 (VLAN 10) and two h3 -> h5 (VLAN 20) across the trunk: each request and reply, tagged."""


def ping_across(agent: Agent, user: str, timeout_s: float = 0) -> None:
    """Two pings h1 -> h4 and two h3 -> h5, each answered; asked again until `timeout_s` has passed (while the
    switches, just deployed, settle)."""
    deadline = time.monotonic() + timeout_s
    for source, destination in (("h1", "h4"), ("h3", "h5")):
        while (done := agent.vtopo(user, "exec", LAB, source, "--", "ping", "-c", "2", "-i", "0.2", "-W", "1",
                                   ADDRESSES[destination])).returncode != 0 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert done.returncode == 0, done.stdout + done.stderr


def test_vtopo_capture_on_a_trunk_lists_and_saves_each_frames_tag(agent: Agent, users, readable_dir: Path) -> None:
    a = users["a"]
    before = snapshot()
    path, saved = readable_dir / f"{LAB}.vtopo", readable_dir / "trunk.pcapng"
    io.save(vlan_lab("ovs", LAB), path)
    path.chmod(0o644)
    os.chown(readable_dir, a.pw_uid, a.pw_gid)  # a writes the capture there
    deployed = agent.vtopo(a.pw_name, "deploy", str(path))
    assert deployed.returncode == 0, deployed.stderr
    try:
        ping_across(agent, a.pw_name, timeout_s=30)  # the switches have learnt every address
        capture = agent.spawn(a.pw_name, "capture", LAB, "s1:p4", "-f", "icmp", "-c", "8", "-w", str(saved))
        time.sleep(2)  # it listens
        ping_across(agent, a.pw_name)
        lines, said = capture.communicate(timeout=30)
        assert capture.returncode == 0, said
    finally:
        destroyed = agent.vtopo(a.pw_name, "destroy", LAB)
    assert destroyed.returncode == 0, destroyed.stderr
    echoes = [line for line in lines.splitlines() if "echo" in line]
    assert sorted((line.split(" vlan ")[1].split()[0], "8" if "echo request" in line else "0") for line in echoes) == \
        TAGGED_ECHOES, lines
    assert tags_in_file(saved) == TAGGED_ECHOES
    assert decoded(saved) and all(" vlan 10 " in line or " vlan 20 " in line for line in decoded(saved))
    assert snapshot() - before == {}


def test_the_designers_capture_dock_shows_and_saves_the_tags_and_follows_a_ping_through_the_trunk(
        agent: Agent, users, readable_dir: Path) -> None:
    user = users["a"]
    os.chown(readable_dir, user.pw_uid, user.pw_gid)
    io.save(vlan_lab("ovs", LAB), readable_dir / f"{LAB}.vtopo")
    before = snapshot()
    env = {**agent.env, "QT_QPA_PLATFORM": "offscreen", "XDG_RUNTIME_DIR": str(readable_dir),
           "HOME": str(readable_dir)}
    run = subprocess.run(["runuser", "-u", user.pw_name, "--", sys.executable, "-c", DESIGNER, str(REPOSITORY),
                          str(readable_dir), str(readable_dir / f"{LAB}.vtopo")], env=env, capture_output=True,
                         text=True, timeout=300, cwd="/")
    if run.returncode != 0:
        agent.vtopo(user.pw_name, "destroy", LAB)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.splitlines()[-1])
    trunk = seen["trunk"]
    assert len(trunk) >= 8 and all(vlan in ("10", "20") and f" vlan {vlan} " in line for line, vlan in trunk), trunk
    assert {vlan for _, vlan in trunk} == {"10", "20"}
    assert tags_in_file(readable_dir / "trunk.pcapng") == TAGGED_ECHOES
    assert seen["followed"] == {"1. h1:eth0": [""], "2. s1:p4": ["10"], "3. h4:eth0": [""]}, seen["log"]
    assert ["tagged" in said for said in seen["said"]] == [False, True, False], seen["said"]
    assert "; frames tagged vlan 10" in seen["said"][1], seen["said"]  # (and vlan 20: ICMPv6 of h3 and h5, if any)
    assert snapshot() - before == {}
