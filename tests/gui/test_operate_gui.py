"""Operating the running lab from the canvas, with real mouse and key events: the node and link menus, the states
they draw, and a running link's rate typed into the inspector."""
from __future__ import annotations

import os
import subprocess
from typing import Any, Callable

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from residue import snapshot
from tests.gui.helpers import answer_next_dialog, choose, click, right_click, when_menu_opens
from vtopo.gui.canvas.states import NodeState
from vtopo.gui.main_window import MainWindow

LINK = "c2-eth0--br0-p2"


def entries_of(menu: QMenu) -> dict[str, bool]:
    return {action.text(): action.isEnabled() for action in menu.actions() if not action.isSeparator()}


def open_menu(window: MainWindow, at: QPointF, pick: Callable[[QMenu], None] | None = None) -> dict[str, bool]:
    """Right-click at a scene point; returns each entry's enabled state, then picks one or closes the menu."""
    seen: list[dict[str, bool]] = []

    def look(menu: QMenu) -> None:
        seen.append(entries_of(menu))
        if pick is None:
            menu.close()
        else:
            pick(menu)

    when_menu_opens(look)
    right_click(window.view, at)
    return seen[0]


def node_at(window: MainWindow, node_id: str) -> QPointF:
    return window.editor.scene.nodes[node_id].scenePos()


def link_at(window: MainWindow, link_id: str) -> QPointF:
    return window.editor.scene.links[link_id].line.center()


def test_operate_entries_wait_for_a_deployed_lab(make_window: Callable[..., MainWindow]) -> None:
    window = make_window("bridge-veth")
    node = open_menu(window, node_at(window, "c1"))
    assert {text: node[text] for text in ("Start", "Stop", "Restart")} == {"Start": False, "Stop": False,
                                                                              "Restart": False}
    link = open_menu(window, link_at(window, LINK))
    assert {text: link[text] for text in ("Take link down", "Bring link up")} == {"Take link down": False,
                                                                                  "Bring link up": False}


def red_runs_along(window: MainWindow, link_id: str) -> list[bool]:
    """Whether each pixel along the middle of the link, as the view draws it, is the down link's red."""
    view = window.view
    line = window.editor.scene.links[link_id].line
    image = view.viewport().grab().toImage()
    samples = []
    for step in range(30, 71):
        point = view.mapFromScene(line.pointAt(step / 100))
        color = image.pixelColor(point.x(), point.y())
        samples.append(color.red() > 180 and color.green() < 110 and color.blue() < 110)
    return samples


def test_a_down_link_is_drawn_dashed_red(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window("bridge-veth")
    assert not any(red_runs_along(window, LINK))
    window.editor.scene.set_links_down({LINK})
    qtbot.waitUntil(lambda: any(red_runs_along(window, LINK)))
    samples = red_runs_along(window, LINK)
    assert 0.3 < sum(samples) / len(samples) < 0.95, "red dashes with gaps between them (0.80 measured)"
    window.editor.scene.set_links_down(set())
    qtbot.waitUntil(lambda: not any(red_runs_along(window, LINK)))


def _deploy(window: MainWindow, qtbot: QtBot, deploy: bool) -> None:
    action = window.menu_actions.deploy if deploy else window.menu_actions.destroy
    qtbot.waitUntil(lambda: not window.deploy.busy and not window.operate.busy and action.isEnabled(),
                    timeout=30_000)
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=120_000):
        if not deploy:
            answer_next_dialog("Destroy")
        action.trigger()


def _has_carrier(window: MainWindow, node: str, device: str) -> bool:
    """Whether the node's interface has carrier (a link down is a cable pull: the interface stays up without it)."""
    from vtopo.deployed import DeployedLab

    lab = DeployedLab.find(window.editor.topology.name)
    context = lab.node(node)
    netns = context.kind.netns(context)
    flags = subprocess.run(["ip", "-n", netns, "-o", "link", "show", device], capture_output=True, text=True,
                           check=True).stdout.split("<", 1)[1].split(">", 1)[0].split(",")
    return "LOWER_UP" in flags


