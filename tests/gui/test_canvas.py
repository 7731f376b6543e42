"""Placing, linking, moving, deleting, copying: driven through the real view with mouse events."""
from __future__ import annotations

from typing import Any, Callable

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QGraphicsItem

from tests.gui.helpers import click, drag, drop_kind
from vtopo.gui.canvas import interactions
from vtopo.gui.canvas.items import PARALLEL_GAP
from vtopo.gui.canvas.lines import LinkLines
from vtopo.gui.canvas.scene import TopologyScene
from vtopo.gui.canvas.view import KIND_MIME_TYPE
from vtopo.gui.main_window import MainWindow
from vtopo.lab import registry
from vtopo.model import io
from vtopo.model.topology import Node


def test_palette_lists_every_kind_with_its_description(make_window: Callable[..., MainWindow]) -> None:
    window = make_window(None)
    assert sorted(window.palette_list.kind_names()) == sorted(registry().kinds)
    for row in range(window.palette_list.count()):
        item = window.palette_list.item(row)
        kind = registry().kinds[item.data(Qt.ItemDataRole.UserRole)]
        assert item.text() == kind.label
        assert kind.description in item.toolTip()
        assert not item.icon().isNull()
    data = window.palette_list.mime_data_for("router")
    assert bytes(data.data(KIND_MIME_TYPE).data()) == b"router"


def drawn(scene: TopologyScene) -> list[QGraphicsItem]:
    """The scene's items but the one that draws the links."""
    return [item for item in scene.items() if not isinstance(item, LinkLines)]


def test_dropping_kinds_places_nodes_with_unique_names(make_window: Callable[..., MainWindow]) -> None:
    window = make_window(None)
    drop_kind(window, "container", QPointF(100, 100))
    drop_kind(window, "container", QPointF(300, 100))
    drop_kind(window, "bridge", QPointF(200, 300))
    nodes = list(window.editor.topology.nodes.values())
    assert [(n.name, n.kind) for n in nodes] == [("c1", "container"), ("c2", "container"), ("br1", "bridge")]
    assert abs(nodes[0].position.x - 100) <= 1 and abs(nodes[0].position.y - 100) <= 1
    # the ghost preview never entered the model, and is gone from the canvas (where one item draws the links)
    assert len(drawn(window.editor.scene)) == 3
    assert window.editor.scene.selected_node_ids() == [nodes[2].id]


def two_containers_and_a_bridge(window: MainWindow) -> tuple[Node, Node, Node]:
    """c1 at (0, 0) and c2 at (0, 200) on a new lab, a bridge between them at (200, 100)."""
    c1 = window.editor.place_node("container", QPointF(0, 0))
    c2 = window.editor.place_node("container", QPointF(0, 200))
    br = window.editor.place_node("bridge", QPointF(200, 100))
    assert c1 and c2 and br
    return c1, c2, br


def test_draw_links_with_the_mouse_takes_the_next_free_ports(make_window: Callable[..., MainWindow]) -> None:
    window = make_window(None)
    editor = window.editor
    c1, c2, br = two_containers_and_a_bridge(window)
    window.menu_actions.link_mode.trigger()
    drag(window.view, QPointF(0, 0), QPointF(200, 100))
    drag(window.view, QPointF(0, 200), QPointF(200, 100))
    links = list(editor.topology.links.values())
    assert [(link.a.node, link.a.port, link.b.node, link.b.port) for link in links] == [
        (c1.id, "eth0", br.id, "p1"), (c2.id, "eth0", br.id, "p2")]
    # no preview line is left behind
    assert len(drawn(editor.scene)) == 5
    # a link the kinds refuse is not drawn, and the status bar says why
    vm = editor.place_node("vm", QPointF(-200, 100))
    segment = editor.place_node("macvlan", QPointF(-200, 300))
    assert vm and segment
    drag(window.view, QPointF(-200, 100), QPointF(-200, 300))
    assert len(editor.topology.links) == 2
    assert "cannot be linked" in window.statusBar().currentMessage()


