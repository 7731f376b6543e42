"""What a GNS3 user does in the first minutes, with real keys and mouse: F2 renames on the canvas at once,
Ctrl+Shift+D duplicates clear of the drawn nodes, Ctrl+= zooms, new notes and pasted copies do not cover nodes and
a pasted copy's addresses are flagged, presentation mode for a projector, status messages over the legend, and a
running or deploying lab is not left without a question."""
from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator
from typing import Any, Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.gui.conftest import ASK_FOR_REAL, wait_analysis
from tests.gui.helpers import answer_next_dialog, click
from tests.gui.test_deploy import FakeDeployer
from vtopo import protocol as p
from vtopo.gui.canvas.states import NodeState
from vtopo.gui.document.placement import NODE_ROOM
from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels import leaving
from vtopo.reports import DeployReport, LabEntry, LabStatus, PartState, Progress, user_name

Key, Ctrl = Qt.Key, Qt.KeyboardModifier.ControlModifier
Shift = Qt.KeyboardModifier.ShiftModifier


def node_named(window: MainWindow, name: str) -> str:
    return next(node_id for node_id, node in window.editor.topology.nodes.items() if node.name == name)


def back_to_the_canvas(window: MainWindow, qtbot: QtBot) -> None:
    """After a message box: the window active again and the canvas focused, as a click on it leaves them."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    window.view.setFocus()


def covers_a_node(window: MainWindow, x: float, y: float, but: set[str]) -> bool:
    return any(abs(n.position.x - x) < NODE_ROOM and abs(n.position.y - y) < NODE_ROOM
               for i, n in window.editor.topology.nodes.items() if i not in but)


def test_f2_renames_on_the_canvas_at_once(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window("bridge-veth")
    item = window.editor.scene.nodes[node_named(window, "c1")]
    click(window.view, item.scenePos())
    qtbot.keyClick(window.view, Key.Key_F2)
    field = QApplication.focusWidget()
    qtbot.keyClicks(field, "web")  # as long as "c1" was: the node's bounds stay as they were
    qtbot.keyClick(field, Key.Key_Return)
    window.view.viewport().grab()  # a frame of the canvas, as the user sees it
    assert item.isSelected() and item.name == "web"
    assert item._label is not None and item._label.text() == "web", "the canvas still shows the old name"


def test_ctrl_shift_d_duplicates_beside_and_ctrl_equals_zooms(make_window: Callable[..., MainWindow],
                                                              qtbot: QtBot) -> None:
    window = make_window("bridge-veth")
    before = set(window.editor.topology.nodes)
    click(window.view, window.editor.scene.nodes[node_named(window, "c1")].scenePos())
    qtbot.keyClick(window.view, Key.Key_D, Ctrl | Shift)
    (copy,) = set(window.editor.topology.nodes) - before
    assert window.editor.topology.nodes[copy].name == "c4"
    position = window.editor.topology.nodes[copy].position
    assert not covers_a_node(window, position.x, position.y, {copy}), "the copy landed on a node"
    zoom = window.view.transform().m11()
    qtbot.keyClick(window.view, Key.Key_Equal, Ctrl)
    assert window.view.transform().m11() == pytest.approx(zoom * 1.25)


def test_notes_and_pasted_copies_land_clear_and_copied_addresses_are_flagged(make_window: Callable[..., MainWindow],
                                                                            qtbot: QtBot) -> None:
    window = make_window("bridge-veth")
    c1 = window.editor.scene.nodes[node_named(window, "c1")]
    window.view.centerOn(c1)
    notes = set(window.editor.topology.annotations)
    qtbot.keyClick(window.view, Key.Key_N, Ctrl | Shift)  # a note at the middle of the view, where c1 is
    (note,) = (window.editor.topology.annotations[i] for i in set(window.editor.topology.annotations) - notes)
    assert not any(note.position.x - NODE_ROOM / 2 < n.position.x < note.position.x + note.width + NODE_ROOM / 2 and
                   note.position.y - NODE_ROOM / 2 < n.position.y < note.position.y + note.height + NODE_ROOM / 2
                   for n in window.editor.topology.nodes.values()), "the note covers a node"
    click(window.view, c1.scenePos())
    qtbot.keyClick(window.view, Key.Key_C, Ctrl)
    before = set(window.editor.topology.nodes)
    window.view.setFocus()
    window.menu_actions.paste.trigger()  # at the cursor, which the offscreen platform keeps off the canvas
    (copy,) = set(window.editor.topology.nodes) - before
    position = window.editor.topology.nodes[copy].position
    assert not covers_a_node(window, position.x, position.y, {copy})
    bridge = node_named(window, "br0")
    assert window.editor.connect_nodes(copy, bridge) is not None
    link = window.editor.topology.links_of(copy)[0]
    end = link.a if link.a.node == copy else link.b
    address = window.editor.topology.links_of(c1.node_id)[0]
    original = address.a if address.a.node == c1.node_id else address.b
    window.editor.update_link(link.id, **{"a" if end is link.a else "b": original.interface})
    wait_analysis(qtbot, window)
    texts = window.analyzer.latest.problems.messages if window.analyzer.latest else []
    assert any(f"used twice on one segment" in text for text in texts), texts


def test_presentation_mode_draws_large_type_and_thick_links(make_window: Callable[..., MainWindow],
                                                           qtbot: QtBot) -> None:
    window = make_window("l2-vs-l3")
    window.resize(1024, 768)
    item = window.editor.scene.nodes[node_named(window, "r1")]
    link = next(iter(window.editor.scene.links.values()))
    name_height, pen = item.boundingRect().height(), link.pen(False).widthF()
    points = QApplication.font().pointSizeF()
    try:
        qtbot.keyClick(window.view, Key.Key_P, Ctrl | Shift)
        assert window.menu_actions.presentation.isChecked()
        assert item.boundingRect().height() > name_height + 8, "the name is no larger"
        assert link.pen(False).widthF() >= 2.5 * pen
        assert QApplication.font().pointSizeF() > points
        label_px = (item.boundingRect().height() - 48) * window.view.transform().m11()
        assert label_px >= 14, f"a name is {label_px:.0f} px tall on a 1024x768 window"
    finally:
        qtbot.keyClick(window.view, Key.Key_P, Ctrl | Shift)
    assert QApplication.font().pointSizeF() == points
    assert item.boundingRect().height() == pytest.approx(name_height)


def test_a_status_message_takes_the_legends_place(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window("bridge-veth")
    assert window.legend.isVisible()
    window.statusBar().showMessage("a long message " * 12, 200)
    assert not window.legend.isVisible()
    qtbot.waitUntil(window.legend.isVisible, timeout=2000)


class FakeFollowing:
    """What the agent tells a follower: the messages put in, until closed."""

    def __init__(self) -> None:
        self.told: queue.Queue[p.Message | None] = queue.Queue()

    def __iter__(self) -> Iterator[p.Message]:
        while (message := self.told.get()) is not None:
            yield message

    def close(self) -> None:
        self.told.put(None)


class HostDeployer(FakeDeployer):
    """Remembers what it deployed, and tells its followers; another user's lab is being deployed beside them."""

    def __init__(self) -> None:
        super().__init__()
        self.deployed: dict[str, list[PartState]] = {}
        self.followers: list[FakeFollowing] = []

    def update(self, topology: Any, progress: Callable[[Any], None], consent: Any = None) -> DeployReport:
        report = super().update(topology, progress, consent)
        self.deployed[topology.name] = [PartState(node.name, "running") for node in topology.nodes.values()]
        for following in self.followers:
            following.told.put(p.LabsListed(self.labs()))
        return report

    def follow(self, lab: str) -> FakeFollowing:  # type: ignore[override]
        following = FakeFollowing()
        following.told.put(p.LabsListed(self.labs()))
        self.followers.append(following)
        return following

    def status(self, lab: str | None = None) -> list[Any]:
        return [LabStatus(name, "vtfake", "", 0, "running", nodes, [], {})
                for name, nodes in self.deployed.items() if lab in (None, name)]

    def cancel(self, lab: str) -> None:
        pass

    def labs(self) -> list[LabEntry]:
        return [LabEntry(lab, os.getuid()) for lab in self.deployed] + [LabEntry("their-lab", 4242, "deploying")]


