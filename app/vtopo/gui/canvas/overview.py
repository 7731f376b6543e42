"""The whole lab at a glance: one item that draws every node and link when the view is zoomed out.

Below DETAIL_ZOOM a node's icon and name are a few pixels wide, and painting thousands of items one by one costs
more than the frame has. The overview draws the links as one list of lines and the nodes as plain squares in their
kind's colour, grouped by colour, with outlines for the selection and for problems. The items stay in the scene, so
clicks, the rubber band and tooltips find them as before; they just paint nothing meanwhile. While a drag stretches
links, a second item draws those over the overview, which Qt keeps as a pixmap until the drop.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from PySide6.QtCore import QLineF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from vtopo.gui.canvas.items import ICON_SIZE, LinkItem, Look, NodeItem
from vtopo.gui.canvas.lines import StretchedLinks
from vtopo.gui.canvas.states import SEVERITY_COLORS, NodeState

DETAIL_ZOOM = 0.3
"""Below this zoom the overview draws the lab; at or above it every item draws itself, with its labels."""
MARK_WIDTH = 2.5  # pixels, whatever the zoom: an outline or a marked link must stay visible
MANY_MARKS = 64  # marks changed at once beyond which the whole lab is drawn again, with one call
LINE_WIDTH = 1.01
"""A plain link's width in pixels, whatever the zoom. Not a cosmetic pen of 1: Qt's raster engine draws those a
pixel at a time, 12 ms for the 2,000 lines of the two-bridges lab against 4 ms filled as thin polygons."""


class OverviewItem(QGraphicsItem):
    """Draws the nodes and links it is given; brought up to date lazily, before it is measured or painted. What
    moved is redrawn where it now is (a drop of a hundred nodes redraws a hundred squares and their links); marks
    (selection, problems, states, a measured path) are rebuilt on their own, and the marks of what moved follow it;
    anything else rebuilds it all."""

    def __init__(self, nodes: Mapping[str, NodeItem], links: Mapping[str, LinkItem], look: Look) -> None:
        super().__init__()
        self._nodes = nodes
        self._links = links
        self._look = look
        self._stale = True
        self._moved: set[NodeItem | LinkItem] = set()
        self._marks_stale = True
        self._bounds = QRectF()
        self._lines: list[QLineF] = []
        self._line_of: dict[LinkItem, int] = {}
        self._left_out: set[int] = set()  # the stretched links' lines: the StretchedOverview draws them
        self._drawn_lines: list[QLineF] | None = None  # the lines but those left out (None: to be listed again)
        self._squares: dict[int, tuple[QColor, list[QRectF]]] = {}
        self._square_of: dict[NodeItem, tuple[int, int]] = {}  # (the colour's key, the index in its list)
        self._marked_links: dict[LinkItem, QPen] = {}
        self._outlines: dict[NodeItem, tuple[QRectF, QPen]] = {}
        self._dots: dict[NodeItem, tuple[QRectF, QColor]] = {}
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setZValue(5)  # above the links' items, below the nodes' (neither paints while the overview shows)

    def invalidate(self) -> None:
        """Nodes or links came or went, or the colours changed: rebuild all. Cheap to call many times in a row."""
        if self._stale or self.scene() is None:
            self._stale = True
            return
        self.prepareGeometryChange()  # Qt may ask for the old bounds here, so mark stale only afterwards
        self._stale = True
        self.update()

    def moved(self, item: NodeItem | LinkItem) -> None:
        """A node or a link's line moved: drawn again where it was and where it now is."""
        if self._stale or self.scene() is None:
            self._stale = True
            return
        self._moved.add(item)
        if isinstance(item, NodeItem):
            key, index = self._square_of[item]
            was, now = _outline(self._squares[key][1][index]), _outline(self._square(item))
        else:
            was, now = _box(self._lines[self._line_of[item]]), _box(item.line)
        if self._bounds.contains(now):
            self.update(was.united(now))
        else:
            self.prepareGeometryChange()  # draws it all again

    def stretched(self, links: Iterable[LinkItem], drawn: QRectF) -> None:
        """The links are drawn stretched from now on (by the StretchedOverview), not here: drawn again where they
        were, `drawn`, once for them all (a bridge's thousand links each telling of its own box took 10 ms)."""
        if self._stale or self.scene() is None:
            self._stale = True
            return
        self._moved.update(links)
        self.update(drawn)

    def invalidate_marks(self) -> None:
        """Only marks changed: they are rebuilt by redraw_marks (the scene calls it once the turn's events are
        handled) or before the next paint, whichever comes first; the bounds stay."""
        self._marks_stale = True

    def redraw_marks(self) -> None:
        """Rebuild the marks if they changed, and draw them again where they came, went or changed: choosing a node
        draws two outlines again, not the whole lab (20 ms at 2,000 nodes)."""
        if self._marks_stale and not self._stale and self.scene() is not None:
            self._bring_up_to_date()

    def boundingRect(self) -> QRectF:
        self._bring_up_to_date(marks=False)
        return self._bounds

    def _bring_up_to_date(self, marks: bool = True) -> None:
        if self._stale:
            self._rebuild()  # drawn again whole: the marks need no redrawing of their own
            self._rebuild_marks()
        elif self._moved:
            self._follow_moves()
        if marks and self._marks_stale:
            before = (self._outlines, self._dots, self._marked_links)
            self._rebuild_marks()
            self._redraw_changed_marks(*before)

    def _rebuild(self) -> None:
        self._stale, self._moved = False, set()
        squares: dict[int, tuple[QColor, list[QRectF]]] = {}
        self._square_of = {}
        for node in self._nodes.values():
            key = node.swatch.rgba()
            listed = squares.setdefault(key, (node.swatch, []))[1]
            self._square_of[node] = (key, len(listed))
            listed.append(self._square(node))
        self._squares = squares
        self._line_of = {link: index for index, link in enumerate(self._links.values())}
        self._lines = [link.line for link in self._links.values()]
        self._left_out = {index for link, index in self._line_of.items() if link.stretched}
        self._drawn_lines = None
        xs = [square.center().x() for _, listed in squares.values() for square in listed]
        ys = [square.center().y() for _, listed in squares.values() for square in listed]
        half = ICON_SIZE / 2
        self._bounds = (QRectF(min(xs) - half, min(ys) - half, max(xs) - min(xs) + ICON_SIZE,
                               max(ys) - min(ys) + ICON_SIZE).adjusted(-8, -8, 8, 8) if xs else QRectF())
        self._marks_stale = True

    def _follow_moves(self) -> None:
        moved, self._moved = self._moved, set()
        for item in moved:
            if isinstance(item, NodeItem) and item in self._square_of:
                key, index = self._square_of[item]
                square = self._squares[key][1][index] = self._square(item)
                self._bounds = self._bounds.united(square.adjusted(-8, -8, 8, 8))
                if item in self._outlines:
                    self._outlines[item] = (_outline(square), self._outlines[item][1])
                if item in self._dots:
                    self._dots[item] = (_dot(square), self._dots[item][1])
            elif isinstance(item, LinkItem) and item in self._line_of:
                index = self._line_of[item]
                if item.stretched:
                    self._left_out.add(index)
                else:
                    self._lines[index] = item.line
                    self._left_out.discard(index)
                self._drawn_lines = None

    @staticmethod
    def _square(node: NodeItem) -> QRectF:
        at = node.pos()
        return QRectF(at.x() - ICON_SIZE / 2, at.y() - ICON_SIZE / 2, ICON_SIZE, ICON_SIZE)

    def _rebuild_marks(self) -> None:
        self._marks_stale = False
        outlines: dict[NodeItem, tuple[QRectF, QPen]] = {}
        dots: dict[NodeItem, tuple[QRectF, QColor]] = {}
        colors = self._look.colors
        for node in self._nodes.values():
            color = (colors.highlight if node.isSelected() else colors.path if node.on_path
                     else SEVERITY_COLORS.get(node.severity))
            deployed = node.state is not NodeState.NOT_DEPLOYED
            if color is None and not deployed:
                continue
            square = self._square(node)
            if color is not None:
                outlines[node] = (_outline(square), self._cosmetic(QPen(color)))
            if deployed:
                dots[node] = (_dot(square), node.state.color)
        self._outlines, self._dots = outlines, dots
        self._marked_links = {link: self._cosmetic(link.pen(link.isSelected()))
                              for link in self._links.values() if link.marked}

    def _redraw_changed_marks(self, outlines: dict[NodeItem, tuple[QRectF, QPen]],
                              dots: dict[NodeItem, tuple[QRectF, QColor]], marked_links: dict[LinkItem, QPen]) -> None:
        """Draw again where the marks differ from these (the marks drawn before)."""
        rects = [*_changed(outlines, self._outlines), *_changed(dots, self._dots)]
        rects += [_box(link.line) for link in marked_links.keys() | self._marked_links.keys()
                  if marked_links.get(link) != self._marked_links.get(link)]
        if len(rects) > MANY_MARKS:
            self.update()
            return
        for rect in rects:
            self.update(rect)

    @staticmethod
    def _cosmetic(pen: QPen) -> QPen:
        pen.setCosmetic(True)
        pen.setWidthF(MARK_WIDTH)
        return pen

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        self._bring_up_to_date()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(QPen(self._look.colors.link, LINE_WIDTH / painter.worldTransform().m11()))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if self._drawn_lines is None:
            self._drawn_lines = [line for index, line in enumerate(self._lines) if index not in self._left_out] \
                if self._left_out else self._lines
        painter.drawLines(self._drawn_lines)  # the marked ones again below, over these
        for link, pen in self._marked_links.items():
            painter.setPen(pen)
            painter.drawLine(link.line)
        painter.setPen(Qt.PenStyle.NoPen)
        for color, squares in self._squares.values():
            painter.setBrush(color)
            painter.drawRects(squares)
        for square, color in self._dots.values():
            painter.setBrush(color)
            painter.drawRect(square)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for outline, pen in self._outlines.values():
            painter.setPen(pen)
            painter.drawRect(outline)


