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
    """Draws the nodes and links it is given; rebuilt lazily after something it draws changed."""

    def __init__(self, nodes: Mapping[str, NodeItem], links: Mapping[str, LinkItem], look: Look) -> None:
        super().__init__()
        self._nodes = nodes
        self._links = links
        self._look = look
        self._stale = True
        self._bounds = QRectF()
        self._link_path = QPainterPath()
        self._marked_links: list[tuple[QLineF, QPen]] = []
        self._squares: dict[int, tuple[QColor, list[QRectF]]] = {}
        self._outlines: list[tuple[QRectF, QPen]] = []
        self._dots: list[tuple[QRectF, QColor]] = []
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setZValue(5)  # above the links' items, below the nodes' (neither paints while the overview shows)

    def invalidate(self) -> None:
        """Something it draws changed: rebuild before the next paint. Cheap to call many times in a row."""
        if self._stale or self.scene() is None:
            self._stale = True
            return
        self.prepareGeometryChange()  # Qt may ask for the old bounds here, so mark stale only afterwards
        self._stale = True
        self.update()

    def boundingRect(self) -> QRectF:
        if self._stale:
            self._rebuild()
        return self._bounds

    def _rebuild(self) -> None:
        self._stale = False
        half = ICON_SIZE / 2
        squares: dict[int, tuple[QColor, list[QRectF]]] = {}
        outlines: list[tuple[QRectF, QPen]] = []
        dots: list[tuple[QRectF, QColor]] = []
        bounds = QRectF()
        colors = self._look.colors
        for node in self._nodes.values():
            at = node.pos()
            square = QRectF(at.x() - half, at.y() - half, ICON_SIZE, ICON_SIZE)
            squares.setdefault(node.swatch.rgba(), (node.swatch, []))[1].append(square)
            bounds = bounds.united(square)
            color = (colors.highlight if node.isSelected() else colors.path if node.on_path
                     else SEVERITY_COLORS.get(node.severity))
            if color is not None:
                outlines.append((square.adjusted(-6, -6, 6, 6), self._cosmetic(QPen(color))))
            if node.state is not NodeState.NOT_DEPLOYED:
                dots.append((QRectF(square.center(), square.bottomRight()), node.state.color))
        path = QPainterPath()
        marked: list[tuple[QLineF, QPen]] = []
        for link in self._links.values():
            line = link.line
            if link.marked:
                marked.append((line, self._cosmetic(link.pen(link.isSelected()))))
            else:
                path.moveTo(line.p1())
                path.lineTo(line.p2())
        self._squares, self._outlines, self._dots = squares, outlines, dots
        self._link_path, self._marked_links = path, marked
        self._bounds = bounds.adjusted(-8, -8, 8, 8)

    @staticmethod
    def _cosmetic(pen: QPen) -> QPen:
        pen.setCosmetic(True)
        pen.setWidthF(MARK_WIDTH)
        return pen

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        if self._stale:
            self._rebuild()
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
