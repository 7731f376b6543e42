"""What a teacher's second day in the designer found, with real keys and mouse: the deploy's progress fits its bar,
the Deploy log starts afresh with another lab, a pasted copy lands in view, a router's configuration takes the
Inspector's whole width, and a greyed-out "Open in external terminal" says why."""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QCursor, QHelpEvent
from PySide6.QtWidgets import QApplication, QMenu, QToolTip
from pytestqt.qtbot import QtBot

from tests.gui.conftest import ASK_FOR_REAL
from tests.gui.helpers import answer_next_dialog, click, right_click, when_menu_opens
from tests.gui.test_first_day import HostDeployer, back_to_the_canvas, node_named
from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels import leaving
from vtopo.reports import DeployReport, Progress

Key, Ctrl = Qt.Key, Qt.KeyboardModifier.ControlModifier
LONG = "starting libvirt domain vm1 of lab bridge-veth: waiting for libvirtd to answer on its socket"


class TalkativeDeployer(HostDeployer):
    """Says a long line about the node it starts."""

    def update(self, topology: Any, progress: Callable[[Any], None], consent: Any = None) -> DeployReport:
        progress(Progress("apply", 3, 9, LONG, "node vm1"))
        return super().update(topology, lambda _progress: None, consent)


def test_the_progress_text_ends_in_an_ellipsis_within_its_bar(make_window: Callable[..., MainWindow],
                                                              qtbot: QtBot) -> None:
    window = make_window("bridge-veth", deployer_loader=lambda: (TalkativeDeployer(), ""))
    bar = window.progress
    shown: list[tuple[str, str, int]] = []
    bar.valueChanged.connect(lambda _value: shown.append((bar.text(), bar.toolTip(), bar.contentsRect().width())))
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        qtbot.keyClick(window.view, Key.Key_F5)
    text, tooltip, width = next(seen for seen in shown if seen[1])
    assert text.endswith("…") and bar.fontMetrics().horizontalAdvance(text) <= width, (text, width)
    assert tooltip == f"apply 3/9 · vm1: {LONG}"


def test_the_deploy_log_starts_afresh_with_another_lab(make_window: Callable[..., MainWindow], qtbot: QtBot,
                                                       monkeypatch: Any) -> None:
    monkeypatch.setattr(leaving, "ask", ASK_FOR_REAL)
    window = make_window("bridge-veth", deployer_loader=lambda: (HostDeployer(), ""))
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        qtbot.keyClick(window.view, Key.Key_F5)
    assert "lab bridge-veth is up" in window.log.toPlainText()
    answer_next_dialog("Leave it running")
    qtbot.keyClick(window.view, Key.Key_N, Ctrl)
    qtbot.waitUntil(lambda: window.editor.topology.name != "bridge-veth")
    assert "bridge-veth" not in window.log.toPlainText()


def test_a_copy_pasted_with_the_keyboard_lands_in_view(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window("l2-vs-l3")
    view = window.view
    h1 = window.editor.scene.nodes[node_named(window, "h1")]
    click(view, h1.scenePos())
    qtbot.keyClick(view, Key.Key_C, Ctrl)
    for _ in range(4):
        qtbot.keyClick(view, Key.Key_Equal, Ctrl)
    view.centerOn(window.editor.scene.nodes[node_named(window, "h3")])  # h1 is out of view now
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert not shown.contains(h1.scenePos())
    assert not view.viewport().rect().contains(view.viewport().mapFromGlobal(QCursor.pos()))
    before = set(window.editor.topology.nodes)
    qtbot.keyClick(view, Key.Key_V, Ctrl)
    (copy,) = set(window.editor.topology.nodes) - before
    assert shown.contains(window.editor.scene.nodes[copy].scenePos())


def test_a_routers_configuration_takes_the_inspectors_whole_width(make_window: Callable[..., MainWindow],
                                                                  qtbot: QtBot) -> None:
    window = make_window("l2-vs-l3")
    click(window.view, window.editor.scene.nodes["r1"].scenePos())
    form = window.inspector.node_form
    qtbot.waitUntil(lambda: form.node_id == "r1" and form.fields["config"].widget.isVisible())
    box = form.fields["config"].widget
    assert box.width() >= form.width() - 30, (box.width(), form.width())


def test_a_greyed_out_external_terminal_says_why(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window("bridge-veth")
    entry = window.menu_actions.external_terminal
    tips: list[str] = []

    def hover(menu: QMenu) -> None:
        assert menu.toolTipsVisible()
        at = menu.actionGeometry(entry).center()
        qtbot.mouseMove(menu, at)
        QApplication.sendEvent(menu, QHelpEvent(QEvent.Type.ToolTip, at, menu.mapToGlobal(at)))
        tips.append(QToolTip.text())
        menu.close()

    when_menu_opens(hover)
    right_click(window.view, window.editor.scene.nodes[node_named(window, "c1")].scenePos())
    qtbot.waitUntil(lambda: bool(tips))
    assert not entry.isEnabled()
    assert tips[0] == entry.toolTip() and "(" in tips[0], tips[0]
    back_to_the_canvas(window, qtbot)