def _qdisc(window: MainWindow, node: str) -> str:
    from vtopo.deployed import DeployedLab

    lab = DeployedLab.find(window.editor.topology.name)
    context = lab.node(node)
    return subprocess.run(["tc", "-n", context.kind.netns(context), "qdisc", "show", "dev", "eth0"],
                          capture_output=True, text=True, check=True).stdout


@pytest.mark.privileged
def test_operate_a_running_lab_from_the_canvas(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    from vtopo.gui.panels.deploy import load_deployer

    before = snapshot()
    window = make_window("bridge-veth", deployer_loader=load_deployer)
    scene = window.editor.scene
    idle = lambda: not window.operate.busy and not window.deploy.busy  # noqa: E731
    try:
        _deploy(window, qtbot, True)
        qtbot.waitUntil(lambda: scene.nodes["c1"].state is NodeState.RUNNING, timeout=10_000)

        entries = open_menu(window, node_at(window, "c1"), choose("Stop"))
        assert (entries["Start"], entries["Stop"], entries["Restart"]) == (False, True, True)
        qtbot.waitUntil(lambda: idle() and scene.nodes["c1"].state is NodeState.STOPPED, timeout=20_000)
        assert not _has_carrier(window, "c1", "eth0")
        _deploy(window, qtbot, True)  # nothing new to apply: c1 stays stopped, on the host and on the canvas
        qtbot.waitUntil(idle, timeout=20_000)
        assert scene.nodes["c1"].state is NodeState.STOPPED and scene.nodes["c2"].state is NodeState.RUNNING, \
            window.log.toPlainText()[-1500:]
        assert not _has_carrier(window, "c1", "eth0")
        assert open_menu(window, node_at(window, "c1"), choose("Start"))["Start"]
        qtbot.waitUntil(lambda: idle() and scene.nodes["c1"].state is NodeState.RUNNING, timeout=20_000)
        assert _has_carrier(window, "c1", "eth0")

        assert open_menu(window, link_at(window, LINK), choose("Take link down"))["Take link down"]
        qtbot.waitUntil(lambda: idle() and scene.links[LINK].down, timeout=20_000)
        assert not _has_carrier(window, "c2", "eth0")
        assert open_menu(window, link_at(window, LINK), choose("Bring link up"))["Bring link up"]
        qtbot.waitUntil(lambda: idle() and not scene.links[LINK].down, timeout=20_000)
        assert _has_carrier(window, "c2", "eth0")

        click(window.view, link_at(window, LINK))  # the inspector shows the link
        rate = window.inspector.link_form.rate
        qtbot.waitUntil(lambda: window.inspector.link_form.link_id == LINK and rate.isVisible())
        rate.setFocus()
        rate.selectAll()
        qtbot.keyClicks(rate, "12")
        qtbot.keyClick(rate, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: idle() and "rate 12Mbit" in _qdisc(window, "c2"), timeout=20_000)
        qtbot.waitUntil(lambda: window.deploy.drift() == "", timeout=20_000)  # applied live: nothing to redeploy

        open_menu(window, node_at(window, "c3"), choose("Stop"))  # destroyed with a node stopped
        qtbot.waitUntil(lambda: idle() and scene.nodes["c3"].state is NodeState.STOPPED, timeout=20_000)
    finally:
        window.operate.wait()
        if window.deploy.deployed_lab:
            _deploy(window, qtbot, False)
    assert snapshot() - before == {}


def test_startup_commands_are_typed_in_the_inspector_as_one_undo_step(make_window: Callable[..., MainWindow],
                                                                      qtbot: QtBot) -> None:
    window = make_window("bridge-veth")
    click(window.view, node_at(window, "c1"))
    startup = window.inspector.node_form.startup
    qtbot.waitUntil(lambda: window.inspector.node_form.node_id == "c1" and startup.isVisible())
    startup.setFocus()
    qtbot.keyClicks(startup, "ip route add 10.9.0.0/24 via 10.0.0.2")
    qtbot.keyClick(startup, Qt.Key.Key_Return)
    qtbot.keyClicks(startup, "  echo ready  ")
    qtbot.keyClick(startup, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    node = window.editor.topology.node_named("c1")
    assert node.startup_commands == ["ip route add 10.9.0.0/24 via 10.0.0.2", "echo ready"]
    window.view.setFocus()
    qtbot.keyClick(window.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert node.startup_commands == []
    qtbot.waitUntil(lambda: startup.toPlainText() == "")


def test_what_startup_commands_print_goes_to_the_deploy_log(make_window: Callable[..., MainWindow],
                                                            qtbot: QtBot) -> None:
    from tests.gui.test_deploy import FakeDeployer
    from vtopo.reports import DeployReport, Progress

    class PrintingDeployer(FakeDeployer):
        def update(self, topology: Any, progress: Callable[[Any], None], consent: Any = None) -> DeployReport:
            progress(Progress("output", 0, 0, "$ echo serving\nserving on 10.0.0.1", "node c1"))
            return super().update(topology, progress, consent)

    window = make_window("bridge-veth", deployer_loader=lambda: (PrintingDeployer(), ""))
    qtbot.waitUntil(lambda: not window.deploy.busy)
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        qtbot.keyClick(window, Qt.Key.Key_F5)
    lines = window.log.toPlainText().splitlines()
    assert [line.split("  ", 1)[1] for line in lines if "| " in line] == ["c1| $ echo serving",
                                                                          "c1| serving on 10.0.0.1"]


def _namespace_inodes(window: MainWindow) -> dict[str, int]:
    """Each container's namespace by its inode: a namespace destroyed and made again has a new one."""
    from vtopo.deployed import DeployedLab

    lab = DeployedLab.find(window.editor.topology.name)
    inodes = {}
    for name in ("c1", "c2", "c3"):
        context = lab.node(name)
        inodes[name] = os.stat(f"/run/netns/{context.kind.netns(context)}").st_ino
    return inodes


@pytest.mark.privileged
def test_deploy_right_after_a_live_rate_change_keeps_the_lab_running(make_window: Callable[..., MainWindow],
                                                                     qtbot: QtBot) -> None:
    """The rate typed into the inspector is applied live; Deploy pressed at once (before that has finished) must
    find nothing to apply, not destroy the lab and build it again."""
    from tests.labs.conftest import Running
    from tests.labs.test_operate import iperf_mbit
    from vtopo.gui.panels.deploy import load_deployer
    from vtopo.host.deployer import Deployer

    before = snapshot()
    window = make_window("bridge-veth", deployer_loader=load_deployer)
    idle = lambda: not window.operate.busy and not window.deploy.busy  # noqa: E731
    try:
        _deploy(window, qtbot, True)
        qtbot.waitUntil(idle, timeout=20_000)
        inodes = _namespace_inodes(window)
        window.log.clear()

        click(window.view, link_at(window, LINK))
        rate = window.inspector.link_form.rate
        qtbot.waitUntil(lambda: window.inspector.link_form.link_id == LINK and rate.isVisible())
        for typed in ("20", "12"):  # the second change replaces an impairment the running lab has
            rate.setFocus()
            rate.selectAll()
            qtbot.keyClicks(rate, typed)
            qtbot.keyClick(rate, Qt.Key.Key_Return)
            if typed == "20":
                qtbot.waitUntil(lambda: idle() and "rate 20Mbit" in _qdisc(window, "c2"), timeout=20_000)
        qtbot.keyClick(rate, Qt.Key.Key_F5)  # Deploy, while the live change may still be running
        qtbot.waitUntil(lambda: idle() and "lab bridge-veth is up" in window.log.toPlainText(), timeout=60_000)
        qtbot.waitUntil(lambda: idle() and window.deploy.drift() == "", timeout=20_000)
        log = window.log.toPlainText()
        assert "destroyed and deployed again" not in log and "[destroy" not in log, log
        assert "the running lab already matches; nothing to apply" in log, log
        assert _namespace_inodes(window) == inodes, "no namespace was made again"
        assert "rate 12Mbit" in _qdisc(window, "c2")
        measured = iperf_mbit(Running(Deployer(), window.editor.topology), "c2", "c1", 12)
        print(f"iperf c2->c1 after the rate was set to 12 Mbit/s in the inspector: {measured:.1f} Mbit/s")
        assert 10.8 <= measured <= 12
    finally:
        window.operate.wait()
        if window.deploy.deployed_lab:
            _deploy(window, qtbot, False)
    assert snapshot() - before == {}
