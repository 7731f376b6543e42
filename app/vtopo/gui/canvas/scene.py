"""The scene projects a Topology: it follows the model's events and keeps id -> item maps. No state of its own
beyond selection, problem marks and deploy states."""
from __future__ import annotations

import math
import time
from collections import deque
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Mapping, Protocol

from PySide6.QtCore import QLineF, QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsSceneMouseEvent

from vtopo.gui.canvas.colors import Colors
from vtopo.gui.canvas.icons import IconCache
from vtopo.gui.canvas.items import ICON_SIZE, AnnotationItem, LinkItem, Look, NodeItem
from vtopo.gui.canvas.labels import VlansOf, end_label, middle_label
from vtopo.gui.canvas.lines import LinkLines, StretchedLinks
from vtopo.gui.canvas.overview import OverviewItem, StretchedOverview
from vtopo.gui.canvas.states import NodeState
from vtopo.model.problems import Severity
from vtopo.model.topology import Annotation, Link, Node, Position, Topology

GRID = 20.0
LABEL_TURN_S = 0.008  # how long a turn of the event loop places links' labels, after a lab was built or zoomed in
DRAG_FOLLOW_S = 0.003  # how long a mouse drag's step lets links follow their nodes, labels and all
MANY_CHANGES = 64  # links whose look changed at once, beyond which all are repainted with one call
PRESENTATION_TEXT = 1.8  # presentation mode: names and labels this much larger,
PRESENTATION_LINES = 2.5  # and links this much wider
ROOM = 0.25
"""The scene's rect holds its items with room to spare, a quarter of the lab's size: Qt rebuilds its index of every
item whenever the rect changes (several ms at 2,000 nodes), so the rect grows seldom, not by the pixels of a drop."""


def _crosses(line: QLineF, rect: QRectF) -> bool:
    """Whether the line passes through the rectangle: their boxes meet, and the rectangle's corners are not all on
    one side of the line."""
    x1, y1, x2, y2 = line.x1(), line.y1(), line.x2(), line.y2()
    left, right, top, bottom = rect.left(), rect.right(), rect.top(), rect.bottom()
    if max(x1, x2) < left or min(x1, x2) > right or max(y1, y2) < top or min(y1, y2) > bottom:
        return False
    dx, dy = x2 - x1, y2 - y1
    sides = [dx * (y - y1) - dy * (x - x1) for x in (left, right) for y in (top, bottom)]
    return min(sides) <= 0 <= max(sides)


class Gesture(Protocol):
    """A canvas tool (vtopo.gui.canvas.interactions) as the scene sees it: True when it consumed the event."""

    def mouse_press(self, event: QGraphicsSceneMouseEvent) -> bool: ...

    def mouse_move(self, event: QGraphicsSceneMouseEvent) -> bool: ...

    def mouse_release(self, event: QGraphicsSceneMouseEvent) -> bool: ...

    def cancel(self) -> None: ...


class _Subscriptions:
    """The model listeners the scene holds, so it can let go of a topology cleanly."""

    def __init__(self) -> None:
        self._pairs: list[tuple[Any, Callable[[Any], None]]] = []

    def connect(self, event: Any, listener: Callable[[Any], None]) -> None:
        event.connect(listener)
        self._pairs.append((event, listener))

    def disconnect_all(self) -> None:
        for event, listener in self._pairs:
            event.disconnect(listener)
        self._pairs.clear()


