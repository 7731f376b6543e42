"""Keyboard habits, tested with real key events on the focused widget (not action.trigger())."""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication, QMenu, QToolBar, QToolButton, QWidget

from vtopo.gui.main_window import MainWindow

Key = Qt.Key
Ctrl, Shift = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


def focus_canvas(qtbot: Any, window: MainWindow) -> None:
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=3000)
    window.view.setFocus()
    qtbot.waitUntil(window.view.hasFocus, timeout=3000)


def test_ctrl_z_and_ctrl_shift_z_undo_and_redo(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window(None)
    focus_canvas(qtbot, window)
    editor = window.editor
    editor.place_node("container", QPointF(0, 0))
    editor.place_node("container", QPointF(200, 0))
    assert len(editor.topology.nodes) == 2
    qtbot.keyClick(window.view, Key.Key_Z, Ctrl)
    assert len(editor.topology.nodes) == 1
    qtbot.keyClick(window.view, Key.Key_Z, Ctrl)
    assert len(editor.topology.nodes) == 0
    qtbot.keyClick(window.view, Key.Key_Z, Ctrl | Shift)
    assert len(editor.topology.nodes) == 1
    qtbot.keyClick(window.view, Key.Key_Y, Ctrl)
    assert len(editor.topology.nodes) == 2


def test_delete_and_backspace_remove_the_selection(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window()
    focus_canvas(qtbot, window)
    editor = window.editor
    first, second = list(editor.topology.nodes)[:2]
    editor.scene.select_ids([first])
    qtbot.keyClick(window.view, Key.Key_Delete)
    assert first not in editor.topology.nodes
    editor.scene.select_ids([second])
    qtbot.keyClick(window.view, Key.Key_Backspace)
    assert second not in editor.topology.nodes
    qtbot.keyClick(window.view, Key.Key_Z, Ctrl)
    assert second in editor.topology.nodes


def test_delete_in_a_panel_stays_in_the_panel(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window()
    focus_canvas(qtbot, window)
    editor = window.editor
    node_id = next(iter(editor.topology.nodes))
    editor.scene.select_ids([node_id])
    table = window.measure_panel.history_view.table
    window.measure_dock.show()
    window.measure_dock.raise_()
    table.setFocus()
    qtbot.waitUntil(table.hasFocus, timeout=3000)
    qtbot.keyClick(table, Key.Key_Delete)
    assert node_id in editor.topology.nodes


def test_no_key_is_bound_twice_where_both_could_fire(make_window: Callable[..., MainWindow]) -> None:
    """Qt fires neither of two shortcuts that share a key in overlapping scopes ("Ambiguous shortcut overload")."""
    window = make_window(None)
    bindings: dict[str, list[str]] = {}
    actions = {action for widget in [window, *window.findChildren(QWidget)]
               for action in QWidget.actions(widget)}  # MainWindow.actions is our Actions object
    for action in actions:
        if action.shortcutContext() in (Qt.ShortcutContext.WindowShortcut, Qt.ShortcutContext.ApplicationShortcut):
            scopes = ["window"]
        else:
            scopes = [type(owner).__name__ for owner in action.associatedObjects()
                      if not isinstance(owner, (QMenu, QToolBar, QToolButton))]
        for sequence in action.shortcuts():
            bindings.setdefault(sequence.toString(), []).extend(f"{action.text()}@{scope}" for scope in scopes)
    for shortcut in window.findChildren(QShortcut):
        parent = shortcut.parent()
        assert isinstance(parent, QWidget)
        scope = "window" if shortcut.context() == Qt.ShortcutContext.WindowShortcut else type(parent).__name__
        bindings.setdefault(shortcut.key().toString(), []).append(f"shortcut@{scope}")
    for key, owners in bindings.items():
        actions = {owner.split("@")[0] for owner in owners}
        assert len(owners) == len(set(owners)), f"{key} bound twice: {owners}"
        scopes = [owner.split("@")[1] for owner in owners]
        if len(actions) > 1:
            # two different things on one key: only when neither is window-wide and the scopes differ
            assert "window" not in scopes and len(set(scopes)) == len(scopes), f"{key} is ambiguous: {owners}"
    assert QKeySequence("Ctrl+Z").toString() in bindings
