"""Canvas items: nodes, links and annotations. Items draw and report gestures; they never touch the model."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterator, cast

from PySide6.QtCore import QLineF, QPointF, QRectF, QSizeF, Qt, Signal
from PySide6.QtGui import (QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPainterPathStroker, QPen,
                           QPixmap, QStaticText)
from PySide6.QtWidgets import (QGraphicsItem, QGraphicsObject, QGraphicsSceneMouseEvent, QStyle,
                               QStyleOptionGraphicsItem, QWidget)

from vtopo.gui.canvas.colors import Colors
from vtopo.gui.canvas.states import LINK_DOWN_COLOR, SEVERITY_COLORS, NodeState
from vtopo.gui.canvas.text_grid import TextGrid
from vtopo.reports import LinkRate

@dataclass
class Look:
    """What the scene tells every item it creates: the colours to paint with (replaced on a theme change) and how
    to snap a dragged position. Items never ask the scene."""

    colors: Colors
    snap: Callable[[QPointF], QPointF]
    node_moved: Callable[[NodeItem], None]
    """Told after a node moved: its links follow (once per gesture step, however many of their ends moved)."""
    overview_moved: Callable[[NodeItem | LinkItem], None] = lambda item: None
    """Told when a link's line moved (the scene tells of its nodes' moves)."""
    overview_marks_stale: Callable[[], None] = lambda: None
    """Told when a mark the overview draws changed: a state, a problem, a path (the scene hears selections)."""
    repaint_links: Callable[[LinkItem, QRectF], None] = lambda link, rect: None
    """Told where a link's drawing changed, in scene coordinates. A link item paints nothing itself: zoomed in, the
    scene's LinkLines draws every link in view at once (vtopo.gui.canvas.lines)."""
    link_reaches: Callable[[LinkItem, QRectF], None] = lambda link, rect: None
    """Told where a link now draws after it was placed or moved, in scene coordinates: drawn there, and held by the
    LinkLines' bounds."""
    stretch_changed: Callable[[LinkItem], None] = lambda link: None
    """Told when a link starts or stops being drawn stretched between its nodes (LinkItem.stretch)."""
    end_labels: bool = True
    """Whether links show their interface labels (the impairment in the middle shows either way)."""
    detailed: bool = True
    """Whether items draw themselves (zoomed in), or the overview draws the whole lab (zoomed out)."""
    labels_later: bool = False
    """While a lab is built: links place only their lines; the scene places their labels afterwards, in batches."""
    line_scale: float = 1.0
    """How much wider than usual links are drawn (presentation mode)."""
    texts: TextGrid[NodeItem | LinkItem] = field(default_factory=TextGrid)
    """Where the nodes' icons and names and the links' labels are: each item marks its own there when they change."""


USER_TYPE = 65536  # QGraphicsItem.UserType, which PySide6's type stubs leave out
ICON_SIZE = 48
LABEL_GAP = 3
MIN_LOD_FOR_TEXT = 0.45
POSITION_CHANGE = QGraphicsItem.GraphicsItemChange.ItemPositionChange  # looked up once: itemChange runs for
SELECTED_HAS_CHANGED = QGraphicsItem.GraphicsItemChange.ItemSelectedHasChanged  # every change of every item


def _static_text(text: str) -> QStaticText:
    static = QStaticText(text)
    static.setTextFormat(Qt.TextFormat.PlainText)
    static.setPerformanceHint(QStaticText.PerformanceHint.AggressiveCaching)
    return static


class _Marked:
    """What features mark on a node or link: on a measured path (drawn in the path colour), a check's verdict and
    the severity of its worst problem. Each redraws the item and the zoomed-out overview."""

    _look: Look
    on_path: bool
    verdict: QColor | None
    severity: str

    def set_on_path(self, on_path: bool) -> None:
        if on_path != self.on_path:
            self.on_path = on_path
            self._redraw()

    def set_verdict(self, verdict: QColor | None) -> None:
        if verdict != self.verdict:
            self.verdict = verdict
            self._redraw()

    def set_severity(self, severity: str) -> None:
        if severity != self.severity:
            self.severity = severity
            self._redraw()

    def _redraw(self) -> None:
        self.repaint()
        self._look.overview_marks_stale()

    def repaint(self) -> None:
        cast(QGraphicsItem, self).update()


