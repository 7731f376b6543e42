"""The inspector lists a node's interfaces, edits them in place, and offers alignment for a multi-selection (a switch's
VLANs: tests/gui/test_vlans_designer.py)."""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QApplication

from tests.gui.helpers import cell_text, click, edit_cell, send, view_point
from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels.interface_table import ADDRESS, COLUMNS


def test_a_nodes_interfaces_are_listed_and_edited_in_place(make_window: Callable[..., MainWindow],
                                                           qtbot: Any) -> None:
    window = make_window()  # l2-vs-l3
    window.editor.scene.select_ids(["r1"])
    table = window.inspector.node_form.interfaces
    qtbot.waitUntil(lambda: table.isVisible() and table.rows.rowCount() == 2)
    rows = [[cell_text(table, row, column) for column in range(len(COLUMNS))] for row in range(2)]
    assert rows[0][:3] == ["eth0", "lan1 p3", "10.1.0.1/24"] and rows[0][COLUMNS.index("State")] == "not deployed"
    assert rows[1][:3] == ["eth1", "r2 eth1", "10.0.12.1/30"]
    edit_cell(qtbot, table, 0, ADDRESS, "10.1.0.254/24")
    link = next(link for link in window.editor.topology.links_of("r1") if "eth0" in (link.a.port, link.b.port))
    end = link.a if link.a.node == "r1" else link.b
    qtbot.waitUntil(lambda: end.interface.addresses == ["10.1.0.254/24"])  # the delegate commits on the next loop
    qtbot.waitUntil(lambda: cell_text(table, 0, ADDRESS) == "10.1.0.254/24")
    window.editor.undo_stack.undo()
    end = next(e for e in window.editor.topology.links[link.id].ends if e.node == "r1")
    assert end.interface.addresses == ["10.1.0.1/24"]


def test_typing_dhcp_for_an_address_sets_the_interface_to_dhcp(make_window: Callable[..., MainWindow],
                                                                qtbot: Any) -> None:
    window = make_window()  # l2-vs-l3
    window.editor.scene.select_ids(["h1"])
    table = window.inspector.node_form.interfaces
    qtbot.waitUntil(lambda: table.isVisible() and table.rows.rowCount() == 1)
    edit_cell(qtbot, table, 0, ADDRESS, "DHCP")
    qtbot.waitUntil(lambda: cell_text(table, 0, ADDRESS) == "dhcp")
    end = next(e for link in window.editor.topology.links_of("h1") for e in link.ends if e.node == "h1")
    assert (end.interface.dhcp, end.interface.addresses) == (True, [])
    window.editor.undo_stack.undo()
    end = next(e for link in window.editor.topology.links_of("h1") for e in link.ends if e.node == "h1")
    assert not end.interface.dhcp and end.interface.addresses


def test_a_multi_selection_offers_align_and_distribute(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window(None)
    editor = window.editor
    ids = [node.id for node in (editor.place_node("container", QPointF(x, y)) for x, y in ((0, 0), (90, 60)))
           if node]
    editor.scene.select_ids(ids)
    form = window.inspector.multiple
    qtbot.waitUntil(form.isVisible)
    assert "2 nodes" in form.summary.text()
    qtbot.mouseClick(form.buttons["top"], Qt.MouseButton.LeftButton)
    assert {editor.topology.nodes[i].position.y for i in ids} == {0}

def test_a_shorter_form_after_scrolling_down_a_tall_one_shows_from_its_top(make_window: Callable[..., MainWindow],
                                                                           qtbot: Any) -> None:
    window = make_window()  # l2-vs-l3
    inspector = window.inspector
    click(window.view, window.editor.scene.nodes["r1"].scenePos())
    qtbot.waitUntil(lambda: inspector.node_form.node_id == "r1" and inspector.verticalScrollBar().maximum() > 0)
    at = QPointF(inspector.viewport().rect().center())
    for _ in range(20):  # the wheel, over the form, down to its end
        QApplication.sendEvent(inspector.viewport(), QWheelEvent(
            at, QPointF(inspector.viewport().mapToGlobal(at)), QPoint(), QPoint(0, -120), Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False))
    assert inspector.verticalScrollBar().value() > 0
    h1 = next(node_id for node_id, node in window.editor.topology.nodes.items() if node.name == "h1")
    click(window.view, window.editor.scene.nodes[h1].scenePos())
    qtbot.waitUntil(lambda: inspector.node_form.node_id == h1)
    assert inspector.verticalScrollBar().value() == 0
    assert not inspector.node_form.name.visibleRegion().isEmpty(), "the form's top is scrolled out of sight"
    click(window.view, QPointF(-2000, -2000))  # nothing: the lab's form, no taller than it needs
    qtbot.waitUntil(lambda: inspector.stack.currentWidget() is inspector.lab_form)
    qtbot.waitUntil(lambda: inspector.stack.height() <= max(inspector.viewport().height(),
                                                            inspector.lab_form.sizeHint().height()))


def test_the_inspector_shows_a_pressed_node_once_the_mouse_lets_it_go(make_window: Callable[..., MainWindow],
                                                                       qtbot: Any) -> None:
    window = make_window()  # l2-vs-l3
    view, scene = window.view, window.editor.scene
    at = view_point(view, scene.nodes["r1"].pos())
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send(view, QMouseEvent.Type.MouseButtonPress, at, left, left)
    for step in range(1, 4):  # a drag under way: a bridge's form would take it a second or more to build
        send(view, QMouseEvent.Type.MouseMove, at + QPoint(5 * step, 0), none, left)
        qtbot.wait(20)
    assert scene.selected_node_ids() == ["r1"] and window.inspector.stack.currentWidget() is not window.inspector.node_form
    send(view, QMouseEvent.Type.MouseButtonRelease, at + QPoint(15, 0), left, none)
    qtbot.waitUntil(lambda: window.inspector.stack.currentWidget() is window.inspector.node_form)
    assert window.inspector.node_form.node_id == "r1"