class StretchedOverview(QGraphicsItem):
    """Zoomed out, the links a drag stretched (StretchedLinks), drawn over the overview as its plain lines are: a
    drag's step draws them, and the overview, which Qt keeps as a pixmap meanwhile, is copied (drawing it whole each
    step took 12-15 ms with a bridge's thousand links stretched). Its bounds grow to hold where they reach."""

    def __init__(self, stretched: StretchedLinks, look: Look) -> None:
        super().__init__()
        self._stretched = stretched
        self._look = look
        self._bounds = QRectF()
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setZValue(6)  # above the overview

    def reaches(self, rect: QRectF) -> None:
        """The stretched lines were drawn, or are now, in `rect`: drawn again there."""
        if not self._bounds.contains(rect):
            self.prepareGeometryChange()
            self._bounds = self._bounds.united(rect)
        self.update(rect)

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        if not self._stretched:
            return
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setPen(QPen(self._look.colors.link, LINE_WIDTH / painter.worldTransform().m11()))
        for _first, ends in self._stretched.groups():
            painter.drawLines(ends)
        painter.drawLines([link.line for link in self._stretched.apart()])


def _changed(before: Mapping[NodeItem, tuple[QRectF, object]], after: Mapping[NodeItem, tuple[QRectF, object]]
             ) -> list[QRectF]:
    """Where the nodes' marks came, went or changed: the rects each was and is drawn in."""
    rects = []
    for node in before.keys() | after.keys():
        was, now = before.get(node), after.get(node)
        if was != now:
            rects += [mark[0] for mark in (was, now) if mark is not None]
    return rects


def _outline(square: QRectF) -> QRectF:
    return square.adjusted(-6, -6, 6, 6)


def _box(line: QLineF) -> QRectF:
    """Where a line is drawn (its pen adds a pixel or two, which the view's updates allow for)."""
    return QRectF(line.p1(), line.p2()).normalized().adjusted(-1, -1, 1, 1)


def _dot(square: QRectF) -> QRectF:
    """A deployed node's state, in the square's lower right quarter."""
    return QRectF(square.center(), square.bottomRight())
