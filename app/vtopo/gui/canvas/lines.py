"""The links zoomed in: one item draws every link in view, its line and its labels.

A link item paints nothing itself (it keeps its place, its shape for clicks and its state). When traffic changes the
rate of every link at a switch of a thousand ports, the 700 links in view would each be painted by a Python call of
their own, 40 ms a change; here the plain lines are drawn a list per pen, and only the labels in view are drawn.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from vtopo.gui.canvas.items import LINE_MARGINS, MIN_LOD_FOR_TEXT, LinkItem, NodeItem
from vtopo.gui.canvas.text_grid import TextGrid


PenKey = tuple[tuple[int, float, Qt.PenStyle], float]  # LinkItem.pen_key()


class StretchedLinks:
    """The links drawn stretched between their nodes (LinkItem.stretch), their lines taken from where their nodes
    are in one pass, each node's position read once, and kept as lists of end points a pen: a dragged bridge's
    thousand links are not each asked for a line every step. Decorated links (LinkItem.decorated) are drawn apart,
    by themselves."""

    def __init__(self) -> None:
        self._links: dict[LinkItem, None] = {}  # an ordered set
        self._groups: dict[PenKey, tuple[LinkItem, list[QPointF]]] | None = {}  # None: taken again when asked for
        self._apart: list[LinkItem] = []
        self._box = QRectF()  # where the lines were last taken, as widely as they may be drawn

    def __bool__(self) -> bool:
        return bool(self._links)

    def changed(self, link: LinkItem) -> None:
        """The link started or stopped being drawn stretched (LinkItem.stretch and its placing again)."""
        if link.stretched:
            self._links[link] = None
        else:
            self._links.pop(link, None)
        self._groups = None

    def follow(self) -> QRectF:
        """Their nodes moved: the lines are taken again. Where they were and now are drawn, to draw again."""
        before = self._box
        self._take()
        return before.united(self._box)

    def groups(self) -> Iterable[tuple[LinkItem, list[QPointF]]]:
        """The lines of the plain links, as their end points' pairs, a list per pen with the first link drawn in it."""
        if self._groups is None:
            self._take()
        assert self._groups is not None
        return self._groups.values()

    def apart(self) -> list[LinkItem]:
        """The decorated ones, drawn as their own lines."""
        if self._groups is None:
            self._take()
        return self._apart

    def _take(self) -> None:
        at: dict[NodeItem, QPointF] = {}
        groups: dict[PenKey, tuple[LinkItem, list[QPointF]]] = {}
        apart: list[LinkItem] = []
        shifted: list[QPointF] = []
        for link in self._links:
            a, b = link.a, link.b
            if link.decorated:
                apart.append(link)
                continue
            if len(a.links) > 1 and len(b.links) > 1:  # it may have parallels, drawn beside it
                line = link.line
                ends = (line.p1(), line.p2())
                shifted.extend(ends)
            else:
                start, end = at.get(a), at.get(b)
                if start is None:
                    start = at[a] = a.pos()
                if end is None:
                    end = at[b] = b.pos()
                ends = (start, end)
            key = link.pen_key()
            group = groups.get(key)
            if group is None:
                groups[key] = (link, [*ends])
            else:
                group[1].extend(ends)
        for link in apart:
            line = link.line
            shifted.extend((line.p1(), line.p2()))
        points = [*at.values(), *shifted]
        xs, ys = [point.x() for point in points], [point.y() for point in points]
        self._box = QRectF(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)).adjusted(*LINE_MARGINS) \
            if points else QRectF()
        self._groups, self._apart = groups, apart


class LinkLines(QGraphicsItem):
    """Draws the links it is given where the view shows them. Its bounds hold every link's drawing: they grow as a
    link reaches further, and are measured again after links went."""

    def __init__(self, links: Mapping[str, LinkItem], stretched: StretchedLinks,
                 texts: TextGrid[NodeItem | LinkItem]) -> None:
        super().__init__()
        self._links = links
        self._stretched = stretched
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
        links = [link for link in self._links.values() if not link.stretched and link.drawn_rect().intersects(exposed)]
        # not the scene's index: QGraphicsScene.render leaves the items it draws out of it meanwhile; and a drag's
        # thousand stretched lines are left to the painter to clip, which costs less than a rect each in Python
        plain: dict[PenKey, tuple[LinkItem, list[QLineF]]] = {}
        decorated = [*self._stretched.apart()] if self._stretched else []
        for link in links:
            if link.decorated:
                decorated.append(link)
            else:
                key = link.pen_key()
                group = plain.get(key)
                if group is None:
                    plain[key] = (link, [link.line])
                else:
                    group[1].append(link.line)
        for link in decorated:
            link.paint_beneath(painter)
        for first, lines in plain.values():  # each pen made once, by the first link drawn in it
            painter.setPen(first.pen(first.isSelected()))
            painter.drawLines(lines)
        if self._stretched:
            smooth = painter.testRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)  # a drag's step draws a thousand
            for first, ends in self._stretched.groups():  # stretched lines in a few ms, not 50
                painter.setPen(first.pen(first.isSelected()))
                painter.drawLines(ends)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, smooth)
        for link in decorated:
            link.paint_line(painter)
        if option.levelOfDetailFromTransform(painter.worldTransform()) >= MIN_LOD_FOR_TEXT:
            labelled = {owner for owner in self._texts.owners_over(exposed) if isinstance(owner, LinkItem)}
            for link in links:  # in their order: at a switch, a few of the links in view have labels in view
                if link in labelled:
                    link.paint_labels(painter, exposed)
