"""The designer's basics a GNS3 user expects: fit on open, guarded Destroy, a toolbar that stays put, paste at the
cursor, Save As naming a new lab, snap remembered, a legend."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QCursor, QWheelEvent
from PySide6.QtWidgets import QApplication, QToolBar

from tests.gui.conftest import no_deployer
from tests.gui.helpers import answer_next_dialog
from tests.gui.test_deploy import FakeDeployer
from tests.gui.test_keyboard import focus_canvas, one_selected_node
from vtopo.gui.main_window import MainWindow
from vtopo.lab import registry
from vtopo.resources import TOPOLOGIES

Ctrl, Shift = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


@pytest.mark.parametrize("lab", sorted(path.stem for path in TOPOLOGIES.glob("*.vtopo")))
def test_opening_a_lab_fits_it_to_the_view(make_window: Callable[..., MainWindow], qtbot: Any, lab: str) -> None:
    window = make_window(None)
    window.resize(1000, 700)
    assert window.files.open_path(TOPOLOGIES / f"{lab}.vtopo", as_template=True)
    qtbot.waitUntil(lambda: all(window.view.visible_scene_rect().contains(item.sceneBoundingRect())
                                for item in window.editor.scene.nodes.values()), timeout=3000)


def test_destroy_is_armed_only_when_deployed_and_asks_first(make_window: Callable[..., MainWindow],
                                                           qtbot: Any) -> None:
    deployer = FakeDeployer()
    window = make_window("bridge-veth", deployer_loader=lambda: (deployer, ""))
    qtbot.waitUntil(lambda: not window.deploy.busy)
    assert not window.menu_actions.destroy.isEnabled()
    assert "not deployed" in window.menu_actions.destroy.toolTip()
    focus_canvas(qtbot, window)
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        qtbot.keyClick(window.view, Qt.Key.Key_F5)
    assert window.menu_actions.destroy.isEnabled()
    texts = answer_next_dialog("Cancel")
    qtbot.keyClick(window.view, Qt.Key.Key_F5, Shift)
    assert texts and "bridge-veth" in texts[0] and "4 nodes" in texts[0] and "namespaces" in texts[0]
    assert window.deploy.deployed_lab == "bridge-veth" and not window.deploy.busy
    focus_canvas(qtbot, window)  # the dialog had the focus
    answer_next_dialog("Destroy")
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        qtbot.keyClick(window.view, Qt.Key.Key_F5, Shift)
    assert window.deploy.deployed_lab == "" and not window.menu_actions.destroy.isEnabled()


def test_toolbar_buttons_are_labelled_and_do_not_move(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window(None)
    focus_canvas(qtbot, window)
    toolbar = window.findChild(QToolBar, "main-toolbar")
    assert toolbar is not None
    assert toolbar.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon
    deploy_button = toolbar.widgetForAction(window.menu_actions.deploy)
    before = deploy_button.x()
    window.editor.place_node("container", QPointF(0, 0))
    window.editor.place_node("router", QPointF(100, 0))
    qtbot.keyClick(window.view, Qt.Key.Key_Z, Ctrl)
    qtbot.wait(10)
    assert deploy_button.x() == before
    assert window.menu_actions.toolbar_undo.text() == "Undo" and "Add" in window.menu_actions.toolbar_undo.toolTip()
    assert window.menu_actions.toolbar_redo.isEnabled()


def test_paste_lands_at_the_cursor(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window, node_id = one_selected_node(make_window, qtbot, QPointF(0, 0))
    editor = window.editor
    qtbot.keyClick(window.view, Qt.Key.Key_C, Ctrl)
    target = QPointF(400, 250)
    window.view.centerOn(target)
    QCursor.setPos(window.view.viewport().mapToGlobal(window.view.mapFromScene(target)))
    qtbot.keyClick(window.view, Qt.Key.Key_V, Ctrl)
    QCursor.setPos(window.view.viewport().mapToGlobal(QPoint(-100, -100)))  # leave no cursor on later canvases
    pasted = [n for n in editor.topology.nodes.values() if n.id != node_id]
    assert len(pasted) == 1
    assert abs(pasted[0].position.x - 400) <= 2 and abs(pasted[0].position.y - 250) <= 2


def test_save_as_names_a_new_lab_after_its_file(make_window: Callable[..., MainWindow], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    window = make_window(None)
    assert window.editor.topology.name == "untitled"
    window.editor.place_node("container", QPointF(0, 0))
    target = tmp_path / "l2l3.vtopo"
    monkeypatch.setattr("vtopo.gui.document.files.QFileDialog.getSaveFileName", lambda *a, **k: (str(target), ""))
    assert window.files.save_as()
    assert window.editor.topology.name == "l2l3"
    assert not window.isWindowModified() and window.windowTitle().startswith("l2l3")


def test_snap_to_grid_is_remembered(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window(None)
    toolbar = window.findChild(QToolBar, "main-toolbar")
    qtbot.mouseClick(toolbar.widgetForAction(window.menu_actions.snap), Qt.MouseButton.LeftButton)
    assert window.editor.scene.snap_to_grid
    again = MainWindow(registry(), window.settings, Path(window.settings.fileName()).parent / "autosave-2",
                       no_deployer)
    try:
        assert again.menu_actions.snap.isChecked() and again.editor.scene.snap_to_grid
    finally:
        again.analyzer.shutdown()
        again.deleteLater()


def test_a_legend_names_the_node_states(make_window: Callable[..., MainWindow]) -> None:
    window = make_window(None)
    text = window.legend.text()
    for state in ("running", "deploying", "failed", "not deployed"):
        assert state in text


def test_cramped_panels_get_room(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window()
    window.explain_selection()
    qtbot.waitUntil(lambda: window.explain_dock.height() >= 250, timeout=3000)
    window.measure.show_panel()
    qtbot.waitUntil(lambda: window.measure_dock.height() >= 250, timeout=3000)
    panel = window.measure_panel
    qtbot.waitUntil(lambda: panel.run_button.isVisible() and not panel.run_button.visibleRegion().isEmpty())
    # a wheel over a combo box of the form scrolls the form, and leaves the value alone
    box = panel.form.protocol_box
    before = box.currentIndex()
    at = QPointF(box.rect().center())
    wheel = QWheelEvent(at, QPointF(box.mapToGlobal(at.toPoint())), QPoint(), QPoint(0, -120),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(box, wheel)
    assert box.currentIndex() == before
    # the note inspector keeps its fields together at the top
    note = window.editor.add_annotation("note", QPointF(0, 0))
    window.editor.scene.select_ids([note.id])
    form = window.inspector.annotation_form
    qtbot.waitUntil(form.isVisible)
    assert form.text.geometry().top() < 80
