"""Zoomed out, the canvas draws the lab as an overview; zoomed in, every node and link draws itself with its labels.
A drag moves the links of the dragged nodes, and edits still reach the Problems panel. Real wheel and mouse events."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import gc

import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter
from PySide6.QtWidgets import QApplication, QGraphicsItem, QStyleOptionGraphicsItem

from benchmarks.test_deploy_bench import star
from benchmarks.test_designer_live_bench import ROW, two_bridges
from tests.cycle_collector import collector_paused
from tests.gui.conftest import wait_analysis
from tests.gui.helpers import click, drag, send, wheel
from vtopo.gui.canvas import export
from vtopo.gui.canvas.items import ICON_SIZE, LABEL_GAP, NodeItem
from vtopo.gui.canvas.lines import LinkLines
from vtopo.gui.canvas.overview import DETAIL_ZOOM, OverviewItem
from vtopo.gui.canvas.view import CanvasView
from vtopo.gui.document.checking import Stale, analyse
from vtopo.gui.main_window import MainWindow
from vtopo.gui.overlays.rates import load_of
from vtopo.resources import TOPOLOGIES
from vtopo.model import io

ZOOM_OUT, ZOOM_IN = -24, 24  # wheel notches: zoomed out to 1.15^-24 (or the least zoom), in to the most


def ink_share(view: CanvasView, image: QImage, rect: QRectF) -> float:
    """The share of the pixels in a scene rectangle that differ clearly from the canvas background."""
    base = view.editor.scene.colors.base
    area = view.mapFromScene(rect).boundingRect().intersected(image.rect())
    pixels = [image.pixelColor(x, y) for x in range(area.left(), area.right() + 1)
              for y in range(area.top(), area.bottom() + 1)]
    inked = [c for c in pixels if abs(c.lightness() - base.lightness()) > 60]
    return len(inked) / max(1, len(pixels))


def name_rect(item: NodeItem) -> QRectF:
    """Where a node's name is written: the middle of the strip below its icon."""
    return QRectF(item.pos() + QPointF(-12, ICON_SIZE / 2 + LABEL_GAP + 2), item.pos() +
                  QPointF(12, ICON_SIZE / 2 + LABEL_GAP + 10))


def same_color(a: QColor, b: QColor) -> bool:
    return max(abs(a.red() - b.red()), abs(a.green() - b.green()), abs(a.blue() - b.blue())) <= 8


