"""The links zoomed in: one item draws every link in view, its line and its labels.

A link item paints nothing itself (it keeps its place, its shape for clicks and its state). When traffic changes the
rate of every link at a switch of a thousand ports, the 700 links in view would each be painted by a Python call of
their own, 40 ms a change; here the plain lines are drawn a list per pen, and only the labels in view are drawn.
"""
from __future__ import annotations

from typing import Container, Iterable, Mapping

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from vtopo.gui.canvas.items import LINE_MARGINS, MIN_LOD_FOR_TEXT, LinkItem, NodeItem
from vtopo.gui.canvas.text_grid import TextGrid


PenKey = tuple[tuple[int, float, Qt.PenStyle], float]  # LinkItem.pen_key()


class StretchedLinks:
    """The links drawn stretched between their nodes (LinkItem.stretch). Which links are drawn in which pen, and
    which nodes end them where, is worked out when a link comes or goes or changes its look; a step only reads the
    positions of the nodes that moved and lists the lines' ends a pen: a dragged bridge's thousand links are not
    each asked for a line every step. Decorated links (LinkItem.decorated) are drawn apart, by themselves."""

    def __init__(self) -> None:
        self._links: dict[LinkItem, None] = {}  # an ordered set
        self._plan: _Plan | None = None  # None: made again from the links before the lines are next taken
        self._groups: list[tuple[LinkItem, list[QPointF]]] = []
        self._box = QRectF()  # where the lines were last taken, as widely as they may be drawn

    def __bool__(self) -> bool:
        return bool(self._links)

    def clear(self) -> None:
        """The links went with their lab."""
        self._links.clear()
        self._plan = None

    def changed(self, link: LinkItem) -> None:
        """The link started or stopped being drawn stretched, or its look changed."""
        if link.stretched:
            self._links[link] = None
        else:
            self._links.pop(link, None)
        self._plan = None

    def node_moved(self, node: NodeItem) -> None:
        """The node moved: its position is read again when the lines are next taken."""
        if self._plan is not None:
            self._plan.moved.add(node)

    def follow(self) -> QRectF:
        """Their nodes moved: the lines are taken again. Where they were and now are drawn, to draw again."""
        before = self._box
        self._take()
        return before.united(self._box)

    def groups(self) -> list[tuple[LinkItem, list[QPointF]]]:
        """The lines of the plain links, as their end points' pairs, a list per pen with the first link drawn in it."""
        if self._plan is None:
            self._take()
        return self._groups

    def apart(self) -> list[LinkItem]:
        """The decorated ones, drawn as their own lines."""
        if self._plan is None:
            self._take()
        assert self._plan is not None
        return self._plan.apart

    def _take(self) -> None:
        plan = self._plan
        if plan is None:
            plan = self._plan = _Plan(self._links)
        at = plan.at
        for node in plan.moved:
            if node in at:
                at[node] = node.pos()
        plan.moved.clear()
        asked: list[QPointF] = []  # the ends of the lines asked for
        groups = []
        for first, ends, by_line in plan.groups:
            points = [at[node] for node in ends]
            for link in by_line:
                line = link.line
                points += (line.p1(), line.p2())
            asked += points[len(ends):]
            groups.append((first, points))
        for link in plan.apart:
            line = link.line
            asked += (line.p1(), line.p2())
        self._groups = groups
        points = [*at.values(), *asked]
        xs, ys = [point.x() for point in points], [point.y() for point in points]
        self._box = QRectF(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)).adjusted(*LINE_MARGINS) \
            if points else QRectF()


class _Plan:
    """How StretchedLinks takes its lines: where the nodes that end them are (read again for those that moved), and
    a group per pen, each with its first link, the nodes ending its lines in pairs, and its links whose lines are
    asked for (those that may have parallels, drawn beside them)."""

    def __init__(self, links: Iterable[LinkItem]) -> None:
        nodes: dict[NodeItem, None] = {}
        by_key: dict[PenKey, tuple[LinkItem, list[NodeItem], list[LinkItem]]] = {}
        self.apart: list[LinkItem] = []
        for link in links:
            if link.decorated:
                self.apart.append(link)
                continue
            key = link.pen_key()
            group = by_key.get(key)
            if group is None:
                group = by_key[key] = (link, [], [])
            a, b = link.a, link.b
            if len(a.links) > 1 and len(b.links) > 1:
                group[2].append(link)
            else:
                nodes[a] = nodes[b] = None
                group[1].extend((a, b))
        self.at = {node: node.pos() for node in nodes}
        self.moved: set[NodeItem] = set()
        self.groups = list(by_key.values())


class LinkLines(QGraphicsItem):
    """Draws the links it is given where the view shows them, but those whose ids are in `apart` (drawn by another
    LinkLines), and the stretched links if it is given them. Its bounds hold every link's drawing: they grow as a
    link reaches further, and are measured again after links went."""

    def __init__(self, links: Mapping[str, LinkItem], stretched: StretchedLinks | None,
                 texts: TextGrid[NodeItem | LinkItem], apart: Container[str] = ()) -> None:
        super().__init__()
        self._links = links
        self._stretched = stretched
        self._apart = apart
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
        inverse, invertible = painter.worldTransform().inverted()
        device = painter.device()
        if invertible and device is not None:  # a cached drawing is asked for all of it, on a pixmap of the view's size
            exposed = exposed.intersected(inverse.mapRect(QRectF(0, 0, device.width(), device.height())))
        apart = self._apart
        links = [link for link in self._links.values()
                 if not link.stretched and link.link_id not in apart and link.drawn_rect().intersects(exposed)]
        # not the scene's index: QGraphicsScene.render leaves the items it draws out of it meanwhile; and a drag's
        # thousand stretched lines are left to the painter to clip, which costs less than a rect each in Python
        plain: dict[tuple[PenKey, bool], tuple[LinkItem, list[QLineF]]] = {}
        decorated = [*self._stretched.apart()] if self._stretched else []
        for link in links:
            if link.decorated:
                decorated.append(link)
            else:
                key = (link.pen_key(), link.crowded)
                group = plain.get(key)
                if group is None:
                    plain[key] = (link, [link.line])
                else:
                    group[1].append(link.line)
        for link in decorated:
            link.paint_beneath(painter)
        smooth = painter.testRenderHint(QPainter.RenderHint.Antialiasing)
        for (_key, crowded), (first, lines) in plain.items():  # each pen made once, by the first link drawn in it
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, smooth and not crowded)
            painter.setPen(first.pen(first.isSelected()))
            painter.drawLines(lines)
        if self._stretched:  # plain: a drag's step draws a thousand stretched lines in a few ms, not 50
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            for first, ends in self._stretched.groups():
                painter.setPen(first.pen(first.isSelected()))
                painter.drawLines(ends)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, smooth)
        for link in decorated:
            link.paint_line(painter)
        if links and option.levelOfDetailFromTransform(painter.worldTransform()) >= MIN_LOD_FOR_TEXT:
            labelled = {owner for owner in self._texts.owners_over(exposed) if isinstance(owner, LinkItem)}
            for link in links:  # in their order: at a switch, a few of the links in view have labels in view
                if link in labelled:
                    link.paint_labels(painter, exposed)