def test_links_between_the_same_two_nodes_are_drawn_side_by_side(make_window: Callable[..., MainWindow]) -> None:
    window = make_window(None)
    editor = window.editor
    r1 = editor.place_node("router", QPointF(0, 0))
    r2 = editor.place_node("router", QPointF(300, 0))
    assert r1 and r2
    first, second = editor.connect_nodes(r1.id, r2.id), editor.connect_nodes(r1.id, r2.id)
    assert first and second
    lines = [editor.scene.links[link.id].line for link in (first, second)]
    assert lines[0].dx() == lines[1].dx() == 300
    assert abs(lines[0].p1().y() - lines[1].p1().y()) == PARALLEL_GAP, "side by side, not on top of each other"
    assert lines[0].p1().y() == -lines[1].p1().y(), "centred on the line between the nodes"
    editor.undo_stack.undo()  # the second link goes: the first is back on the line between the centers
    assert editor.scene.links[first.id].line.p1() == editor.scene.nodes[r1.id].pos()


def test_right_drag_offers_a_port_menu(make_window: Callable[..., MainWindow], monkeypatch: pytest.MonkeyPatch) -> None:
    window = make_window(None)
    editor = window.editor
    a = editor.place_node("router", QPointF(0, 0))
    b = editor.place_node("router", QPointF(300, 0))
    assert a and b
    asked: list[tuple[str, list[str]]] = []

    def choose(parent: Any, title: str, ports: list[str], at: QPoint) -> str:
        asked.append((title, ports))
        return ports[2]

    monkeypatch.setattr(interactions, "choose_port", choose)
    drag(window.view, QPointF(0, 0), QPointF(300, 0), button=Qt.MouseButton.RightButton)
    (link,) = editor.topology.links.values()
    assert (link.a.port, link.b.port) == ("eth2", "eth2")
    assert asked[0] == ("Port of r1", [f"eth{i}" for i in range(8)])


