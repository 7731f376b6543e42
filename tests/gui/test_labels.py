"""Link labels never overlap, can be hidden, and exports can be made for print."""
from __future__ import annotations

import itertools
import math
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainterPath
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from benchmarks.test_designer_live_bench import two_bridges
from tests.gui.helpers import choose, dark_theme, drag, links_settled, send, view_point, wheel, when_menu_opens
from vtopo.gui.canvas import export
from vtopo.gui.canvas.items import LinkItem
from vtopo.gui.canvas.tooltips import link_tooltip
from vtopo.layout import LAYOUTS
from vtopo.gui.main_window import MainWindow
from vtopo.model.topology import Impairment, Interface
from vtopo.resources import TOPOLOGIES


def label_rects(item: LinkItem) -> list[QRectF]:
    return item.label_rects()


def overlaps(window: MainWindow) -> list[tuple[str, str]]:
    """Pairs of texts on the canvas that cover each other: link labels (ends and impairment) and node names."""
    scene = window.editor.scene
    deadline = time.monotonic() + 60
    while not all(item.placed for item in scene.links.values()) and time.monotonic() < deadline:
        QApplication.processEvents()  # the labelling turns place what a step left for later
    assert all(item.placed for item in scene.links.values())  # each link's labels have their places
    texts = [(link_id, rect) for link_id, item in scene.links.items() for rect in item.label_rects()]
    texts += [(node_id, node.occupied()[1]) for node_id, node in scene.nodes.items()]
    return [(a, b) for (a, first), (b, second) in itertools.combinations(texts, 2)
            if a != b and first.intersects(second)]


def star(window: MainWindow, spokes: int, radius: float) -> str:
    """A router with `spokes` /30 links to containers around it; returns the router's id."""
    editor = window.editor
    hub = editor.place_node("router", QPointF(0, 0))
    assert hub
    for index in range(spokes):
        angle = 2 * math.pi * index / spokes
        leaf = editor.place_node("container", QPointF(radius * math.cos(angle), radius * math.sin(angle)))
        assert leaf
        link = editor.connect_nodes(hub.id, leaf.id)
        assert link
        editor.update_link(link.id, a=Interface(addresses=[f"10.0.{index}.1/30"]),
                           b=Interface(addresses=[f"10.0.{index}.2/30"]))
    return hub.id


def short_impaired_link(window: MainWindow, dx: float, dy: float) -> LinkItem:
    editor = window.editor
    a = editor.place_node("router", QPointF(0, 0))
    b = editor.place_node("router", QPointF(dx, dy))
    assert a and b
    link = editor.connect_nodes(a.id, b.id)
    assert link
    editor.update_link(link.id, a=Interface(addresses=["10.0.12.1/30"]), b=Interface(addresses=["10.0.12.2/30"]),
                       impairment=Impairment(delay_ms=20, rate_mbit=100))
    return editor.scene.links[link.id]


def test_labels_of_a_short_link_do_not_overlap(make_window: Callable[..., MainWindow]) -> None:
    window = make_window(None)
    for dx, dy in ((150, 0), (110, 0), (0, 140), (120, 90), (-100, 100)):
        item = short_impaired_link(window, dx, dy)
        rects = label_rects(item)
        assert len(rects) == 3
        for i, first in enumerate(rects):
            for second in rects[i + 1:]:
                assert not first.intersects(second), (dx, dy, first, second)


@pytest.mark.parametrize("lab", sorted(path.stem for path in TOPOLOGIES.glob("*.vtopo")))
def test_no_texts_overlap_in_a_shipped_lab_as_drawn_and_after_each_auto_layout(
        make_window: Callable[..., MainWindow], lab: str, qtbot: QtBot) -> None:
    window = make_window(lab, show=False)
    assert overlaps(window) == []
    for style in LAYOUTS:
        window.editor.auto_layout(style)
        qtbot.waitUntil(lambda: not window.editor.laying_out)
        assert overlaps(window) == [], style


def test_labels_of_links_meeting_at_a_node_do_not_overlap(make_window: Callable[..., MainWindow],
                                                          qtbot: QtBot) -> None:
    window = make_window(None)
    hub = star(window, 12, 220)
    assert overlaps(window) == []
    leaf = window.editor.scene.nodes[window.editor.topology.links_of(hub)[0].b.node]
    drag(window.view, leaf.pos(), QPointF(120, 40))  # a spoke made short and close to its neighbours
    assert leaf.pos() != QPointF(220, 0)
    assert overlaps(window) == []


def passes_near(item: LinkItem, rect: QRectF) -> bool:
    line = QPainterPath(item.line.p1())
    line.lineTo(item.line.p2())
    return rect.contains(item.line.p1()) or rect.contains(item.line.p2()) or line.intersects(rect)


