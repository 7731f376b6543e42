"""What the canvas draws again, and how: choosing a node in the overview draws its outline again, not the whole lab;
the thousand lines fanning out of a crowded bridge are drawn without antialiasing, a few links smoothed; a drag's step
in the overview draws the stretched links over the overview as Qt kept it. Real mouse and wheel events; the
viewport's own paint events and pixels."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest
from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QApplication, QStyleOptionGraphicsItem

from benchmarks.test_designer_live_bench import two_bridges
from tests.gui.helpers import click, links_settled, send, wheel
from tests.gui.test_level_of_detail import ZOOM_OUT, same_color
from vtopo.gui.canvas.items import CROWD, ICON_SIZE
from vtopo.gui.canvas.overview import OverviewItem
from vtopo.gui.canvas.view import CanvasView
from vtopo.gui.main_window import MainWindow
from vtopo.model import io


class PaintedRects(QObject):
    """The bounding rects of the paint events a widget receives."""

    def __init__(self, widget: QObject) -> None:
        super().__init__(widget)
        self.rects: list[QRect] = []
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(event, QPaintEvent):
            self.rects.append(event.region().boundingRect())
        return False


def painted_after(view: CanvasView, act: Callable[[], None]) -> list[QRect]:
    """The rects the viewport paints while `act` runs and the event loop turns a few times after it."""
    QApplication.processEvents()
    painted = PaintedRects(view.viewport())
    act()
    for _ in range(5):
        QApplication.processEvents()
    view.viewport().removeEventFilter(painted)
    return painted.rects


def outlined(view: CanvasView, at: QPointF) -> bool:
    """Whether the overview draws a node's outline (in the highlight colour) right of its square."""
    edge = view.mapFromScene(at + QPointF(ICON_SIZE / 2 + 6, 0))
    image = view.viewport().grab().toImage()
    return any(same_color(image.pixelColor(edge.x() + dx, edge.y()), view.editor.scene.colors.highlight)
               for dx in (-1, 0, 1))


def test_choosing_a_node_in_the_overview_draws_its_outline_again_not_the_whole_lab(
        make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    view, scene = window.view, window.editor.scene
    wheel(view, ZOOM_OUT)
    assert not scene.detailed
    area = view.viewport().width() * view.viewport().height()
    h1 = scene.nodes["h1"]
    empty = scene.itemsBoundingRect().topLeft() - QPointF(40, 40) / view.zoom
    for act, chosen in ((lambda: click(view, h1.pos()), True), (lambda: click(view, empty), False)):
        painted = painted_after(view, act)
        assert painted, "nothing drawn again"
        assert all(rect.width() * rect.height() < area / 10 for rect in painted), (painted, view.viewport().rect())
        assert scene.selected_node_ids() == (["h1"] if chosen else [])
        assert outlined(view, h1.pos()) == chosen


def shades(image: QImage, rect: QRect, base: QColor) -> tuple[int, int]:
    """Of the pixels in `rect` not of the background: how many are of the commonest colour (the line's, blended
    with the background as its pen's alpha makes it), and how many of other shades (antialiasing's)."""
    inked = Counter(image.pixelColor(x, y).rgb() for x in range(rect.left(), rect.right() + 1)
                    for y in range(rect.top(), rect.bottom() + 1) if not same_color(image.pixelColor(x, y), base))
    if not inked:
        return 0, 0
    (_line, count), *others = inked.most_common()
    return count, sum(other for _shade, other in others)


def middle_of_a_link(window: MainWindow, link_id: str) -> tuple[QImage, QRect]:
    """The canvas at actual size, grid off, centred on the middle of the link; a square of 24 pixels there."""
    view, scene = window.view, window.editor.scene
    view.reset_zoom()
    scene.draw_grid = False
    view.resetCachedContent()
    middle = scene.links[link_id].line.center()
    view.centerOn(middle)
    centre = view.mapFromScene(middle)
    return view.viewport().grab().toImage(), QRect(centre.x() - 12, centre.y() - 12, 24, 24)


def test_a_crowded_bridges_links_are_drawn_without_antialiasing_and_a_few_links_smoothed(
        make_window: Callable[..., MainWindow], qtbot: Any, tmp_path: Path) -> None:
    lab = tmp_path / "bridge.vtopo"
    io.save(two_bridges(CROWD + 20), lab)
    crowded = make_window(lab)
    qtbot.waitUntil(lambda: links_settled(crowded.editor.scene))
    few = make_window()
    diagonal = next(link_id for link_id, link in few.editor.scene.links.items()
                    if abs(link.line.dx()) > 40 and abs(link.line.dy()) > 40)
    for window, link_id, smooth in ((crowded, "l0", False), (few, diagonal, True)):
        image, square = middle_of_a_link(window, link_id)
        inked, between = shades(image, square, window.editor.scene.colors.base)
        assert inked > 0, f"no line at the middle of {link_id}"
        assert (between > 0) == smooth, (link_id, inked, between)


def test_a_drags_step_in_the_overview_draws_the_stretched_links_over_the_overview_as_drawn_before(
        make_window: Callable[..., MainWindow], qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Zoomed out, a drag of a crowded bridge stretches its links: from the second step the overview is copied as Qt
    kept it, drawn again only around the bridge's square, and the stretched lines are drawn over it; after the drop,
    the lines are where the bridge went."""
    clips: list[QRectF] = []

    def paint(overview: OverviewItem, painter: QPainter, option: QStyleOptionGraphicsItem, widget: Any = None) -> None:
        clips.append(painter.clipBoundingRect() if painter.hasClipping() else overview.boundingRect())
        painted(overview, painter, option, widget)

    painted = OverviewItem.paint
    monkeypatch.setattr(OverviewItem, "paint", paint)  # before the items are made: PySide looks an override up once
    lab = tmp_path / "bridge.vtopo"
    io.save(two_bridges(CROWD + 20), lab)
    window = make_window(lab)
    view, scene = window.view, window.editor.scene
    wheel(view, ZOOM_OUT)
    assert not scene.detailed
    bridge = scene.nodes["br0"]
    start = view.mapFromScene(bridge.pos())
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send(view, QMouseEvent.Type.MouseButtonPress, start, left, left)
    QApplication.processEvents()
    lab_size = scene.itemsBoundingRect()
    for step in range(1, 6):
        clips.clear()
        send(view, QMouseEvent.Type.MouseMove, start + QPoint(6 * step, 4 * step), none, left)
        QApplication.processEvents()
        if step > 1:
            assert all(clip.width() * clip.height() < lab_size.width() * lab_size.height() / 20
                       for clip in clips), (step, clips, lab_size)
    assert all(link.stretched for link in bridge.links)
    send(view, QMouseEvent.Type.MouseButtonRelease, start + QPoint(30, 20), left, none)
    qtbot.waitUntil(lambda: links_settled(scene))
    assert bridge.pos() != view.mapToScene(start)
    assert all(bridge.pos() in (link.line.p1(), link.line.p2()) for link in bridge.links)