def test_a_drag_is_one_move_step(make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    editor, scene = window.editor, window.editor.scene
    before = io.dumps(editor.topology)
    scene.select_ids(["h1", "h2"])
    steps = editor.undo_stack.count()
    drag(window.view, QPointF(100, 300), QPointF(160, 340))
    assert editor.undo_stack.count() == steps + 1
    assert editor.undo_stack.undoText() == "Move"
    h1, h2 = editor.topology.nodes["h1"], editor.topology.nodes["h2"]
    assert (round(h1.position.x), round(h1.position.y)) == (160, 340)
    assert (round(h2.position.x), round(h2.position.y)) == (360, 340)
    # the links followed the nodes
    assert scene.links["h1-eth0--lan1-p1"].boundingRect().contains(scene.nodes["h1"].pos())
    editor.undo_stack.undo()
    assert io.dumps(editor.topology) == before
    assert scene.nodes["h1"].pos() == QPointF(100, 300)


def test_rubber_band_selects_and_click_selects_one(make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    scene = window.editor.scene
    drag(window.view, QPointF(50, 250), QPointF(350, 350))
    assert sorted(scene.selected_node_ids()) == ["h1", "h2"]
    click(window.view, QPointF(400, 100))
    assert scene.selected_node_ids() == ["r1"]


def test_delete_removes_a_node_and_its_links_as_one_step(make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    editor = window.editor
    before = io.dumps(editor.topology)
    editor.scene.select_ids(["lan1", "r1-eth1--r2-eth1"])
    window.menu_actions.delete.trigger()
    assert "lan1" not in editor.topology.nodes
    assert len(editor.topology.links) == 2
    assert set(editor.scene.links) == set(editor.topology.links)
    editor.undo_stack.undo()
    assert io.dumps(editor.topology) == before, "undo restores the lab exactly, file order included"
    assert set(editor.scene.links) == set(editor.topology.links)
    editor.undo_stack.redo()
    assert len(editor.topology.links) == 2


def test_copy_paste_keeps_the_links_inside_the_selection(make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    editor = window.editor
    editor.scene.select_ids(["h1", "h2", "lan1"])
    window.menu_actions.copy.trigger()
    QCursor.setPos(window.view.viewport().mapToGlobal(QPoint(-100, -100)))  # off the canvas: beside the original
    window.menu_actions.paste.trigger()
    topology = editor.topology
    assert len(topology.nodes) == 10
    new = [n for n in topology.nodes.values() if n.id not in {"h1", "h2", "h3", "lan1", "lan2", "r1", "r2"}]
    assert sorted(n.name for n in new) == ["h4", "h5", "lan3"]
    by_name = {n.name: n for n in new}
    shift = by_name["h4"].position.x - topology.nodes["h1"].position.x
    assert shift == by_name["h4"].position.y - topology.nodes["h1"].position.y and shift % 40 == 0 and shift >= 40
    assert shift > 40, "40 px from its original, a copy covers it: it moves on until it is clear"
    assert by_name["h4"].settings == {"default_route": "10.1.0.1"}
    new_links = [link for link in topology.links.values() if link.a.node in {n.id for n in new}]
    assert len(new_links) == 2  # h1-lan1 and h2-lan1; r1-lan1 reaches outside the selection
    assert {topology.describe_link(link) for link in new_links} == {"h4:eth0-lan3:p1", "h5:eth0-lan3:p2"}
    assert new_links[0].a.interface.addresses == ["10.1.0.10/24"]
    assert sorted(editor.scene.selected_node_ids()) == sorted(n.id for n in new)
    editor.undo_stack.undo()
    assert len(topology.nodes) == 7 and len(topology.links) == 6
    # duplicate does the same without the clipboard
    editor.scene.select_ids(["r1", "r2"])
    window.menu_actions.duplicate.trigger()
    assert {n.name for n in topology.nodes.values()} >= {"r3", "r4"}
    assert any(topology.describe_link(link) == "r3:eth1-r4:eth1" for link in topology.links.values())


def test_align_and_snap(make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    editor = window.editor
    editor.scene.select_ids(["h1", "r1"])
    window.menu_actions.align["top"].trigger()
    assert editor.topology.nodes["h1"].position.y == editor.topology.nodes["r1"].position.y == 100
    window.menu_actions.align["left"].trigger()
    assert editor.topology.nodes["h1"].position.x == editor.topology.nodes["r1"].position.x == 100
    assert editor.undo_stack.undoText() == "Align left"
    window.menu_actions.snap.trigger()
    editor.scene.select_ids(["h2"])
    drag(window.view, QPointF(300, 300), QPointF(333, 347))
    h2 = editor.topology.nodes["h2"].position
    assert (h2.x, h2.y) == (340, 340)


def test_zoom_fit_and_wheel(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window()
    view = window.view
    view.reset_zoom()
    view.zoom_by(2)
    assert view.zoom == pytest.approx(2)
    view.fit_to_view()
    visible = view.visible_scene_rect()
    for item in window.editor.scene.nodes.values():
        assert visible.contains(item.sceneBoundingRect())
    view.zoom_by(1000)
    assert view.zoom <= 6.0


def test_a_links_inspector_offers_addresses_for_node_ends_only_whichever_way_it_was_drawn(
        make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window(None)
    editor = window.editor
    c1, c2, br = two_containers_and_a_bridge(window)
    window.view.setFocus()
    qtbot.keyClick(window.view, Qt.Key.Key_L)
    assert window.view.link_mode and window.menu_actions.link_mode.isChecked()
    drag(window.view, QPointF(200, 100), QPointF(0, 0))  # from the bridge to c1
    drag(window.view, QPointF(0, 200), QPointF(200, 100))  # from c2 to the bridge
    qtbot.keyClick(window.view, Qt.Key.Key_Escape)
    assert not window.view.link_mode and not window.menu_actions.link_mode.isChecked()
    form = window.inspector.link_form
    for link in list(editor.topology.links.values()):
        node, port = (c1, link.a.port) if link.a.node == br.id else (c2, link.b.port)
        click(window.view, editor.scene.links[link.id].line.center())
        qtbot.waitUntil(lambda link_id=link.id: form.link_id == link_id and form.isVisible())
        assert (form.first.title(), form.second.title()) == (f"{node.name} : eth0", f"{br.name} : {port}")
        assert form.first.addresses.isVisible() and not form.second.addresses.isVisible()
        form.first.addresses.setFocus()
        qtbot.keyClicks(form.first.addresses, "10.0.0.1/24")
        form.second.mac.setFocus()  # leaving the box commits it, to the node's end
        (end,) = (end for end in editor.topology.links[link.id].ends if end.node == node.id)
        assert end.interface.addresses == ["10.0.0.1/24"]
