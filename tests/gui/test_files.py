"""Save, reopen, bad files, autosave, recent files, export."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Callable

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox
from pytestqt.qtbot import QtBot

from vtopo.gui.canvas import export
from vtopo.gui.main_window import MainWindow
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

from tests.gui.helpers import choose, when_menu_opens
from tests.interop.test_diagram import cells as diagram_cells


def test_save_and_reopen_gives_the_same_lab_and_canvas(make_window: Callable[..., MainWindow], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    window = make_window()
    editor = window.editor
    node = editor.place_node("ovs", QPointF(420, 260))
    assert node is not None
    editor.connect_nodes(node.id, "r2")
    editor.add_annotation("rect", QPointF(40, 40), "Area 0")
    assert window.isWindowModified()
    target = tmp_path / "mine.vtopo"
    monkeypatch.setattr("vtopo.gui.document.files.QFileDialog.getSaveFileName", lambda *a, **k: (str(target), ""))
    assert window.menu_actions.save.isEnabled()
    window.menu_actions.save.trigger()
    assert target.is_file() and not window.isWindowModified()
    assert window.windowTitle().startswith("l2-vs-l3[*] — ")
    again = make_window(target)
    assert io.dumps(again.editor.topology) == io.dumps(editor.topology)
    for node_id, item in editor.scene.nodes.items():
        other = again.editor.scene.nodes[node_id]
        assert (other.pos(), other.name) == (item.pos(), item.name)
    assert set(again.editor.scene.links) == set(editor.scene.links)
    assert set(again.editor.scene.annotations) == set(editor.scene.annotations)
    assert again.files.recent() == [target.resolve()]


def test_title_follows_the_undo_stack(make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    assert not window.isWindowModified()
    window.editor.place_node("host", QPointF(0, 0))
    assert window.isWindowModified()
    window.editor.undo_stack.undo()
    assert not window.isWindowModified()


@pytest.mark.parametrize("content, expected", [
    ("{not json", "not valid JSON"),
    ('{"format": "vtopo", "version": 2, "nodes": [{"id": "a", "name": "a b", "kind": "container"},'
     ' {"id": "a", "name": "x", "kind": "bridge"}]}', "is also used by"),
    ('{"format": "vtopo", "version": 99}', "newer vtopo"),
])
def test_a_bad_file_shows_the_loaders_message(make_window: Callable[..., MainWindow], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch, content: str, expected: str) -> None:
    window = make_window()
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text, *a: shown.append((title, text)))
    bad = tmp_path / "bad.vtopo"
    bad.write_text(content)
    before = io.dumps(window.editor.topology)
    assert not window.files.open_path(bad)
    assert len(shown) == 1 and shown[0][0] == "Cannot open lab"
    assert expected in shown[0][1] and "Traceback" not in shown[0][1]
    assert io.dumps(window.editor.topology) == before


def test_autosave_is_offered_on_next_open(make_window: Callable[..., MainWindow], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    lab = tmp_path / "lab.vtopo"
    lab.write_text((TOPOLOGIES / "bridge-veth.vtopo").read_text())
    os.utime(lab, (1_000_000, 1_000_000))
    window = make_window(lab)
    window.editor.place_node("container", QPointF(700, 300))
    autosave = window.files.autosave()
    assert autosave is not None and autosave.parent == tmp_path / "autosave"
    assert io.load(lab).nodes.keys() != io.load(autosave).nodes.keys()
    asked: list[str] = []

    def yes(parent: Any, title: str, text: str, *args: Any) -> QMessageBox.StandardButton:
        asked.append(title)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", yes)
    again = make_window(lab)
    assert asked == ["Restore unsaved changes?"]
    assert "c4" in {n.name for n in again.editor.topology.nodes.values()}
    assert again.files.path == lab and again.isWindowModified()


def test_export_png_and_svg(make_window: Callable[..., MainWindow], tmp_path: Path) -> None:
    window = make_window()
    window.editor.scene.select_ids(["r1"])
    assert export.export_png(window.editor.scene, tmp_path / "lab.png")
    assert export.export_svg(window.editor.scene, tmp_path / "lab.svg", "l2-vs-l3")
    assert (tmp_path / "lab.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (tmp_path / "lab.svg").read_text()
    assert "<svg" in svg
    texts = set(re.findall(r">([^<>]+)</text>", svg))
    assert {node.name for node in window.editor.topology.nodes.values()} <= texts  # names as text, not bitmaps
    assert window.editor.scene.selected_node_ids() == ["r1"]


def test_dropping_a_file_on_the_canvas_opens_it(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    """The canvas takes palette drops only; a file dragged over it goes on to the window, which opens it."""
    window = make_window()
    viewport = window.view.viewport()
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(TOPOLOGIES / "bridge-veth.vtopo"))])
    at, copy, left, none = QPoint(50, 50), Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(at, copy, data, left, none)
    QApplication.sendEvent(viewport, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(window, QDropEvent(QPointF(window.mapFrom(viewport, at)), copy, data, left, none))
    assert window.editor.topology.name == "bridge-veth"
    assert set(window.editor.scene.nodes) == {"br0", "c1", "c2", "c3"}


def test_opening_a_lab_while_nodes_are_selected(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    """The selection goes with the old lab's items; nothing of it is touched once they are deleted."""
    window = make_window()
    scene = window.editor.scene
    scene.select_ids(["r1", "h1"])
    window.view.viewport().grab()  # the selection drawn (selected nodes keep a pixmap of themselves)
    assert window.files.open_path(TOPOLOGIES / "bridge-veth.vtopo", as_template=True)
    qtbot.wait(50)
    assert set(scene.nodes) == {"br0", "c1", "c2", "c3"} and scene.selected_node_ids() == []
    scene.select_ids(["c1"])
    window.view.viewport().grab()
    assert scene.selected_node_ids() == ["c1"]


def test_the_file_menu_exports_draw_io_from_the_keyboard(make_window: Callable[..., MainWindow], qtbot: Any,
                                                         monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    window = make_window()
    target = tmp_path / "picked.drawio"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    when_menu_opens(choose("Export as &draw.io…"))
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(target.exists, timeout=5000)
    names = {re.sub(r"\n.*", "", cell.attrib["value"]) for cell in diagram_cells(target.read_text()).values()
             if cell.attrib.get("vertex") == "1" and cell.attrib["id"].startswith("node-")}
    assert names == {node.name for node in window.editor.topology.nodes.values()}
