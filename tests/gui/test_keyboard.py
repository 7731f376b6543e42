"""Keyboard habits, tested with real key events on the focused widget (not action.trigger())."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import astuple
from pathlib import Path
from typing import Any, Callable

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication, QMenu, QToolBar, QToolButton, QWidget

from tests.gui.helpers import focus_canvas
from vtopo.gui.document.clipboard import MIME_TYPE
from vtopo.gui.main_window import MainWindow

Key = Qt.Key
Ctrl, Shift = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


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
               for action in widget.actions()}
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


def one_selected_node(make_window: Callable[..., MainWindow], qtbot: Any, at: QPointF) -> tuple[MainWindow, str]:
    """A window on a new lab with one container at `at`, selected, and the canvas focused."""
    window = make_window(None)
    focus_canvas(qtbot, window)
    node = window.editor.place_node("container", at)
    assert node
    window.editor.scene.select_ids([node.id])
    return window, node.id


def test_arrow_keys_nudge_and_a_burst_is_one_undo_step(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window, node_id = one_selected_node(make_window, qtbot, QPointF(100, 100))
    editor = window.editor
    for key in (Key.Key_Right, Key.Key_Right, Key.Key_Down):
        qtbot.keyClick(window.view, key)
    qtbot.keyClick(window.view, Key.Key_Left, Shift)
    position = editor.topology.nodes[node_id].position
    assert (position.x, position.y) == (119, 110)
    assert editor.scene.nodes[node_id].pos() == QPointF(119, 110)
    qtbot.keyClick(window.view, Key.Key_Z, Ctrl)
    position = editor.topology.nodes[node_id].position
    assert (position.x, position.y) == (100, 100)
    assert editor.undo_stack.undoText().startswith("Add")


def test_align_and_distribute(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    """With the buttons the inspector shows for a multi-selection, clicked with the mouse."""
    window = make_window(None)
    editor = window.editor
    nodes = [editor.place_node("container", QPointF(x, y)) for x, y in ((0, 0), (50, 100), (300, 40))]
    ids = [node.id for node in nodes if node]
    positions = lambda: [(editor.topology.nodes[i].position.x, editor.topology.nodes[i].position.y) for i in ids]
    editor.scene.select_ids(ids)
    buttons = window.inspector.multiple.buttons
    qtbot.waitUntil(window.inspector.multiple.isVisible)
    for mode, expected in (("right", [(300, 0), (300, 100), (300, 40)]),
                           ("center", [(150, 0), (150, 100), (150, 40)]),
                           ("bottom", [(0, 100), (50, 100), (300, 100)]),
                           ("middle", [(0, 50), (50, 50), (300, 50)])):
        editor.undo_stack.setIndex(3)
        qtbot.mouseClick(buttons[mode], Qt.MouseButton.LeftButton)
        assert positions() == expected, mode
        assert editor.undo_stack.index() == 4
    editor.undo_stack.setIndex(3)
    qtbot.mouseClick(buttons["horizontal"], Qt.MouseButton.LeftButton)
    assert positions() == [(0, 0), (150, 100), (300, 40)]
    qtbot.mouseClick(buttons["vertical"], Qt.MouseButton.LeftButton)
    assert positions() == [(0, 0), (150, 100), (300, 50)]


def test_ctrl_v_of_damaged_clipboard_data_says_so_and_adds_nothing(make_window: Callable[..., MainWindow],
                                                                    qtbot: Any) -> None:
    window = make_window(None)
    focus_canvas(qtbot, window)
    for damaged, says in ((b'{"format": "vtopo", "nodes": [\xff\xfe', "not UTF-8 text"),
                          (b'{"format": "vtopo", "version": 3, "nodes": [[[]]]}', "cannot paste"),
                          (b"[" * 5000, "nested")):
        data = QMimeData()
        data.setData(MIME_TYPE, damaged)
        QApplication.clipboard().setMimeData(data)
        qtbot.keyClick(window.view, Key.Key_V, Ctrl)
        message = window.statusBar().currentMessage()
        assert message.startswith("cannot paste, the clipboard's vtopo data is damaged: ") and says in message
        assert not window.editor.topology.nodes


def test_ctrl_z_after_a_selection_moved_takes_every_link_back_with_its_nodes(
        make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    """The nodes of one undo step move together: each link follows once, after the last of them, to where they are."""
    window = make_window()
    focus_canvas(qtbot, window)
    editor, scene = window.editor, window.editor.scene
    where = lambda: {node_id: astuple(node.position) for node_id, node in editor.topology.nodes.items()}
    before = where()
    first = next(iter(before))
    scene.select_ids([node_id for node_id in before if node_id != first])
    for key in (Key.Key_Right, Key.Key_Down):
        qtbot.keyClick(window.view, key, Shift)
    scene.select_ids([first])
    qtbot.keyClick(window.view, Key.Key_Left, Shift)
    moved = where()
    assert all(moved[node_id] != before[node_id] for node_id in before)
    for _ in range(2):
        qtbot.keyClick(window.view, Key.Key_Z, Ctrl)
        for link in editor.topology.links.values():
            line = scene.links[link.id].line
            ends = (scene.nodes[link.a.node].pos(), scene.nodes[link.b.node].pos())
            assert (line.p1(), line.p2()) == ends, editor.topology.describe_link(link)
    assert where() == before
    assert all(scene.nodes[node_id].pos() == QPointF(*at) for node_id, at in before.items())


def test_ctrl_shift_d_duplicates_and_ctrl_d_is_only_the_platforms_delete(make_window: Callable[..., MainWindow],
                                                                        qtbot: Any) -> None:
    """Duplicate's key is no standard key: a Linux desktop binds Ctrl+D to Delete, and Qt fires neither of two
    actions on one key."""
    window, _node_id = one_selected_node(make_window, qtbot, QPointF(0, 0))
    nodes = window.editor.topology.nodes
    qtbot.keyClick(window.view, Key.Key_D, Ctrl | Shift)
    assert len(nodes) == 2
    if QKeySequence("Ctrl+D") in QKeySequence.keyBindings(QKeySequence.StandardKey.Delete):
        qtbot.keyClick(window.view, Key.Key_D, Ctrl)  # the copy is selected: the platform's Delete removes it
        assert len(nodes) == 1


def test_the_keys_work_on_a_linux_desktop(tmp_path: Path) -> None:
    """The tests above, and those of the terminal's keys, again on X11 (Xvfb), whose standard keys differ from the
    offscreen platform's: there Delete is Del and Ctrl+D, as on a Linux desktop."""
    if os.environ.get("QT_QPA_PLATFORM") == "xcb":
        pytest.skip("runs the tests above on X11: this is that run")
    environment = {**os.environ, "QT_QPA_PLATFORM": "xcb"}
    terminal_keys = Path(__file__).with_name("test_terminal_keys.py")
    run = subprocess.run(["xvfb-run", "-a", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-m", "not privileged", f"--basetemp={tmp_path / 'x11'}", __file__, str(terminal_keys)],
                         env=environment, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
