"""The links zoomed in: one item draws every link in view, its line and its labels.

A link item paints nothing itself (it keeps its place, its shape for clicks and its state). When traffic changes the
rate of every link at a switch of a thousand ports, the 700 links in view would each be painted by a Python call of
their own, 40 ms a change; here the plain lines are drawn a list per pen, and only the labels in view are drawn.
"""
from __future__ import annotations

from typing import Mapping

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from vtopo.gui.canvas.items import LINE_MARGIN, MIN_LOD_FOR_TEXT, LinkItem, NodeItem
from vtopo.gui.canvas.text_grid import TextGrid


INNER_MARGINS = (LINE_MARGIN, LINE_MARGIN, -LINE_MARGIN, -LINE_MARGIN)


class LinkLines(QGraphicsItem):
    """Draws the links it is given where the view shows them. Its bounds hold every link's drawing: they grow as a
    link reaches further, and are measured again after links went."""

    def __init__(self, links: Mapping[str, LinkItem], texts: TextGrid[NodeItem | LinkItem]) -> None:
        super().__init__()
        self._links = links
        self._texts = texts
        self._bounds = QRectF()
        self._stale = True
        self._changed = QRectF()  # where it was told to draw again since take_changed()
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)  # the exposed rect, for paint
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setZValue(0)  # where the link items are: above the annotations, below the nodes

    def invalidate(self) -> None:
        """Links went: the bounds are measured again before they are next asked for."""
        if not self._stale and self.scene() is not None:
            self.prepareGeometryChange()  # Qt may ask for the old bounds here, so they are marked stale only after
            self._changed = self._changed.united(self._bounds)
        self._stale = True

    def reaches(self, rect: QRectF) -> None:
        """A link now draws in `rect`: drawn there, the bounds grown to hold it."""
        if not self._stale and not self._bounds.contains(rect):
            if self.scene() is not None:
                self.prepareGeometryChange()  # draws all of it again
                self._changed = self._changed.united(self._bounds)
            self._bounds = self._bounds.united(rect)
        self.redraw(rect)

    def holds(self, point: QPointF) -> bool:
        """Whether the bounds hold a link's line ending at `point`, as widely as it may be drawn."""
        return self._stale or self._bounds.adjusted(*INNER_MARGINS).contains(point)

    def redraw(self, rect: QRectF) -> None:
        """A link's drawing changed in `rect`."""
        self._changed = self._changed.united(rect)
        self.update(rect)

    def take_changed(self) -> QRectF:
        """Where it was told to draw again since it was last asked."""
        changed, self._changed = self._changed, QRectF()
        return changed

    def boundingRect(self) -> QRectF:
        if self._stale:
            self._stale = False
            bounds = QRectF()
            for link in self._links.values():
                bounds = bounds.united(link.drawn_rect())
            self._bounds = bounds
        return self._bounds

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        exposed = option.exposedRect
        links = [link for link in self._links.values() if link.stretched or link.drawn_rect().intersects(exposed)]
        # not the scene's index: QGraphicsScene.render leaves the items it draws out of it meanwhile; and a drag's
        # thousand stretched lines are left to the painter to clip, which costs less than a rect each in Python
        plain: dict[tuple[tuple[tuple[int, float, Qt.PenStyle], float], bool], tuple[LinkItem, list[QLineF]]] = {}
        decorated = []
        for link in links:
            if link.decorated:
                decorated.append(link)
            else:
                key = (link.pen_key(), link.stretched)
                group = plain.get(key)
                if group is None:
                    plain[key] = (link, [link.line])
                else:
                    group[1].append(link.line)
        for link in decorated:
            link.paint_beneath(painter)
        smooth = painter.testRenderHint(QPainter.RenderHint.Antialiasing)
        for (_key, stretched), (first, lines) in plain.items():  # each pen made once, by the first link drawn in it
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, smooth and not stretched)  # a drag's step
            painter.setPen(first.pen(first.isSelected()))  # draws a thousand stretched lines in a few ms, not 50
            painter.drawLines(lines)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, smooth)
        for link in decorated:
            link.paint_line(painter)
        if option.levelOfDetailFromTransform(painter.worldTransform()) >= MIN_LOD_FOR_TEXT:
            labelled = {owner for owner in self._texts.owners_over(exposed) if isinstance(owner, LinkItem)}
            for link in links:  # in their order: at a switch, a few of the links in view have labels in view
                if link in labelled:
                    link.paint_labels(painter, exposed)