class NodeItem(_Marked, QGraphicsItem):
    """A node: its kind's icon, its name below, a state dot, a red outline when it has problems, and the name of its
    site in a badge above when the lab spreads over sites."""

    Type = USER_TYPE + 1

    def __init__(self, node_id: str, name: str, pixmap: QPixmap, swatch: QColor, font: QFont, look: Look) -> None:
        super().__init__()
        self.node_id = node_id
        self._look = look
        self.links: list[LinkItem] = []
        self._pixmap = pixmap
        self.swatch = swatch
        """The plain colour the overview fills the node with."""
        self._font = font
        self._name = ""
        self._label: QStaticText | None = None  # laid out when first drawn
        self._label_rect = QRectF()
        self.site = ""
        self._badge_rect = QRectF()
        self._occupied: list[QRectF] | None = None
        self._bounds = QRectF()
        self.state = NodeState.NOT_DEPLOYED
        self.severity = ""
        self.on_path = False
        self.verdict: QColor | None = None  # a check's result on this node: pass or fail colour
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable | QGraphicsItem.GraphicsItemFlag.ItemIsMovable)
        self.setZValue(10)
        self.set_name(name)

    def type(self) -> int:
        return NodeItem.Type

    @property
    def name(self) -> str:
        return self._name

    def set_name(self, name: str) -> None:
        if name != self._name:
            self._name = name
            self.restyle()

    def set_site(self, site: str) -> None:
        if site != self.site:
            self.site = site
            self.restyle()

    def restyle(self) -> None:
        """Lay the name and the site's badge out again, in the font as it is now."""
        self.prepareGeometryChange()
        self._label = None
        metrics = QFontMetricsF(self._font)
        width, height = metrics.horizontalAdvance(self._name), metrics.height()
        self._label_rect = QRectF(-width / 2, ICON_SIZE / 2 + LABEL_GAP, width, height)
        self._forget_occupied()
        icon = QRectF(-ICON_SIZE / 2, -ICON_SIZE / 2, ICON_SIZE, ICON_SIZE)
        badge = metrics.horizontalAdvance(self.site) + 8
        self._badge_rect = QRectF(-ICON_SIZE / 2, -ICON_SIZE / 2 - height - LABEL_GAP, badge, height) if self.site \
            else QRectF()
        self._bounds = icon.united(self._label_rect).united(self._badge_rect).adjusted(-5, -5, 5, 5)
        self.update()  # a name as wide as the old one leaves the bounds as they were, which repaints nothing

    def _forget_occupied(self) -> None:
        self._occupied = None
        self._look.texts.mark(self, self.occupied)

    def is_linked_to(self, other: NodeItem) -> bool:
        """Whether a link joins the two, looked for among the links of the one with fewer (a switch has a thousand)."""
        return any(other in (link.a, link.b) for link in self.links) if len(self.links) <= len(other.links) \
            else any(self in (link.a, link.b) for link in other.links)

    def occupied(self) -> list[QRectF]:
        """The icon and the name, in scene coordinates: what the labels of its links must not cover."""
        if self._occupied is None:
            icon = QRectF(-ICON_SIZE / 2, -ICON_SIZE / 2, ICON_SIZE, ICON_SIZE)
            self._occupied = [icon.translated(self.pos()), self._label_rect.translated(self.pos())]
        return self._occupied

    def set_state(self, state: NodeState) -> None:
        if state is not self.state:
            self.state = state
            self._redraw()

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addRect(QRectF(-ICON_SIZE / 2, -ICON_SIZE / 2, ICON_SIZE, ICON_SIZE).united(self._label_rect))
        return path

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        colors = self._look.colors
        icon = QRectF(-ICON_SIZE / 2, -ICON_SIZE / 2, ICON_SIZE, ICON_SIZE)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if selected:
            painter.setPen(QPen(colors.highlight, 2))
            fill = QColor(colors.highlight)
            fill.setAlpha(50)
            painter.setBrush(fill)
            painter.drawRoundedRect(icon.united(self._label_rect).adjusted(-3, -3, 3, 3), 6, 6)
        if self.on_path:
            painter.setPen(QPen(colors.path, 3))
            painter.setBrush(colors.path_glow)
            painter.drawRoundedRect(icon.adjusted(-2, -2, 2, 2), 8, 8)
        if self.verdict is not None:
            painter.setPen(QPen(self.verdict, 3))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(icon.adjusted(-3, -3, 3, 3), 8, 8)
        if self.severity:
            pen = QPen(SEVERITY_COLORS[self.severity], 2.5)
            if self.severity == "warning":
                pen.setStyle(Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(icon.adjusted(-4, -4, 4, 4), 8, 8)
        painter.drawPixmap(icon.toRect(), self._pixmap)
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod >= MIN_LOD_FOR_TEXT:
            if self._label is None:
                self._label = _static_text(self._name)
                self._label.prepare(font=self._font)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colors.label_background)  # a link passing under the name does not strike it through
            painter.drawRoundedRect(self._label_rect.adjusted(-2, 0, 2, 0), 3, 3)
            painter.setFont(self._font)
            painter.setPen(colors.text)
            painter.drawStaticText(self._label_rect.topLeft(), self._label)
            if self.site:
                painter.setPen(QPen(colors.text, 1))
                painter.setBrush(colors.label_background)
                painter.drawRoundedRect(self._badge_rect, 4, 4)
                painter.drawText(self._badge_rect, Qt.AlignmentFlag.AlignCenter, self.site)
        if self.state is not NodeState.NOT_DEPLOYED:
            painter.setPen(QPen(colors.base, 1.5))
            painter.setBrush(self.state.color)
            painter.drawEllipse(QPointF(ICON_SIZE / 2 - 2, -ICON_SIZE / 2 + 2), 6, 6)

    def moved(self) -> None:
        """After its position changed: told by the scene, which places it and drags it. A node has no itemChange,
        which Qt would call in Python twice for every change of every node (a zoom changes a thousand nodes' flags)."""
        self._forget_occupied()
        self._look.node_moved(self)


