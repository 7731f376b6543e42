"""The whole lab at a glance: one item that draws every node and link when the view is zoomed out.

Below DETAIL_ZOOM a node's icon and name are a few pixels wide, and painting thousands of items one by one costs
more than the frame has. The overview draws the links as one path and the nodes as plain squares in their kind's
colour, grouped by colour, with outlines for the selection and for problems. The items stay in the scene, so
clicks, the rubber band and tooltips find them as before; they just paint nothing meanwhile.
"""
from __future__ import annotations

from typing import Mapping

from PySide6.QtCore import QLineF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from vtopo.gui.canvas.items import ICON_SIZE, LinkItem, Look, NodeItem
from vtopo.gui.canvas.states import SEVERITY_COLORS, NodeState

DETAIL_ZOOM = 0.3
"""Below this zoom the overview draws the lab; at or above it every item draws itself, with its labels."""
MARK_WIDTH = 2.5  # pixels, whatever the zoom: an outline or a marked link must stay visible


class OverviewItem(QGraphicsItem):
    """Draws the nodes and links it is given; rebuilt lazily after something it draws changed. Marks (selection,
    problems, states, a measured path) are rebuilt on their own: a check's result or a click moves nothing."""

    def __init__(self, nodes: Mapping[str, NodeItem], links: Mapping[str, LinkItem], look: Look) -> None:
        super().__init__()
        self._nodes = nodes
        self._links = links
        self._look = look
        self._stale = True
        self._marks_stale = True
        self._bounds = QRectF()
        self._link_path = QPainterPath()
        self._marked_links: list[tuple[QLineF, QPen]] = []
        self._squares: dict[int, tuple[QColor, list[QRectF]]] = {}
        self._outlines: list[tuple[QRectF, QPen]] = []
        self._dots: list[tuple[QRectF, QColor]] = []
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setZValue(5)  # above the links' items, below the nodes' (neither paints while the overview shows)

    def invalidate(self) -> None:
        """Something it places changed (a position, a node or link added or removed): rebuild all before the next
        paint. Cheap to call many times in a row."""
        if self._stale or self.scene() is None:
            self._stale = True
            return
        self.prepareGeometryChange()  # Qt may ask for the old bounds here, so mark stale only afterwards
        self._stale = True
        self.update()

    def invalidate_marks(self) -> None:
        """Only marks changed: redraw them before the next paint; the bounds stay."""
        if not (self._stale or self._marks_stale):
            self._marks_stale = True
            self.update()

    def boundingRect(self) -> QRectF:
        if self._stale:
            self._rebuild()
        return self._bounds

    def _rebuild(self) -> None:
        self._stale = False
        half = ICON_SIZE / 2
        squares: dict[int, tuple[QColor, list[QRectF]]] = {}
        xs, ys = [], []
        for node in self._nodes.values():
            at = node.pos()
            x, y = at.x(), at.y()
            xs.append(x)
            ys.append(y)
            squares.setdefault(node.swatch.rgba(), (node.swatch, []))[1].append(
                QRectF(x - half, y - half, ICON_SIZE, ICON_SIZE))
        path = QPainterPath()
        for link in self._links.values():  # marked links are drawn again over it
            line = link.line
            path.moveTo(line.p1())
            path.lineTo(line.p2())
        self._squares, self._link_path = squares, path
        self._bounds = (QRectF(min(xs) - half, min(ys) - half, max(xs) - min(xs) + ICON_SIZE,
                               max(ys) - min(ys) + ICON_SIZE).adjusted(-8, -8, 8, 8) if xs else QRectF())
        self._rebuild_marks()

    def _rebuild_marks(self) -> None:
        self._marks_stale = False
        half = ICON_SIZE / 2
        outlines: list[tuple[QRectF, QPen]] = []
        dots: list[tuple[QRectF, QColor]] = []
        colors = self._look.colors
        for node in self._nodes.values():
            color = (colors.highlight if node.isSelected() else colors.path if node.on_path
                     else SEVERITY_COLORS.get(node.severity))
            deployed = node.state is not NodeState.NOT_DEPLOYED
            if color is None and not deployed:
                continue
            at = node.pos()
            square = QRectF(at.x() - half, at.y() - half, ICON_SIZE, ICON_SIZE)
            if color is not None:
                outlines.append((square.adjusted(-6, -6, 6, 6), self._cosmetic(QPen(color))))
            if deployed:
                dots.append((QRectF(square.center(), square.bottomRight()), node.state.color))
        self._outlines, self._dots = outlines, dots
        self._marked_links = [(link.line, self._cosmetic(link.pen(link.isSelected())))
                              for link in self._links.values() if link.marked]

    @staticmethod
    def _cosmetic(pen: QPen) -> QPen:
        pen.setCosmetic(True)
        pen.setWidthF(MARK_WIDTH)
        return pen

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        if self._stale:
            self._rebuild()
        elif self._marks_stale:
            self._rebuild_marks()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        link_pen = QPen(self._look.colors.link, 1)
        link_pen.setCosmetic(True)
        painter.setPen(link_pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._link_path)
        for line, pen in self._marked_links:
            painter.setPen(pen)
            painter.drawLine(line)
        painter.setPen(Qt.PenStyle.NoPen)
        for color, squares in self._squares.values():
            painter.setBrush(color)
            painter.drawRects(squares)
        for square, color in self._dots:
            painter.setBrush(color)
            painter.drawRect(square)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for outline, pen in self._outlines:
            painter.setPen(pen)
            painter.drawRect(outline)