class BlockingDeployer(HostDeployer):
    """A deploy that waits, as a VM's first libvirt start does, until it is cancelled; then it rolls back."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Event()
        self.cancelled = threading.Event()

    def update(self, topology: Any, progress: Callable[[Any], None], consent: Any = None) -> DeployReport:
        progress(Progress("apply", 3, 9, "starting libvirt domain vm1: waiting for libvirtd", "node vm1"))
        self.waiting.set()
        if self.cancelled.wait(20):
            raise RuntimeError(f"the deploy of lab {topology.name} was cancelled; everything it had applied was "
                               "rolled back")
        return super().update(topology, progress, consent)

    def cancel(self, lab: str) -> None:
        self.cancelled.set()


def test_ctrl_q_during_a_deploy_asks_and_cancelling_rolls_back(make_window: Callable[..., MainWindow], qtbot: QtBot,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leaving, "ask", ASK_FOR_REAL)
    deployer = BlockingDeployer()
    window = make_window("bridge-veth", deployer_loader=lambda: (deployer, ""))
    qtbot.keyClick(window.view, Key.Key_F5)
    qtbot.waitUntil(deployer.waiting.is_set)
    qtbot.waitUntil(lambda: "starting libvirt domain vm1" in window.progress.format())
    assert window.menu_actions.cancel_deploy.isEnabled()
    asked = answer_next_dialog("Keep working")
    qtbot.keyClick(window.view, Key.Key_Q, Ctrl)
    assert "is being deployed" in asked[0] and window.isVisible()
    back_to_the_canvas(window, qtbot)
    asked = answer_next_dialog("Cancel the deploy")
    qtbot.keyClick(window.view, Key.Key_Q, Ctrl)
    assert "Leave it deploying" not in asked[0]  # without an agent the deploy cannot outlive the window
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=5000)
    assert "was cancelled" in window.log.toPlainText() and not deployer.deployed


def test_closing_or_opening_while_a_lab_runs_asks_and_the_running_labs_are_listed(
        make_window: Callable[..., MainWindow], qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leaving, "ask", ASK_FOR_REAL)
    window = make_window("bridge-veth", deployer_loader=lambda: (HostDeployer(), ""))
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        qtbot.keyClick(window.view, Key.Key_F5)
    assert window.deploy.state_of("c1") is NodeState.RUNNING
    qtbot.waitUntil(lambda: len(window.deploy.running_labs) == 2, timeout=5000)  # the designer follows the host
    menu = window.menu_actions.running_labs
    menu.aboutToShow.emit()
    texts = [action.text() for action in menu.actions()]
    assert any(text.startswith(f"bridge-veth — {user_name(os.getuid())}") for text in texts), texts
    assert any(text.startswith("their-lab — ") and "deploying" in text for text in texts), texts
    asked = answer_next_dialog("Keep working")
    qtbot.keyClick(window.view, Key.Key_N, Ctrl)
    assert "Lab bridge-veth is running" in asked[0] and window.editor.topology.name == "bridge-veth"
    back_to_the_canvas(window, qtbot)
    answer_next_dialog("Leave it running")
    qtbot.keyClick(window.view, Key.Key_Q, Ctrl)
    assert not window.isVisible()