def _with_background(label: QRectF) -> QRectF:
    """A label's rect with the rounded background drawn around it (see LinkItem.paint_labels)."""
    return label.adjusted(-3, -2, 3, 2)


PARALLEL_GAP = 12.0
MIDDLE_TRIES = 6  # places for the impairment, each a line further from the link, before it settles on the last
END_LABEL_STEPS = 12  # places along the line an end's label may take, each a label further from its node: further
# out it would read as another node's (and at a switch of a thousand ports, looking on would cost seconds)
MAX_LOAD_WIDTH = 8.0  # extra pen width of a link at full load
BUSY_LOAD = 0.6
"""From this load (1 Mb/s) a link stands out in the overview: zoomed out, what shows is where traffic runs, not the
router solicitations and neighbour discovery every idle link carries now and then."""
CROWD = 100
"""A node of more links than this draws them without antialiasing: they fan out of it as one wedge, and a view of a
bridge's thousand smoothed lines took 50 ms to paint, against 5 ms for plain ones (a drop repaints it several times)."""
LINE_MARGIN = 8 + MAX_LOAD_WIDTH / 2  # around a link's line, what its widest pen may draw
LINE_MARGINS = (-LINE_MARGIN, -LINE_MARGIN, LINE_MARGIN, LINE_MARGIN)
STRIPE = 3.0  # the length of a link's stripe in each of its domains' colours, in pen widths