class TopologyScene(QGraphicsScene):
    annotation_resized = Signal(str, float, float)
    press_released = Signal()
    """The mouse button that pressed on nodes (pressing_nodes) was released: the drag, or the click, ended."""

    def __init__(self, icons: IconCache, vlans_of: VlansOf, parent: Any = None) -> None:
        super().__init__(parent)
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        self.icons = icons
        self._vlans_of = vlans_of
        self.look = Look(Colors.from_palette(QGuiApplication.palette()), self.snapped, self._node_moved)
        self.snap_to_grid = False
        self.draw_grid = True
        self.nodes: dict[str, NodeItem] = {}
        self.links: dict[str, LinkItem] = {}
        self.annotations: dict[str, AnnotationItem] = {}
        self._paths: dict[str, set[str]] = {}  # what each feature lights (a measurement, captures, a check)
        self._severities: dict[str, str] = {}  # the nodes and links problems name, by id: "error" or "warning"
        self._vlans_shown: dict[str, dict[str, str]] = {}  # the switches' VLANs their links show, by node id
        self._stretched = StretchedLinks()
        self.look.stretch_changed = self._stretch_changed
        self._overview = OverviewItem(self.nodes, self.links, self.look)
        self._overview_stretched = StretchedOverview(self._stretched, self.look)
        self.look.overview_moved = self._overview.moved
        self._marking = QTimer(self)  # the overview's marks drawn again once the turn's events are handled
        self._marking.setSingleShot(True)
        self._marking.setInterval(0)
        self._marking.timeout.connect(self._overview.redraw_marks)
        self.look.overview_marks_stale = self._marks_changed
        self.selectionChanged.connect(self._marks_changed)
        # zoomed in, two items draw the links (the overview draws them zoomed out): the links a drag moves and the
        # stretched ones, drawn again each step, apart from the rest, which a drag leaves as a pixmap Qt keeps
        self._moving: dict[str, LinkItem] = {}
        self._lines = LinkLines(self.links, None, self.look.texts, apart=self._moving)
        self._moving_lines = LinkLines(self._moving, self._stretched, self.look.texts)
        self.look.repaint_links = lambda link, rect: self._drawing(link).redraw(rect)
        self.look.link_reaches = lambda link, rect: self._drawing(link).reaches(rect)
        self._drawn_apart = False  # whether a mouse drag's links are drawn apart yet (from its first step)
        self._moved_links: set[LinkItem] | None = None  # while nodes move together: the links to follow after
        self._moving_together = 0  # how deep in steps that move nodes together (a drag's step, a macro undone)
        self._dragged: list[NodeItem] = []  # the nodes a mouse drag may move (see _draggable)
        self._labelling = QTimer(self)  # places the labels of links built without them, a batch per turn
        self._labelling.setInterval(0)
        self._labelling.timeout.connect(self._place_label_batch)
        self._unlabelled: deque[LinkItem] = deque()  # the links whose labels are yet to be placed, those in view first
        self._unlabelled_seen: QRectF | None = None  # what the view showed when they were put in that order
        self._view_changed = False  # the view changed this turn: the next turn paints it, and places no labels
        self.topology: Topology | None = None
        self._subscriptions = _Subscriptions()
        self._picked: list[str] = []  # the selected nodes' ids, in the order they were selected
        self.selectionChanged.connect(self._remember_selection_order)
        self._cached: set[NodeItem] = set()
        self.selectionChanged.connect(self._cache_the_selection)
        self._syncing = False
        self._room = QRectF()  # the scene's rect
        self._gesture: Gesture | None = None
        self._font = QFont(QGuiApplication.font())  # the items draw their texts in these two, shared
        self._small_font = QFont(self._font)
        self._points = self._font.pointSizeF()
        self._scale_fonts(1.0)

    # ------------------------------------------------------------ following a topology

    def set_topology(self, topology: Topology) -> None:
        self._subscriptions.disconnect_all()
        for drawing in (self._overview, self._overview_stretched, self._lines, self._moving_lines):
            if drawing.scene() is self:
                self.removeItem(drawing)  # clear() would delete it
        self.clearSelection()  # while its items live: clear() tells of the selection only after deleting them
        self._stop_labelling()
        self.clear()
        self.look.texts.clear()
        self.nodes.clear()
        self._vlans_shown.clear()
        self._paths.clear()
        self._severities.clear()
        self.links.clear()
        self._moving.clear()
        self._stretched.clear()
        self.annotations.clear()
        self._room = QRectF()
        self.setSceneRect(QRectF())
        self.topology = topology
        events = topology.events
        self.look.labels_later = True
        for event, listener in ((events.node_added, self._node_added), (events.node_removed, self._node_removed),
                                (events.node_changed, self._node_changed), (events.link_added, self._link_added),
                                (events.link_removed, self._link_removed), (events.link_changed, self._link_changed),
                                (events.annotation_added, self._annotation_added),
                                (events.annotation_removed, self._annotation_removed),
                                (events.annotation_changed, self._annotation_changed),
                                (events.together, self._edits_together)):
            self._subscriptions.connect(event, listener)
        for node in topology.nodes.values():
            self._node_added(node)
        for link in topology.links.values():
            self._link_added(link)
        self.look.labels_later = False
        self.look.texts.file_marked()  # now, not in the first turn that places labels
        for annotation in topology.annotations.values():
            self._annotation_added(annotation)
        self._lines.invalidate()
        self._moving_lines.invalidate()
        if self.look.detailed:
            self.addItem(self._lines)
            self.addItem(self._moving_lines)
            self._start_labelling()
        else:
            self.addItem(self._overview)
            self.addItem(self._overview_stretched)
        self._room = self.itemsBoundingRect()  # as Qt's own rect would start; it grows with room to spare
        self.setSceneRect(self._room)

    def release(self) -> None:
        """Stop following the topology (before the scene is dropped)."""
        self._subscriptions.disconnect_all()

    def _node_added(self, node: Node) -> None:
        item = NodeItem(node.id, node.name, self.icons.pixmap(node.kind, ICON_SIZE), self.icons.swatch(node.kind),
                        self._font, self.look)
        item.set_site(node.site)
        self._place(item, node.position)
        self.nodes[node.id] = item
        self._add_drawn(item)
        vlans = self._vlans_of(node)
        if vlans is not None:
            self._vlans_shown[node.id] = dict(vlans)

    def _add_drawn(self, item: QGraphicsItem) -> None:
        """A node or link item: a node paints itself unless the overview draws the lab (links never do)."""
        if not self.look.detailed:
            item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents)
        self.addItem(item)
        self._overview.invalidate()

    def _node_removed(self, node: Node) -> None:
        item = self.nodes.pop(node.id)
        self._vlans_shown.pop(node.id, None)
        self.removeItem(item)
        self.look.texts.drop(item)
        self._overview.invalidate()

    def _node_changed(self, node: Node) -> None:
        item = self.nodes[node.id]
        item.set_name(node.name)
        item.set_site(node.site)
        self._place(item, node.position)
        vlans = self._vlans_of(node)
        if vlans is not None and vlans != self._vlans_shown.get(node.id):
            # a switch's VLANs show on its links; a move leaves them (labelling a bridge's thousand links took 12 ms)
            self._vlans_shown[node.id] = dict(vlans)
            for link in item.links:
                self._label(link)

    def _link_added(self, link: Link) -> None:
        item = LinkItem(link.id, self.nodes[link.a.node], self.nodes[link.b.node], self._small_font, self.look)
        self._label(item, link)
        siblings = item.parallels()
        for parallel in siblings if len(siblings) > 1 else ():
            parallel.update_geometry()
        self.links[link.id] = item
        self._add_drawn(item)

    def _link_removed(self, link: Link) -> None:
        item = self.links.pop(link.id)
        item.detach()
        self.removeItem(item)
        self._overview.invalidate()
        self._lines.invalidate()
        if self._moving.pop(link.id, None) is not None:
            self._moving_lines.invalidate()

    def _link_changed(self, link: Link) -> None:
        self._label(self.links[link.id], link)

    def _label(self, item: LinkItem, link: Link | None = None) -> None:
        """The link's interface names and addresses at its ends, its VLANs and impairment in its middle."""
        assert self.topology is not None
        link = link or self.topology.links[item.link_id]
        item.set_labels(end_label(link.a), end_label(link.b), middle_label(link, self.topology.nodes, self._vlans_of))

    def _annotation_added(self, annotation: Annotation) -> None:
        item = AnnotationItem(annotation.id, annotation.shape, self._font, self.look)
        item.resized.connect(self.annotation_resized)
        item.set_content(annotation.text, annotation.width, annotation.height)
        self._place(item, annotation.position)
        self.annotations[annotation.id] = item
        self.addItem(item)

    def _annotation_removed(self, annotation: Annotation) -> None:
        self.removeItem(self.annotations.pop(annotation.id))

    def _annotation_changed(self, annotation: Annotation) -> None:
        item = self.annotations[annotation.id]
        item.set_content(annotation.text, annotation.width, annotation.height)
        self._place(item, annotation.position)

    def _place(self, item: QGraphicsItem, position: Position) -> None:
        before = item.pos()
        self._syncing = True
        try:
            item.setPos(position.x, position.y)
        finally:
            self._syncing = False
        if isinstance(item, NodeItem) and item.pos() != before:
            item.moved()
        self._make_room(item.sceneBoundingRect())

    def _make_room(self, rect: QRectF) -> None:
        if not self._room.contains(rect):
            grown = self._room.united(rect)
            room = ROOM * max(grown.width(), grown.height())
            self._room = QRectF(grown.adjusted(-room, -room, room, room).toAlignedRect())
            self.setSceneRect(self._room)

    def _marks_changed(self) -> None:
        """A selection, state, problem or path changed: the overview draws its marks again where they changed."""
        self._overview.invalidate_marks()
        self._marking.start()

    def _node_moved(self, node: NodeItem) -> None:
        self._overview.moved(node)
        self._stretched.node_moved(node)
        if self._moved_links is not None:
            self._moved_links.update(node.links)
            return
        self._follow(list(node.links))

    @contextmanager
    def _links_following_once(self) -> Iterator[None]:
        """While many nodes move in one step, a link follows once, after the step, however many ends moved."""
        self._edits_together(True)
        try:
            yield
        finally:
            self._edits_together(False)

    def _edits_together(self, starting: bool) -> None:
        if starting:
            self._moving_together += 1
            if self._moved_links is None:
                self._moved_links = set()
            return
        self._moving_together -= 1
        if self._moving_together == 0 and self._moved_links is not None:
            moved, self._moved_links = self._moved_links, None
            self._follow([link for link in moved if self.links.get(link.link_id) is link])  # not removed in the
            # same step

    def _follow(self, links: list[LinkItem]) -> None:
        """Links whose nodes moved in one step follow them, those in view first, for a turn's budget (a mouse
        drag's step has less: it paints the links it moved too; and a step that moves many links follows none). The
        rest are drawn stretched between their nodes until the labelling turns let them follow, after the drag:
        dragging a bridge of a thousand ports stays within a frame a step."""
        dragging = bool(self._dragged)
        if dragging and len(links) > MANY_CHANGES:  # all stretched but those moved whole, with their labels: not a
            to_stretch = []  # few in view with labels and the rest without
            dragged = set(self._dragged)
            for link in links:
                if link.stretched:
                    continue  # drawn from its nodes wherever they are
                if link.a in dragged and link.b in dragged and link.moves_whole():
                    link.follow_nodes()
                else:
                    to_stretch.append(link)
            self._stretch(to_stretch)
            self._stop_labelling()  # until the drop (mouseReleaseEvent)
            return
        if not dragging and any(link.stretched for link in links):
            # a drop (or an undo): what a drag stretched stays drawn from its nodes until the labelling turns place
            # it, those in view first (sorting a bridge's thousand links here as well took 15 ms)
            self._stretch([])
            self._start_labelling()
            links = [link for link in links if not link.stretched]
        turn_ends = time.monotonic() + (DRAG_FOLLOW_S if dragging else LABEL_TURN_S)
        seen = self._seen()
        in_view_first = sorted(links, key=lambda item: (not _crosses(item.line, seen), item.link_id))
        followed = 0
        while followed < len(in_view_first) and time.monotonic() < turn_ends:
            in_view_first[followed].follow_nodes()
            followed += 1
        if followed == len(in_view_first):
            return
        self._stretch(in_view_first[followed:])
        if dragging:
            self._stop_labelling()  # until the drop (mouseReleaseEvent)
        else:
            self._start_labelling()

    def _stretch(self, links: list[LinkItem]) -> None:
        """Draw the links stretched between their nodes (LinkItem.stretch), with those stretched before: their
        lines are taken from their nodes again, and drawn again where they were and now are."""
        gone: dict[LinkLines, QRectF] = {}  # where they were drawn with their labels, by the item that drew them
        stretched = [link for link in links if not link.stretched]
        for link in stretched:
            drawing = self._drawing(link)
            gone[drawing] = gone.get(drawing, QRectF()).united(link.drawn_rect())
            link.stretch()
        drawn = QRectF()
        for drawing, rect in gone.items():
            drawing.redraw(rect)
            drawn = drawn.united(rect)
        if stretched:
            self._overview.stretched(stretched, drawn)
        changed = self._stretched.follow()
        if not changed.isEmpty():
            self._moving_lines.reaches(changed)
            self._overview_stretched.reaches(changed)

    def _drawing(self, link: LinkItem) -> LinkLines:
        """The item that draws the link zoomed in."""
        return self._moving_lines if link.link_id in self._moving else self._lines

    def _stretch_changed(self, link: LinkItem) -> None:
        """A link started or stopped being drawn stretched: drawn with the links a drag moves meanwhile."""
        self._stretched.changed(link)
        if link.stretched:
            self._moving[link.link_id] = link
        elif not self._drawn_apart:
            self._moving.pop(link.link_id, None)

    def _draw_apart(self, drawn_apart: bool) -> None:
        """From a mouse drag's first step, the dragged nodes' links are drawn apart from the others, which Qt keeps
        drawn in a pixmap of the view meanwhile (zoomed out, the overview, with the stretched links drawn over it): a
        step draws only what moved over it. At the drop, they are drawn with the others again (the stretched ones
        until they follow their nodes)."""
        if drawn_apart == self._drawn_apart:
            return
        self._drawn_apart = drawn_apart
        if drawn_apart:
            moving = [link for node in self._dragged for link in node.links if link.link_id not in self._moving]
            self._moving.update((link.link_id, link) for link in moving)
        else:
            moving = [link for link in self._moving.values() if not link.stretched]
            for link in moving:
                del self._moving[link.link_id]
        changed = QRectF()
        for link in moving:
            changed = changed.united(link.drawn_rect())
        for kept in (self._lines, self._overview):
            kept.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache if drawn_apart
                              else QGraphicsItem.CacheMode.NoCache)
        self._lines.redraw(changed)
        if drawn_apart:
            self._moving_lines.reaches(changed)  # its bounds grown to hold them, not measured again over them all
        else:
            self._moving_lines.invalidate()  # its bounds measured again, for the links it still draws
            self._moving_lines.redraw(changed)

    # ------------------------------------------------------------ view state

    @property
    def detailed(self) -> bool:
        return self.look.detailed

    def set_detailed(self, detailed: bool) -> None:
        """Let every node and link draw itself, with its labels (zoomed in), or draw the lab as an overview."""
        if detailed == self.look.detailed:
            return
        self.look.detailed = detailed
        for item in self.nodes.values():
            item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, not detailed)
        if detailed:
            self.removeItem(self._overview)
            self.removeItem(self._overview_stretched)
            for drawing in (self._lines, self._moving_lines):
                drawing.invalidate()
                self.addItem(drawing)
            self._start_labelling()
        else:
            self.removeItem(self._lines)
            self.removeItem(self._moving_lines)
            self.addItem(self._overview)
            self.addItem(self._overview_stretched)
            self._overview.invalidate()
            self._start_labelling()  # the stretched links still follow their nodes

    def _start_labelling(self) -> None:
        """Place the labels of links that have none (zoomed in) and let stretched links follow their nodes,
        starting after the view is painted (it just zoomed in, or a drag ended)."""
        self._unlabelled, self._unlabelled_seen, self._view_changed = deque(), None, True
        self._labelling.start()

    def _stop_labelling(self) -> None:
        self._labelling.stop()
        self._unlabelled.clear()

    def _place_label_batch(self) -> None:
        """Place the labels of links for a turn of the event loop, those in view first; stop when every link has
        its labels. A turn that placed labels in view is followed by one that only paints them: painting a view
        of a thousand links takes about as long as a turn may."""
        turn_ends = time.monotonic() + LABEL_TURN_S
        if self._view_changed:
            self._view_changed = False
            return
        seen = self._seen()
        detailed = self.look.detailed
        if seen != self._unlabelled_seen:
            self._unlabelled_seen = seen
            in_view: list[LinkItem] = []
            out_of_view: list[LinkItem] = []
            for link in self.links.values():
                if link.stretched or (detailed and not link.placed):
                    (in_view if _crosses(link.line, seen) else out_of_view).append(link)
            self._unlabelled = deque([*in_view, *out_of_view])
        unlabelled = self._unlabelled
        self._lines.take_changed()
        self._moving_lines.take_changed()
        while unlabelled and time.monotonic() < turn_ends:
            link = unlabelled.popleft()
            if (link.stretched or (detailed and not link.placed)) and link.scene() is self:  # not placed meanwhile
                link.update_geometry()  # by an edit, nor gone
        self._view_changed = self._lines.take_changed().united(self._moving_lines.take_changed()).intersects(seen)
        if not unlabelled:
            self._stop_labelling()

    def _seen(self) -> QRectF:
        """What the view shows, in scene coordinates."""
        views = self.views()
        return views[0].mapToScene(views[0].viewport().rect()).boundingRect() if views else QRectF()

    @contextmanager
    def in_detail(self) -> Iterator[None]:
        """Every item drawing itself for a while, whatever the zoom (an export)."""
        detailed = self.look.detailed
        self.set_detailed(True)
        for link in self.links.values():
            if not link.placed:
                link.update_geometry()
        try:
            yield
        finally:
            self.set_detailed(detailed)

    def snapped(self, point: QPointF) -> QPointF:
        if not self.snap_to_grid or self._syncing:
            return point
        return QPointF(round(point.x() / GRID) * GRID, round(point.y() / GRID) * GRID)

    @property
    def colors(self) -> Colors:
        return self.look.colors

    def refresh_colors(self, palette: QPalette) -> None:
        self.look.colors = Colors.from_palette(palette)
        self._overview.invalidate()
        for node in self._cached:
            node.update()  # drops the pixmap it drew in the old colours
        self.update()

    def set_presentation(self, on: bool) -> None:
        """Names and labels in large type and thick links, for a projector; or as usual."""
        self._scale_fonts(PRESENTATION_TEXT if on else 1.0)
        self.look.line_scale = PRESENTATION_LINES if on else 1.0
        for node in self.nodes.values():
            node.restyle()
        for link in self.links.values():
            link.restyle()
        for annotation in self.annotations.values():
            annotation.restyle()
        self._overview.invalidate()
        self.update()

    def _scale_fonts(self, scale: float) -> None:
        self._font.setPointSizeF(self._points * scale)
        self._small_font.setPointSizeF(max(6.0, self._points * 0.8 * scale))

    def show_interface_labels(self, shown: bool) -> None:
        """Show or hide the interface names and addresses at the links' ends."""
        self.look.end_labels = shown
        for link in self.links.values():
            link.update_geometry()
        self.update()

    @contextmanager
    def print_style(self) -> Iterator[None]:
        """While exporting for print: white paper, dark ink, no grid."""
        colors, grid = self.look.colors, self.draw_grid
        self.look.colors, self.draw_grid = Colors.for_print(), False
        try:
            yield
        finally:
            self.look.colors, self.draw_grid = colors, grid

    def mark_problems(self, problems: Iterable[tuple[str, str]]) -> None:
        """Outline the nodes and links problems name (each problem's subject's id and severity's value): red for
        errors, dashed orange for warnings."""
        worst: dict[str, str] = {}
        for subject_id, severity in problems:
            if subject_id and worst.get(subject_id) != "error":
                worst[subject_id] = "error" if severity == Severity.ERROR.value else "warning"
        for subject_id in self._severities.keys() | worst.keys():  # what was marked or is now: not every item
            for items in (self.nodes, self.links):
                item = items.get(subject_id)
                if item is not None:
                    item.set_severity(worst.get(subject_id, ""))
        self._severities = worst

    def set_node_states(self, states: dict[str, NodeState]) -> None:
        for node_id, item in self.nodes.items():
            item.set_state(states.get(node_id, NodeState.NOT_DEPLOYED))

    def set_loads(self, loads: Mapping[str, float]) -> None:
        """Draw links as wide as their loads (0 to 1), by link id. Repainted together: a packet flooded through a
        switch changes the load of its thousand links at once, and repainting the view once costs less than telling
        Qt of a thousand rects."""
        changed: list[LinkItem] = []
        busy_changed = False
        for link_id, load in loads.items():
            item = self.links.get(link_id)
            if item is None:
                continue
            was_busy = item.busy
            if item.set_load(load):
                changed.append(item)
                busy_changed = busy_changed or item.busy != was_busy
        if not self.look.detailed:
            if busy_changed:
                self._marks_changed()  # zoomed out, a busy link is drawn on its own
            return
        if len(changed) > MANY_CHANGES:
            self._lines.update()
            self._moving_lines.update()
            return
        for item in changed:
            item.repaint()

    def set_links_down(self, down: set[str]) -> None:
        for link_id, item in self.links.items():
            item.set_down(link_id in down)

    def set_link_faults(self, faults: dict[str, str]) -> None:
        """What the running lab lacks of each link, by link id (no entry: nothing is missing)."""
        for link_id, item in self.links.items():
            item.set_fault(faults.get(link_id, ""))

    def mark_verdicts(self, verdicts: dict[str, QColor]) -> None:
        """Colour the nodes and links checks ran over with their result (no entry: no mark)."""
        for node_id, node_item in self.nodes.items():
            node_item.set_verdict(verdicts.get(node_id))
        for link_id, link_item in self.links.items():
            link_item.set_verdict(verdicts.get(link_id))

    def highlight_path(self, ids: Iterable[str], by: str) -> None:
        """Light the nodes and links that feature `by` points at (a measurement's path, the links under capture, a
        check's pair), in place of what it lit before; what other features light stays lit."""
        self._paths[by] = set(ids)
        on_path = set().union(*self._paths.values())
        for node_id, node_item in self.nodes.items():
            node_item.set_on_path(node_id in on_path)
        for link_id, link_item in self.links.items():
            link_item.set_on_path(link_id in on_path)

    def drawBackground(self, painter: QPainter, exposed: QRectF | QRect) -> None:
        rect = QRectF(exposed)
        painter.fillRect(rect, self.colors.base)
        scale = painter.worldTransform().m11()
        if not self.draw_grid or scale * GRID < 6:
            return
        left = math.floor(rect.left() / GRID) * GRID
        top = math.floor(rect.top() / GRID) * GRID
        lines = [QLineF(x, rect.top(), x, rect.bottom())
                 for x in (left + i * GRID for i in range(int((rect.right() - left) / GRID) + 1))]
        lines += [QLineF(rect.left(), y, rect.right(), y)
                  for y in (top + i * GRID for i in range(int((rect.bottom() - top) / GRID) + 1))]
        painter.setPen(QPen(self.colors.grid, 0))
        painter.drawLines(lines)

    # ------------------------------------------------------------ the current tool gets mouse events first

    def begin_gesture(self, gesture: Gesture) -> None:
        """The tool for the press about to arrive; it ends with the release."""
        self.cancel_gesture()
        self._gesture = gesture

    def cancel_gesture(self) -> None:
        gesture, self._gesture = self._gesture, None
        if gesture is not None:
            gesture.cancel()

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if self._gesture is None or not self._gesture.mouse_press(event):
            super().mousePressEvent(event)
            if event.button() == Qt.MouseButton.LeftButton:
                self._draw_apart(False)  # as after a drop (a release the canvas did not see)
                self._dragged = self._draggable()

    def mouseMoveEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        if self._gesture is None or not self._gesture.mouse_move(event):
            self._draw_apart(bool(self._dragged))
            with self._links_following_once():
                super().mouseMoveEvent(event)  # Qt moves every selected node here, without telling it
                for node in self._dragged:
                    if self.snap_to_grid:
                        node.setPos(self.snapped(node.pos()))
                    node.moved()

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        dragged, self._dragged = self._dragged, []  # before the drop: it may place the nodes again (the model's)
        gesture, self._gesture = self._gesture, None
        if gesture is None or not gesture.mouse_release(event):
            super().mouseReleaseEvent(event)
        if dragged:
            self._draw_apart(False)
            self._start_labelling()  # the links the drag stretched follow their nodes, with their labels
            self.press_released.emit()

    @property
    def pressing_nodes(self) -> bool:
        """Whether the mouse button is held on nodes it selected and may drag (until press_released)."""
        return bool(self._dragged)

    def _draggable(self) -> list[NodeItem]:
        """The nodes the mouse may now drag: the selection and the pressed node, in a stable order."""
        dragged = {item for item in self.selectedItems() if isinstance(item, NodeItem)}
        grabber = self.mouseGrabberItem()
        if isinstance(grabber, NodeItem):
            dragged.add(grabber)
        return sorted(dragged, key=lambda node: node.node_id)

    # ------------------------------------------------------------ selection

    def selected_node_ids(self) -> list[str]:
        """The selected nodes, first selected first (as "iperf between these two" needs them)."""
        selected = [item.node_id for item in self.selectedItems() if isinstance(item, NodeItem)]
        order = {node_id: index for index, node_id in enumerate(self._picked)}
        return sorted(selected, key=lambda node_id: order.get(node_id, len(order)))

    def _cache_the_selection(self) -> None:
        """A selected node keeps its drawing as a pixmap, made while the selection is drawn: a drag of the
        selection copies it each frame instead of painting the node again. The others draw afresh, so a zoom
        repaints no pixmaps but the selection's (an export clears the selection first)."""
        selected = {item for item in self.selectedItems() if isinstance(item, NodeItem)}
        for node in self._cached - selected:
            node.setCacheMode(QGraphicsItem.CacheMode.NoCache)
        for node in selected - self._cached:
            node.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self._cached = selected

    def _remember_selection_order(self) -> None:
        selected = [item.node_id for item in self.selectedItems() if isinstance(item, NodeItem)]
        kept = [node_id for node_id in self._picked if node_id in selected]
        self._picked = kept + [node_id for node_id in selected if node_id not in kept]

    def selected_link_ids(self) -> list[str]:
        return [item.link_id for item in self.selectedItems() if isinstance(item, LinkItem)]

    def selected_annotation_ids(self) -> list[str]:
        return [item.annotation_id for item in self.selectedItems() if isinstance(item, AnnotationItem)]

    def select_ids(self, ids: Iterable[str]) -> None:
        wanted = set(ids)
        self.clearSelection()
        for mapping in (self.nodes, self.links, self.annotations):
            for item_id, item in mapping.items():
                if item_id in wanted:
                    item.setSelected(True)

    def item_for(self, item_id: str) -> QGraphicsItem | None:
        return self.nodes.get(item_id) or self.links.get(item_id) or self.annotations.get(item_id)

    def node_at(self, point: QPointF) -> NodeItem | None:
        for item in self.items(point):
            if isinstance(item, NodeItem):
                return item
        return None

    def link_at(self, point: QPointF) -> LinkItem | None:
        for item in self.items(point):
            if isinstance(item, LinkItem):
                return item
        return None
