"""What a teacher's second day in the designer found, with real keys and mouse: the deploy's progress fits its bar,
the Deploy log starts afresh with another lab, a pasted copy lands in view, a router's configuration takes the
Inspector's whole width, a greyed-out "Open in external terminal" says why, and presentation mode is ready for a
projector (terminal, notes, Kinds, Inspector; F11 for full screen)."""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QCursor, QFontMetricsF, QHelpEvent
from PySide6.QtWidgets import QApplication, QMenu, QToolTip
from pytestqt.qtbot import QtBot

from tests.gui.conftest import ASK_FOR_REAL
from tests.gui.helpers import answer_next_dialog, click, inspected_setting, right_click, when_menu_opens
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
    box = inspected_setting(qtbot, window, "r1", "config").widget
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


def test_presentation_mode_fits_a_projector_and_f11_fills_the_screen(make_window: Callable[..., MainWindow],
                                                                     qtbot: QtBot) -> None:
    window = make_window("l2-vs-l3")
    window.resize(1024, 768)
    shell = window.terminals.open("cat", ["cat"])
    cell = shell.cell_height
    before = set(window.editor.scene.annotations)
    window.view.setFocus()
    qtbot.keyClick(window.view, Key.Key_N, Ctrl | Qt.KeyboardModifier.ShiftModifier)  # a note, filled with text
    (note_id,) = set(window.editor.scene.annotations) - before
    text_box = window.inspector.annotation_form.text
    qtbot.waitUntil(text_box.isVisible)
    text_box.setFocus()
    qtbot.keyClicks(text_box, "Ping h3 from h1, then take the link between r1 and r2 down and ping again.")
    window.view.setFocus()  # leaving the box commits the text
    notes = list(window.editor.scene.annotations.values())
    assert window.editor.topology.annotations[note_id].text.startswith("Ping h3")
    palette, inspector = window.palette_list, window.inspector
    click(window.view, window.editor.scene.nodes["r1"].scenePos())
    qtbot.waitUntil(lambda: inspector.node_form.node_id == "r1")
    frame = inspector.verticalScrollBar().sizeHint().width() + 16
    window.resizeDocks([window.kinds_dock, window.inspector_dock],  # as narrow as their content lets them
                       [palette.sizeHintForColumn(0) + frame, inspector.stack.minimumSizeHint().width() + frame],
                       Qt.Orientation.Horizontal)
    click(window.view, QPointF(-3000, -3000))
    qtbot.keyClick(window.view, Key.Key_P, Ctrl | Qt.KeyboardModifier.ShiftModifier)
    try:
        assert window.menu_actions.presentation.isChecked()
        assert shell.cell_height > 1.3 * cell, "the terminal's font did not grow"
        for note in notes:  # each note's text whole, in the larger type
            text = QFontMetricsF(note._font).boundingRect(QRectF(0, 0, note.size.width() - 16, 1e6),
                                                          Qt.TextFlag.TextWordWrap, note._text)
            assert note.boundingRect().height() >= text.height() + 12, note.annotation_id
        qtbot.wait(200)  # the lists and forms laid out again in the larger font
        assert palette.viewport().width() >= palette.sizeHintForColumn(0), "the kinds' names are cut"
        lab_notes = window.inspector.lab_form.notes
        assert lab_notes.height() >= lab_notes.fontMetrics().lineSpacing() * 12, "the lab's notes are cut off"
        click(window.view, window.editor.scene.nodes["r1"].scenePos())
        qtbot.waitUntil(lambda: inspector.node_form.node_id == "r1")
        qtbot.wait(200)
        assert inspector.viewport().width() >= inspector.stack.minimumSizeHint().width(), "the fields are clipped"
        table = inspector.node_form.interfaces
        assert all(table.rowHeight(row) >= table.fontMetrics().height() for row in range(table.rows.rowCount()))
        qtbot.keyClick(window.view, Key.Key_F11)
        qtbot.waitUntil(window.isFullScreen)
        qtbot.keyClick(window.view, Key.Key_F11)
        qtbot.waitUntil(lambda: not window.isFullScreen())
    finally:
        window.view.setFocus()
        qtbot.keyClick(window.view, Key.Key_P, Ctrl | Qt.KeyboardModifier.ShiftModifier)
    assert shell.cell_height == cell