class LinkItem(_Marked, QGraphicsItem):
    """A line between two node items, with the interface name and addresses near each end."""

    Type = USER_TYPE + 2

    def __init__(self, link_id: str, a: NodeItem, b: NodeItem, font: QFont, look: Look) -> None:
        super().__init__()
        self.link_id = link_id
        self._look = look
        self.a = a
        self.b = b
        self._font = font
        self._texts = ("", "")
        self._labels: tuple[list[QStaticText], list[QStaticText]] | None = None  # laid out when first drawn
        self._line_height = 0.0
        self._label_sizes: tuple[list[QSizeF], list[QSizeF]] | None = None  # measured when first placed
        self._label_rects = (QRectF(), QRectF())
        self._shown_lines = (0, 0)
        self._making_room = False
        self._middle_text = ""
        self._middle: QStaticText | None = None
        self._middle_rect = QRectF()
        self._placed_rects: list[QRectF] | None = None  # label_rects(), kept until the labels or the link move
        self.placed = False
        """Whether the labels have their places (the overview leaves them unplaced until the view zooms in)."""
        self._line = QLineF()
        self._ends = (QPointF(), QPointF())  # where its nodes were when it was last placed
        self._bounds = QRectF()  # the line's, as Qt knows them: placing labels beside it leaves Qt's index as it is
        self._drawn = QRectF()  # the line's and the labels'
        self._scene_drawn: QRectF | None = None  # see drawn_rect()
        self._shape: QPainterPath | None = None
        self.severity = ""
        self.on_path = False
        self.verdict: QColor | None = None  # a check's result along this link: drawn beneath it
        self.tints: tuple[QColor, ...] = ()  # an overlay's colours (the link's broadcast domains: a trunk has several)
        self.load = 0.0  # live traffic, 0 (none or not shown) to 1 (10 Gb/s): drawn as extra width
        self.traffic: LinkRate | None = None  # live traffic, for the tooltip written when it is asked for
        self.down = False  # taken down on the running lab: drawn as a dashed red line
        self.fault = ""  # what the running lab lacks of this link ("degraded; missing: ..."), drawn dotted
        self._stroke_key: tuple[Colors, tuple[int, float, Qt.PenStyle]] | None = None  # see pen_key()
        self._scene_line: QLineF | None = None  # see line
        self.stretched = False
        """Drawn between its nodes as they are now, without labels, its place in Qt's index left behind (stretch)."""
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
                      | QGraphicsItem.GraphicsItemFlag.ItemHasNoContents)
        self.setZValue(0)
        a.links.append(self)
        b.links.append(self)

    def type(self) -> int:
        return LinkItem.Type

    @property
    def line(self) -> QLineF:
        """Where the link is drawn, in scene coordinates (kept until it moves; stretched, taken from its nodes)."""
        if self.stretched:
            shift = self._parallel_shift()
            return QLineF(self.a.pos() + shift, self.b.pos() + shift)
        if self._scene_line is None:
            self._scene_line = self._line.translated(self.pos())
        return self._scene_line

    def stretch(self) -> None:
        """Its nodes moved, and the turn has no time left for it to follow them (a drag's step): drawn between its
        nodes wherever they are, without its labels, while its geometry in Qt's index (what a click finds) stays
        behind until it follows (follow_nodes). Re-indexing the thousand links of a dragged bridge took 60 ms a
        step; the scene's StretchedLinks draws them all from their nodes. The caller repaints, and tells the
        overview (of a bridge's thousand links at once)."""
        self.stretched = True
        if self.placed:
            self.placed = False
            self._mark_texts()
        self._look.stretch_changed(self)

    def detach(self) -> None:
        self.repaint()  # where it was drawn
        if self.stretched:
            self.stretched = False
            self._look.stretch_changed(self)
        for end in (self.a, self.b):
            if self in end.links:
                end.links.remove(self)
        self._look.texts.drop(self)
        for sibling in self.parallels():
            sibling.update_geometry()

    def parallels(self) -> list[LinkItem]:
        """The links between the same two nodes (this one included while it is attached), in a stable order."""
        pair = {self.a, self.b}
        fewer = min(self.a.links, self.b.links, key=len)  # a switch's thousand links are not looked through
        return sorted((link for link in fewer if {link.a, link.b} == pair), key=lambda link: link.link_id)

    def _parallel_shift(self) -> QPointF:
        """Links between the same two nodes are drawn side by side, PARALLEL_GAP apart, not on top of each other."""
        if len(self.a.links) < 2 or len(self.b.links) < 2:
            return QPointF()  # no other link: a dragged bridge's thousand stretched links each ask every step
        siblings = self.parallels()
        if len(siblings) < 2 or self not in siblings:
            return QPointF()
        first, second = sorted((self.a, self.b), key=lambda node: node.node_id)
        along = QLineF(first.pos(), second.pos())
        if along.length() < 1:
            return QPointF()
        normal = QPointF(-along.dy(), along.dx()) / along.length()
        return normal * (siblings.index(self) - (len(siblings) - 1) / 2) * PARALLEL_GAP

    def set_labels(self, text_a: str, text_b: str, middle: str) -> None:
        if (text_a, text_b) == self._texts and middle == self._middle_text:
            return
        self._repaint_labels()
        self._texts = (text_a, text_b)
        self._middle_text = middle
        self._labels, self._label_sizes, self._middle = None, None, None
        self.update_geometry()

    @property
    def end_texts(self) -> tuple[str, str]:
        """What each end's label reads, a's then b's."""
        return self._texts

    @property
    def middle_text(self) -> str:
        """What the link's middle shows: its VLANs and its impairment."""
        return self._middle_text

    def _measure_labels(self) -> tuple[list[QSizeF], list[QSizeF]]:
        """Each end's label's size whole, then with one line fewer each time, down to the interface name."""
        if self._label_sizes is None:
            metrics = QFontMetricsF(self._font)
            self._line_height = metrics.height()
            sizes = []
            for text in self._texts:
                lines = text.splitlines()
                sizes.append([QSizeF(max((metrics.horizontalAdvance(line) for line in lines[:count]), default=0),
                                     metrics.height() * count) for count in range(len(lines), 0, -1)])
            self._label_sizes = (sizes[0], sizes[1])
            self._middle_rect = QRectF(QPointF(), QSizeF(metrics.horizontalAdvance(self._middle_text),
                                                         metrics.height()))
        return self._label_sizes

    def set_down(self, down: bool) -> None:
        if down != self.down:
            self.down = down
            self.repaint()

    def set_fault(self, fault: str) -> None:
        if fault != self.fault:
            self.fault = fault
            self.repaint()

    def set_load(self, load: float) -> bool:
        """The line as wide as its load; whether that changed its drawing, which the caller then repaints (the scene
        repaints a thousand changed links at once). Its bounds keep room for the widest line and its labels stay
        where they are (a lab's every link may change load each second, and placing labels again looks at every
        other link at both nodes)."""
        if load == self.load:
            return False
        self.load = load
        return True

    @property
    def tint(self) -> QColor | None:
        """The overlay's colour the link is drawn in (its first, where it has several: the others stripe it)."""
        return self.tints[0] if self.tints else None

    def set_tints(self, tints: tuple[QColor, ...]) -> None:
        if tints != self.tints:
            self.tints = tints
            self._redraw()

    def label_rects(self) -> list[QRectF]:
        """Where the end labels and the impairment are drawn, in scene coordinates (none for hidden or unplaced
        ones). A link that moved with both its nodes keeps its labels in its own coordinates."""
        if not self.placed:
            return []
        if self._placed_rects is None:
            shift = self.pos()
            self._placed_rects = [rect.translated(shift) for rect in (*self._label_rects, self._middle_rect)
                                  if not rect.isEmpty()]
        return self._placed_rects

    def avoids(self, owner: NodeItem | LinkItem) -> bool:
        """Whether this link's labels keep clear of `owner`'s texts: they must not cover its nodes, the labels of the
        other links at them, and the icons and names of those links' far nodes. A link placed later avoids this
        one's labels in turn, so no two of them overlap."""
        if isinstance(owner, LinkItem):
            return owner is not self and (owner.a in (self.a, self.b) or owner.b in (self.a, self.b))
        return owner is self.a or owner is self.b or owner.is_linked_to(self.a) or owner.is_linked_to(self.b)

    def _mark_texts(self) -> None:
        """Its labels moved, came or went: the grid of texts asks where they are before it is next looked at."""
        self._placed_rects = None
        self._look.texts.mark(self, self.label_rects)

    def _make_room(self) -> None:
        """The other links at this link's nodes whose labels its labels or nodes now cover take another place,
        clear of these (one level: they move nobody else)."""
        mine = [*self.label_rects(), *self.a.occupied(), *self.b.occupied()]
        covered = {owner for rect in mine for owner in self._look.texts.owners_over(rect)
                   if isinstance(owner, LinkItem) and self.avoids(owner)}
        for link in sorted(covered, key=lambda link: link.link_id):
            link._making_room = True
            link.update_geometry()
            link._making_room = False

    def restyle(self) -> None:
        """Measure the labels again, in the font as it is now, and place them."""
        self._repaint_labels()
        self._labels, self._label_sizes, self._middle = None, None, None
        self.update_geometry()

    def update_geometry(self) -> None:
        """Place the line, then the labels: each end's label beside the line near its node, on either side and
        further along while it would cover another text, cut to the interface name if no place is free, left out if
        none is free for that either; then the impairment, clear of them. In the overview only the line is placed:
        nothing there shows a label. Where the line stays, only the labels are drawn again."""
        if self.stretched:
            self.repaint()  # where it was drawn stretched
            self.stretched = False
            self._scene_line, self._scene_drawn = None, None
            self._look.stretch_changed(self)
        shift = self._parallel_shift()
        self._ends = (self.a.pos(), self.b.pos())
        line = QLineF(self._ends[0] + shift, self._ends[1] + shift)
        if self._bounds.isNull() or line != self._line or not self.pos().isNull():
            self._place_line(line)
            self._place_labels()
            self._look.link_reaches(self, self._drawn)
            return
        before = self.label_rects()
        self._place_labels()
        after = self.label_rects()
        for rect in before:
            if rect not in after:
                self._look.repaint_links(self, _with_background(rect))
        for rect in after:
            if rect not in before:
                self._look.link_reaches(self, _with_background(rect))

    def _repaint_labels(self) -> None:
        """Drawn again where its labels are (their texts changed)."""
        for rect in self.label_rects():
            self._look.repaint_links(self, _with_background(rect))

    def _place_line(self, line: QLineF) -> None:
        self.repaint()  # where it was drawn
        self.prepareGeometryChange()
        self._scene_line = None
        if not self.pos().isNull():
            self.setPos(0, 0)  # placed in scene coordinates; a drag of both ends only moves it (follow_nodes)
        self._line = line
        self._bounds = QRectF(line.p1(), line.p2()).normalized().adjusted(*LINE_MARGINS)
        self._shape = None
        self._look.overview_moved(self)

    def _place_labels(self) -> None:
        self.placed = self._look.detailed and not self._look.labels_later
        self._label_rects = (QRectF(), QRectF())
        self._shown_lines = (0, 0)
        if not self.placed:
            self._mark_texts()
            self._drawn, self._scene_drawn = QRectF(self._bounds), None
            return
        p1, p2 = self._line.p1(), self._line.p2()
        sizes = self._measure_labels()
        clear = _Clearance(self, self._look.texts)
        if self._look.end_labels:
            at_a, lines_a = self._place_end(p1, p2, sizes[0], clear)
            clear.own.append(at_a)
            at_b, lines_b = self._place_end(p2, p1, sizes[1], clear)
            clear.own.append(at_b)
            self._label_rects, self._shown_lines = (at_a, at_b), (lines_a, lines_b)
        self._place_middle(clear)
        self._mark_texts()
        self._drawn, self._scene_drawn = self._outline(), None
        if not self._making_room:
            self._make_room()

    def _outline(self) -> QRectF:
        """The line's rectangle, as wide as the widest load draws it, with the labels placed beside it."""
        bounds = QRectF(self._bounds)
        for rect in (*self._label_rects, self._middle_rect):
            if not rect.isEmpty():
                bounds = bounds.united(_with_background(rect))
        return bounds

    def moves_whole(self) -> bool:
        """Whether both its nodes moved alike since it was placed (a dragged selection): it follows as it is."""
        return not self.stretched and self.a.pos() - self._ends[0] == self.b.pos() - self._ends[1]

    def follow_nodes(self) -> None:
        """After its nodes moved: when both moved alike (a dragged selection), the link moves with them as it is,
        labels and all; otherwise it is placed afresh."""
        at_a, at_b = self.a.pos(), self.b.pos()
        delta = at_a - self._ends[0]
        if delta != at_b - self._ends[1] or self.stretched:
            self.update_geometry()
            return
        self.repaint()  # where it was drawn
        self._ends = (at_a, at_b)
        self._scene_line, self._scene_drawn = None, None
        self.moveBy(delta.x(), delta.y())
        self._mark_texts()
        self._look.link_reaches(self, self.drawn_rect())
        self._look.overview_moved(self)

    def _place_middle(self, clear: _Clearance) -> None:
        """The impairment below the line's middle, moved further out while it would cover another text."""
        size = self._middle_rect.size()
        if size.isEmpty() or self._line.length() < 1:
            self._middle_rect.moveCenter(self._line.center())
            return
        _direction, normal = self._axes(self._line.p1(), self._line.p2())
        across = abs(normal.x()) * size.width() / 2 + abs(normal.y()) * size.height() / 2 + 3
        self._middle_rect.moveCenter(self._line.center() - normal * across)
        for _ in range(MIDDLE_TRIES):
            if not clear.covers(self._middle_rect):
                return
            self._middle_rect.translate(-normal * (size.height() + 2))

    @staticmethod
    def _axes(near: QPointF, far: QPointF) -> tuple[QPointF, QPointF]:
        """The unit vector along the line, and the normal that points up (or right): the labels' side."""
        direction = (far - near) / QLineF(near, far).length()
        normal = QPointF(-direction.y(), direction.x())
        if normal.y() > 0 or (math.isclose(normal.y(), 0) and normal.x() < 0):
            normal = -normal
        return direction, normal

    def _place_end(self, near: QPointF, far: QPointF, sizes: list[QSizeF], clear: _Clearance
                   ) -> tuple[QRectF, int]:
        """The first free place for an end's label (whole, then cut to fewer lines), and how many lines show; no
        label where none is free (the link's tooltip still names the interface and its addresses)."""
        for size in sizes:
            for place in self._label_places(near, far, size):
                if not clear.covers(place):
                    return place, round(size.height() / self._line_height)
        return QRectF(), 0

    def _label_places(self, near: QPointF, far: QPointF, size: QSizeF) -> Iterator[QRectF]:
        """Beside the line near the node, above or right of it first, then the other side; then a step further
        along, until the far node's icon or END_LABEL_STEPS steps (the nearest place only, on a line too short for
        more)."""
        length = QLineF(near, far).length()
        if length < 1 or size.isEmpty():
            return
        direction, normal = self._axes(near, far)
        half = QPointF(size.width() / 2, size.height() / 2)
        extent_along = abs(direction.x()) * half.x() + abs(direction.y()) * half.y()
        below = max(0.0, direction.y()) * (self._line_height + LABEL_GAP)  # clear the node's name label
        distance = min(ICON_SIZE / 2 + 6 + extent_along + below, length / 2)
        last = length - ICON_SIZE / 2 - 6 - extent_along
        sides = [(normal * side, abs(normal.x()) * half.x() + abs(normal.y()) * half.y() + 3) for side in (1, -1)]
        for _ in range(END_LABEL_STEPS):
            for across, clearance in sides:
                yield QRectF(near + direction * distance + across * clearance - half, size)
            distance += 2 * extent_along + LABEL_GAP
            if distance > last:
                return

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        """The line widened for easy clicking; built only when Qt asks (hit tests), not on every move."""
        if self._shape is None:
            stroker = QPainterPathStroker()
            stroker.setWidth(10)
            path = QPainterPath(self._line.p1())
            path.lineTo(self._line.p2())
            self._shape = stroker.createStroke(path)
        return self._shape

    @property
    def marked(self) -> bool:
        """Drawn in its own colour or width (the overview draws it on its own, above the plain links)."""
        return bool(self.severity or self.tint or self.on_path or self.busy or self.isSelected())

    @property
    def busy(self) -> bool:
        return self.load >= BUSY_LOAD

    @property
    def crowded(self) -> bool:
        """At a node of more than CROWD links: its line is drawn without antialiasing (vtopo.gui.canvas.lines)."""
        return len(self.a.links) > CROWD or len(self.b.links) > CROWD

    def pen(self, selected: bool) -> QPen:
        color, width, style = self._stroke(selected)
        pen = QPen(color, (width + MAX_LOAD_WIDTH * self.load) * self._look.line_scale)
        pen.setStyle(style)
        return pen

    def _stroke(self, selected: bool) -> tuple[QColor, float, Qt.PenStyle]:
        """The colour, the width without load and the style of its line."""
        colors = self._look.colors
        color = colors.path if self.on_path else SEVERITY_COLORS.get(self.severity, self.tint or colors.link)
        if self.down:
            color = LINK_DOWN_COLOR
        elif self.fault:
            color = NodeState.parse(self.fault.split(";")[0]).color
        width = 3.5 if selected or self.on_path or self.tint else 2
        style = Qt.PenStyle.SolidLine
        if self.down or (self.severity == "warning" and not selected):
            style = Qt.PenStyle.DashLine
        elif self.fault:
            style = Qt.PenStyle.DotLine
        return colors.highlight if selected else color, width, style

    def _stripe(self, painter: QPainter, pen: QPen) -> None:
        """Over the first colour, a dash of each other one in turn: a link in several domains (a trunk carrying
        several VLANs) is striped in all their colours."""
        count = len(self.tints)
        for index, tint in enumerate(self.tints[1:], 1):
            stripe = QPen(pen)
            stripe.setColor(tint)
            stripe.setCapStyle(Qt.PenCapStyle.FlatCap)
            stripe.setDashPattern([STRIPE, STRIPE * (count - 1)])
            stripe.setDashOffset(-STRIPE * index)
            painter.setPen(stripe)
            painter.drawLine(self.line)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        """Nothing: the item has no contents. The scene's LinkLines draws the links in view as one item, the plain
        lines a list per pen (700 links in view each painting themselves cost 40 ms whenever traffic changed them)."""

    def itemChange(self, change: QGraphicsItem.GraphicsItemChange, value: object) -> object:
        if change == SELECTED_HAS_CHANGED:
            self.repaint()
        return super().itemChange(change, value)

    def repaint(self) -> None:
        """Drawn again (in its pen as it is now) where it was drawn."""
        self._stroke_key = None
        if self.stretched:
            self._look.stretch_changed(self)  # drawn with the other stretched links in its pen
        drawn = self.drawn_rect()
        if not drawn.isEmpty():  # placed (an empty rect would repaint every link)
            self._look.repaint_links(self, drawn)

    def drawn_rect(self) -> QRectF:
        """Where it draws, in scene coordinates: its line and its labels (kept until it moves; stretched, its
        line's box as its nodes are)."""
        if self.stretched:
            line = self.line
            return QRectF(line.p1(), line.p2()).normalized().adjusted(*LINE_MARGINS)
        if self._scene_drawn is None:
            self._scene_drawn = self._drawn.translated(self.pos())
        return self._scene_drawn

    def pen_key(self) -> tuple[tuple[int, float, Qt.PenStyle], float]:
        """What tells its line's pen from other links' (the lines drawn in one pen are drawn with one call): the
        colour, width and style its look gives it, kept until the look changes, and its load, which only widens it
        (traffic flooded through a switch changes a thousand links' loads at once, and their looks not at all)."""
        kept = self._stroke_key
        if kept is None or kept[0] is not self._look.colors:  # or the colours were swapped (print style)
            color, width, style = self._stroke(self.isSelected())
            kept = self._stroke_key = (self._look.colors, (color.rgba(), width, style))
        return kept[1], self.load

    @property
    def decorated(self) -> bool:
        """Drawn with more than its line: a check's verdict or a measured path beneath, or stripes over it."""
        return self.verdict is not None or self.on_path or len(self.tints) > 1

    def paint_beneath(self, painter: QPainter) -> None:
        """What a decorated link draws beneath the lines: a check's verdict, a measured path's glow."""
        line = self.line
        if self.verdict is not None:
            under = QColor(self.verdict)
            under.setAlpha(110)
            painter.setPen(QPen(under, 12, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
            painter.drawLine(line)
        if self.on_path:
            painter.setPen(QPen(self._look.colors.path_glow, 10, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
            painter.drawLine(line)

    def paint_line(self, painter: QPainter) -> None:
        """The line of a decorated link, striped in its domains' colours where it has several."""
        pen = self.pen(self.isSelected())
        painter.setPen(pen)
        painter.drawLine(self.line)
        if len(self.tints) > 1 and pen.color() == self.tints[0] and pen.style() == Qt.PenStyle.SolidLine:
            self._stripe(painter, pen)

    def paint_labels(self, painter: QPainter, exposed: QRectF) -> None:
        """The end labels and the middle's text, where any of them is in `exposed` (scene coordinates)."""
        if not any(rect.intersects(exposed) for rect in self.label_rects()):
            return
        if self._labels is None:
            self._labels = ([_static_text(line) for line in self._texts[0].splitlines()],
                            [_static_text(line) for line in self._texts[1].splitlines()])
            self._middle = _static_text(self._middle_text)
        shift = self.pos()
        painter.translate(shift)
        colors = self._look.colors
        painter.setFont(self._font)
        for lines, rect, shown in zip(self._labels, self._label_rects, self._shown_lines):
            if rect.isEmpty():
                continue
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colors.label_background)
            painter.drawRoundedRect(rect.adjusted(-2, -1, 2, 1), 3, 3)
            painter.setPen(colors.subtle_text)
            for row, line in enumerate(lines[:shown]):
                painter.drawStaticText(QPointF(rect.left(), rect.top() + row * self._line_height), line)
        if self._middle_text and self._middle is not None:
            painter.setPen(colors.impairment)
            painter.drawStaticText(self._middle_rect.topLeft(), self._middle)
        painter.translate(-shift)


class _Clearance:
    """What a link's labels keep clear of while it places them: the texts it avoids (LinkItem.avoids), looked up
    around each place it tries, and its own labels placed so far."""

    def __init__(self, link: LinkItem, texts: TextGrid[NodeItem | LinkItem]) -> None:
        self._link = link
        self._texts = texts
        self._avoided: dict[NodeItem | LinkItem, bool] = {}  # by owner: a thousand places look at the same few
        self.own: list[QRectF] = []

    def covers(self, place: QRectF) -> bool:
        """Whether `place` covers a text the link avoids."""
        if any(place.intersects(rect) for rect in self.own):
            return True
        for owner in self._texts.owners_over(place):
            avoided = self._avoided.get(owner)
            if avoided is None:
                avoided = self._avoided[owner] = self._link.avoids(owner)
            if avoided:
                return True
        return False


class AnnotationItem(QGraphicsObject):
    """A free-text note (filled) or a rectangle (dashed frame) with a resize grip when selected."""

    Type = USER_TYPE + 3
    GRIP = 10.0
    MIN_SIZE = 40.0
    resized = Signal(str, float, float)
    """(annotation id, width, height) when a resize with the grip ends."""

    def __init__(self, annotation_id: str, shape: str, font: QFont, look: Look) -> None:
        super().__init__()
        self.annotation_id = annotation_id
        self._look = look
        self.shape_name = shape
        self._font = font
        self._text = ""
        self._size = QSizeF(200, 100)
        self._shown = QSizeF(self._size)  # taller where its text needs it
        self._resize_from: QSizeF | None = None
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable | QGraphicsItem.GraphicsItemFlag.ItemIsMovable
                      | QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges)
        self.setZValue(-5 if shape == "note" else -10)

    def type(self) -> int:
        return AnnotationItem.Type

    @property
    def size(self) -> QSizeF:
        return QSizeF(self._size)

    def set_content(self, text: str, width: float, height: float) -> None:
        if self._resize_from is None:
            self._size = QSizeF(width, height)
        self._text = text
        self.setToolTip(text)
        self.restyle()

    def restyle(self) -> None:
        """Drawn again in the font now used: a note whose text needs more room than its size (presentation mode's
        larger type) grows downwards rather than cut its text off."""
        self.prepareGeometryChange()
        text = QFontMetricsF(self._font).boundingRect(QRectF(0, 0, max(self._size.width() - 16, 1), 1e6),
                                                       Qt.TextFlag.TextWordWrap, self._text)
        self._shown = QSizeF(self._size.width(), max(self._size.height(), text.height() + 12))
        self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(QPointF(), self._shown).adjusted(-2, -2, 2, 2)

    def _grip(self) -> QRectF:
        return QRectF(self._shown.width() - self.GRIP, self._shown.height() - self.GRIP, self.GRIP, self.GRIP)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        colors = self._look.colors
        rect = QRectF(QPointF(), self._shown)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if self.shape_name == "note":
            painter.setPen(QPen(colors.highlight if selected else colors.note_border, 1.5 if selected else 1))
            painter.setBrush(colors.note_background)
            painter.drawRoundedRect(rect, 4, 4)
            text_color = colors.note_text
        else:
            pen = QPen(colors.highlight if selected else colors.subtle_text, 1.5, Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(rect, 6, 6)
            text_color = colors.subtle_text
        if option.levelOfDetailFromTransform(painter.worldTransform()) >= MIN_LOD_FOR_TEXT:
            painter.setFont(self._font)
            painter.setPen(text_color)
            painter.drawText(rect.adjusted(8, 6, -8, -6), Qt.TextFlag.TextWordWrap, self._text)
        if selected:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colors.highlight)
            painter.drawRect(self._grip())

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if self.isSelected() and event.button() == Qt.MouseButton.LeftButton and self._grip().contains(event.pos()):
            self._resize_from = QSizeF(self._size)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if self._resize_from is not None:
            self._size = QSizeF(max(self.MIN_SIZE, event.pos().x()), max(self.MIN_SIZE, event.pos().y()))
            self.restyle()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if self._resize_from is not None:
            self._resize_from = None
            self.resized.emit(self.annotation_id, self._size.width(), self._size.height())
            return
        super().mouseReleaseEvent(event)

    def itemChange(self, change: QGraphicsItem.GraphicsItemChange, value: object) -> object:
        if change == POSITION_CHANGE and isinstance(value, QPointF):
            return self._look.snap(value)
        return super().itemChange(change, value)