def test_zooming_in_on_a_switch_of_many_ports_places_the_labels_in_view_before_the_others(
        make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window(None)
    window.editor.set_topology(two_bridges(400))  # one bridge above 400 containers, 50 to a row
    view, scene = window.view, window.editor.scene
    qtbot.waitUntil(lambda: not scene.detailed)  # the view fits the lab: the overview, where no link has labels
    wheel(view, -24)  # the least zoom,
    wheel(view, 21)  # then about 100%, over the middle of the rows
    assert scene.detailed and not any(link.placed for link in scene.links.values())
    seen = view.mapToScene(view.viewport().rect()).boundingRect()
    in_view = [link for link in scene.links.values() if seen.contains(link.a.pos())]
    far = [link for link in scene.links.values() if not passes_near(link, seen.adjusted(-50, -50, 50, 50))]
    assert in_view and far
    deadline = time.monotonic() + 60
    while not all(link.placed for link in scene.links.values()) and time.monotonic() < deadline:
        QApplication.processEvents()  # a turn of the event loop
        if any(link.placed for link in far):
            assert all(link.placed for link in in_view)
    assert overlaps(window) == []


def test_a_step_dragging_a_switch_of_many_ports_moves_every_line_and_leaves_the_labels_to_later_turns(
        make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window(None)
    window.editor.set_topology(two_bridges(400))
    view, scene = window.view, window.editor.scene
    qtbot.waitUntil(lambda: not scene.detailed)
    wheel(view, -24)
    wheel(view, 21)
    bridge = scene.nodes["br0"]
    view.centerOn(bridge)
    qtbot.waitUntil(lambda: all(link.placed for link in scene.links.values()), timeout=60_000)
    left, started_at, pressed_at = Qt.MouseButton.LeftButton, bridge.pos(), view_point(view, bridge.pos())
    send(view, QMouseEvent.Type.MouseButtonPress, pressed_at, left, left)
    send(view, QMouseEvent.Type.MouseMove, pressed_at + QPoint(40, 20), Qt.MouseButton.NoButton, left)
    moved_to = bridge.pos()
    assert moved_to != started_at
    assert all(moved_to in (link.line.p1(), link.line.p2()) for link in bridge.links)  # every line follows at once
    assert not all(link.placed for link in bridge.links)  # a step places labels for a turn only
    send(view, QMouseEvent.Type.MouseButtonRelease, pressed_at + QPoint(40, 20), left, Qt.MouseButton.NoButton)
    qtbot.waitUntil(lambda: all(link.placed for link in scene.links.values()), timeout=60_000)
    assert overlaps(window) == []


def test_a_crowded_end_is_cut_to_its_interface_name_or_left_to_the_tooltip(
        make_window: Callable[..., MainWindow]) -> None:
    window = make_window(None)
    star(window, 12, 150)
    assert overlaps(window) == []
    ends = [(link_id, shown, len(text.splitlines())) for link_id, item in window.editor.scene.links.items()
            for shown, text in zip(item._shown_lines, item._texts)]
    assert any(0 < shown < lines for _, shown, lines in ends)
    for link_id, shown, _lines in ends:
        if shown == 0:
            assert "10.0." in link_tooltip(window.editor.topology, link_id)


def test_interface_labels_can_be_hidden_and_the_choice_is_kept(make_window: Callable[..., MainWindow],
                                                                qtbot: Any) -> None:
    window = make_window(None)
    item = short_impaired_link(window, 200, 0)
    when_menu_opens(choose("Show &interface labels"))  # from the View menu, opened with its Alt key
    qtbot.keyClick(window, Qt.Key.Key_V, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: not window.menu_actions.interface_labels.isChecked())
    assert [rect.isEmpty() for rect in item._label_rects] == [True, True]
    assert not item._middle_rect.isEmpty()  # the impairment still shows
    assert window.settings.value("view/interface-labels", type=bool) is False


def test_print_export_is_white_without_grid(make_window: Callable[..., MainWindow], tmp_path: Path,
                                            qtbot: QtBot) -> None:
    window = make_window()
    with dark_theme(window, qtbot):
        assert export.export_png(window.editor.scene, tmp_path / "screen.png")
        assert export.export_png(window.editor.scene, tmp_path / "print.png", for_print=True)
    screen, paper = QImage(str(tmp_path / "screen.png")), QImage(str(tmp_path / "print.png"))
    assert QColor(screen.pixel(2, 2)).lightness() < 80
    # white everywhere a grid line would be: no pixel of the margin differs from white
    assert {paper.pixel(x, y) for x in range(0, 60) for y in range(0, 60)} == {QColor("white").rgb()}


@pytest.mark.parametrize("zoomed_in", [True, False])
def test_a_bridge_of_a_thousand_ports_dragged_with_the_mouse_drops_with_every_link_attached_and_undoes_in_one_step(
        make_window: Callable[..., MainWindow], qtbot: QtBot, zoomed_in: bool) -> None:
    window = make_window(None)
    window.editor.set_topology(two_bridges(1000))
    view, scene = window.view, window.editor.scene
    qtbot.waitUntil(lambda: not scene.detailed)  # the whole lab in view
    if zoomed_in:
        wheel(view, -24)
        wheel(view, 21)
        view.centerOn(scene.nodes["br0"])
    qtbot.waitUntil(lambda: links_settled(scene), timeout=60_000)
    bridge = scene.nodes["br0"]
    started_at = bridge.pos()
    drag(view, started_at, started_at + QPointF(300, 150) / view.zoom, steps=10)
    moved_to = bridge.pos()
    assert moved_to != started_at
    assert window.editor.topology.nodes["br0"].position.x == moved_to.x()
    qtbot.waitUntil(lambda: links_settled(scene), timeout=60_000)
    for link in bridge.links:  # attached, and found where they now are by a click
        assert link.line.p2() == moved_to and link.line.p1() == link.a.pos()
        assert link.sceneBoundingRect().contains(moved_to)
    near_its_container = bridge.links[0].line.pointAt(0.1)  # where the fan of lines is spread
    assert scene.link_at(near_its_container) is bridge.links[0]
    if zoomed_in:
        assert overlaps(window) == []
    window.editor.undo_stack.undo()  # the drag was one step
    assert bridge.pos() == started_at
    qtbot.waitUntil(lambda: links_settled(scene), timeout=60_000)
    assert all(link.line.p2() == started_at and link.sceneBoundingRect().contains(started_at) for link in bridge.links)