def test_zooming_out_draws_the_overview_and_zooming_in_the_items_with_their_labels(
        make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window()
    view, scene = window.view, window.editor.scene
    wheel(view, ZOOM_IN)
    wheel(view, -6)  # about zoom 1: names are written
    assert view.zoom >= DETAIL_ZOOM and scene.detailed
    qtbot.waitUntil(lambda: all(link.placed for link in scene.links.values()))
    h1 = scene.nodes["h1"]
    view.centerOn(h1)
    detailed = view.viewport().grab().toImage()
    assert ink_share(view, detailed, name_rect(h1)) > 0.05, "no name under the node"
    assert all(not isinstance(item, OverviewItem) for item in scene.items())

    wheel(view, ZOOM_OUT)
    assert view.zoom < DETAIL_ZOOM and not scene.detailed
    overview = view.viewport().grab().toImage()
    for node_id, item in scene.nodes.items():
        assert item.flags() & QGraphicsItem.GraphicsItemFlag.ItemHasNoContents
        center = view.mapFromScene(item.pos())
        kind = window.editor.topology.nodes[node_id].kind
        assert same_color(overview.pixelColor(center), scene.icons.swatch(kind)), node_id
    assert ink_share(view, overview, name_rect(h1)) < 0.05, "a name is written in the overview"

    wheel(view, ZOOM_IN)
    assert scene.detailed
    assert not any(item.flags() & QGraphicsItem.GraphicsItemFlag.ItemHasNoContents for item in scene.nodes.values())
    view.centerOn(h1)
    assert ink_share(view, view.viewport().grab().toImage(), name_rect(h1)) > 0.05


def test_a_drag_moves_the_links_of_the_dragged_nodes_zoomed_in_and_out(
        make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    view, scene = window.view, window.editor.scene
    for notches in (0, ZOOM_OUT):
        wheel(view, notches)
        h1 = scene.nodes["h1"]
        attached = list(h1.links)
        assert attached
        start = h1.pos()
        drag(view, start, start + QPointF(80, 40) / view.zoom)  # 80 by 40 pixels on screen
        moved = h1.pos()
        assert moved != start
        for link in attached:
            assert moved in (link.line.p1(), link.line.p2()), "the link stayed where the node was"
        if not scene.detailed:  # the overview draws the node where it went, and nothing where it was
            drawn = view.viewport().grab().toImage()
            assert not same_color(drawn.pixelColor(view.mapFromScene(moved)), scene.colors.base)
            assert same_color(drawn.pixelColor(view.mapFromScene(start)), scene.colors.base)
        node = window.editor.topology.nodes["h1"]
        assert (node.position.x, node.position.y) == pytest.approx((moved.x(), moved.y()), abs=0.1)


def test_a_drags_step_zoomed_in_draws_the_dragged_nodes_links_over_the_others_as_drawn_before(
        make_window: Callable[..., MainWindow], monkeypatch: pytest.MonkeyPatch) -> None:
    """Two items draw the links zoomed in; from a drag's second step, only the one drawing what moves paints (Qt
    keeps the other's drawing as it was); after the drop the other draws them all again."""
    painting: list[LinkLines] = []

    def paint(lines: LinkLines, painter: QPainter, option: QStyleOptionGraphicsItem, widget: Any = None) -> None:
        painting.append(lines)
        painted(lines, painter, option, widget)

    painted = LinkLines.paint
    monkeypatch.setattr(LinkLines, "paint", paint)  # before the items are made: PySide looks an override up once
    window = make_window()
    view, scene = window.view, window.editor.scene
    view.reset_zoom()
    node = max(scene.nodes.values(), key=lambda item: len(item.links))  # the switch: its links cross the view
    view.centerOn(node)
    QApplication.processEvents()
    start = view.mapFromScene(node.pos())
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send(view, QMouseEvent.Type.MouseButtonPress, start, left, left)
    QApplication.processEvents()
    steps = []
    for step in range(1, 6):
        painting.clear()
        send(view, QMouseEvent.Type.MouseMove, start + QPoint(6 * step, 4 * step), none, left)
        QApplication.processEvents()
        steps.append(set(painting))
    assert len(steps[0]) == 2, "the first step draws both"
    moving = steps[1]
    assert len(moving) == 1 and all(step == moving for step in steps[1:]), "a later step drew the other links"
    send(view, QMouseEvent.Type.MouseButtonRelease, start + QPoint(30, 20), left, none)
    QApplication.processEvents()
    painting.clear()
    view.viewport().repaint()
    assert set(painting) - moving, "after the drop, the links are not drawn with the others"
    assert node.pos() != view.mapToScene(start) and all(node in (link.a, link.b) for link in node.links)


def test_dragging_a_selection_moves_the_links_between_its_nodes_with_their_labels(
        make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    view, scene = window.view, window.editor.scene
    ends = {"h1", "lan1"}
    link = next(item for item in scene.links.values() if {item.a.node_id, item.b.node_id} == ends)
    scene.select_ids(ends)
    rects_before = [link.mapRectToScene(rect) for rect in link._label_rects]
    start = scene.nodes["h1"].pos()
    drag(view, start, start + QPointF(80, 40))
    delta = scene.nodes["h1"].pos() - start
    assert delta != QPointF()
    assert link.line.p1() in (scene.nodes["h1"].pos(), scene.nodes["lan1"].pos())
    assert [link.mapRectToScene(rect).topLeft() for rect in link._label_rects] == [
        rect.topLeft() + delta for rect in rects_before]


def test_an_edit_after_a_drag_still_reaches_the_problems_panel(make_window: Callable[..., MainWindow],
                                                                 qtbot: Any) -> None:
    window = make_window()
    view, scene = window.view, window.editor.scene
    wheel(view, ZOOM_OUT)
    checked = window.analyzer.latest
    start = scene.nodes["r1"].pos()
    drag(view, start, start + QPointF(200, 0))
    assert not window.analyzer.pending and window.analyzer.latest is checked, "a drag started a check"
    window.editor.set_node_settings("r1", {"hello_interval": 5, "dead_interval": 4})
    qtbot.waitUntil(lambda: window.problems.model.rowCount() > 0, timeout=5000)
    where, message = (window.problems.model.index(0, column).data() for column in (0, 1))
    assert where == "node r1" and "dead interval" in message
    assert scene.nodes["r1"].severity == "error"
    window.editor.undo_stack.undo()
    wait_analysis(qtbot, window)
    assert window.problems.model.rowCount() == 0
    assert scene.nodes["r1"].severity == ""


def test_a_check_no_longer_wanted_stops() -> None:
    topology = io.load(TOPOLOGIES / "l2-vs-l3.vtopo")
    assert analyse(1, topology).analysis.compiled
    with pytest.raises(Stale):
        analyse(2, topology, wanted=lambda: False)


@pytest.mark.parametrize("containers", [10, 300])
def test_a_dropped_check_is_freed_without_the_cycle_collector(containers: int) -> None:
    """What a check made dies with it: the collector, which holds the interpreter lock while the GUI thread waits,
    finds only NetworkX's few views of the emptied graphs, however big the lab."""
    topology = star(containers)
    analyse(1, topology)  # the first check in a process also loads the kinds and NetworkX
    with collector_paused():
        assert analyse(1, topology).analysis.compiled
        assert gc.collect() < 40


def test_an_export_from_the_overview_draws_every_item(make_window: Callable[..., MainWindow],
                                                     tmp_path: Path) -> None:
    window = make_window()
    scene = window.editor.scene
    wheel(window.view, ZOOM_OUT)
    assert not scene.detailed
    path = tmp_path / "lab.png"
    assert export.export_png(scene, path)
    assert not scene.detailed, "the export left the overview"
    image = QImage(str(path))
    source = export._source_rect(scene)
    h1 = scene.nodes["h1"]
    x, y = (h1.pos().x() - source.left()) * 2, (h1.pos().y() - source.top()) * 2
    kind = window.editor.topology.nodes["h1"].kind
    assert not same_color(image.pixelColor(int(x), int(y)), scene.icons.swatch(kind)), "exported as a square"


def zoomed_out(window: MainWindow) -> MainWindow:
    """The window zoomed out with the wheel, as a user does, to where the overview draws the lab."""
    wheel(window.view, ZOOM_OUT)
    assert not window.editor.scene.detailed
    return window


def test_the_rubber_band_selects_in_the_overview_and_the_overview_outlines_the_selection(
        make_window: Callable[..., MainWindow]) -> None:
    window = zoomed_out(make_window())
    view, scene = window.view, window.editor.scene
    around = scene.itemsBoundingRect()
    margin = QPointF(30, 30) / view.zoom  # 30 pixels outside every node: the press lands on empty canvas
    drag(view, around.topLeft() - margin, around.bottomRight() + margin)
    assert set(scene.selected_node_ids()) == set(scene.nodes)
    h1 = scene.nodes["h1"]
    outline = view.mapFromScene(h1.pos() + QPointF(ICON_SIZE / 2 + 6, 0))
    image = view.viewport().grab().toImage()
    assert any(same_color(image.pixelColor(outline.x() + dx, outline.y()), scene.colors.highlight)
               for dx in (-1, 0, 1)), "the selected node has no outline in the overview"


def test_a_dragged_node_takes_its_outline_along_in_the_overview(make_window: Callable[..., MainWindow]) -> None:
    window = zoomed_out(make_window())
    view, scene = window.view, window.editor.scene
    h1 = scene.nodes["h1"]
    start = h1.pos()
    click(view, start)
    view.viewport().grab()  # the outline is drawn before the drag: only the move is left for the overview
    drag(view, start, start + QPointF(0, 80) / view.zoom)

    def outlined(at: QPointF) -> bool:
        edge = view.mapFromScene(at + QPointF(ICON_SIZE / 2 + 6, 0))
        image = view.viewport().grab().toImage()
        return any(same_color(image.pixelColor(edge.x() + dx, edge.y()), scene.colors.highlight) for dx in (-1, 0, 1))

    assert scene.selected_node_ids() == ["h1"] and h1.pos() != start
    assert outlined(h1.pos()), "the outline stayed behind"
    assert not outlined(start), "the outline stayed where the node was"


def test_a_link_whose_traffic_starts_or_stops_is_redrawn_in_the_overview_but_not_for_an_idle_links_chatter(
        make_window: Callable[..., MainWindow]) -> None:
    window = zoomed_out(make_window())
    view, scene = window.view, window.editor.scene
    link_id, link = next(iter(scene.links.items()))
    middle = link.line.center()
    around = QRectF(middle - QPointF(4, 4) / view.zoom, middle + QPointF(4, 4) / view.zoom)
    quiet = ink_share(view, view.viewport().grab().toImage(), around)
    scene.set_loads({link_id: 1.0})
    loaded = ink_share(view, view.viewport().grab().toImage(), around)
    scene.set_loads({link_id: 0.0})
    assert loaded > 1.5 * quiet > 0, (quiet, loaded)
    assert ink_share(view, view.viewport().grab().toImage(), around) == quiet
    scene.set_loads({link_id: load_of(300.0)})  # an idle link's chatter: a few solicitations a second
    assert ink_share(view, view.viewport().grab().toImage(), around) == quiet
    scene.set_loads({link_id: load_of(1e6)})
    assert ink_share(view, view.viewport().grab().toImage(), around) == loaded


def test_zoomed_in_a_burst_of_loads_draws_each_link_as_wide_as_its_load(make_window: Callable[..., MainWindow],
                                                                       qtbot: Any, tmp_path: Path) -> None:
    """A packet flooded through a switch changes every link's load at once, and the next second again: each link in
    view is drawn as wide as its own load each time."""
    lab = tmp_path / "switch.vtopo"
    io.save(two_bridges(2 * ROW), lab)
    window = make_window(lab)
    view, scene = window.view, window.editor.scene
    qtbot.keyClick(view, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)  # actual size
    assert scene.detailed
    qtbot.waitUntil(lambda: all(link.placed for link in scene.links.values()))
    link = scene.links["l60"]
    near_its_node = link.line.pointAt(0.15)  # where no other link passes
    view.centerOn(near_its_node)
    around = QRectF(near_its_node - QPointF(6, 6), near_its_node + QPointF(6, 6))

    def ink(load: float, others: float) -> float:  # of the link at `load`, each other link at `others`
        scene.set_loads({link_id: load if link_id == link.link_id else others for link_id in scene.links})
        return ink_share(view, view.viewport().grab().toImage(), around)

    inks = [ink(0.0, 0.1), ink(0.3, 0.2), ink(1.0, 0.1)]
    assert 0 < inks[0] < inks[1] < inks[2], inks
    assert ink(0.0, 0.2) == inks[0]
