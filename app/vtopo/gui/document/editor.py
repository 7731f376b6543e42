"""The editor: turns user gestures into undo commands on the lab. The one place commands are built."""
from __future__ import annotations

from functools import partial
from typing import Any

from PySide6.QtCore import QObject, QPointF, QRectF, Signal
from PySide6.QtGui import QUndoStack

from vtopo import layout
from vtopo.compile.auto_addressing import address_links
from vtopo.gui.canvas.icons import IconCache
from vtopo.gui.canvas.scene import GRID, TopologyScene
from vtopo.gui.document import clipboard
from vtopo.gui.document.commands import (AddCommand, Command, Macro, MergingMacro, RemoveCommand, SetFieldsCommand,
                                         remove_node)
from vtopo.gui.document.naming import stem_for
from vtopo.gui.document.placement import Occupied, clear_box, clear_offset
from vtopo.gui.workers import Worker, serial_pool
from vtopo.kinds.registry import Registry
from vtopo.kinds.contract import PortVlans
from vtopo.kinds.vlans import vlans_setting_name
from vtopo.model.addressing import AddressPool
from vtopo.model.events import Event
from vtopo.model.fragment import Fragment, fragment_of, instantiate
from vtopo.model.problems import LabError
from vtopo.model.rules import is_valid_node_name, link_refusal, unique_name
from vtopo.model.sites import Site
from vtopo.model.topology import (Annotation, Endpoint, Impairment, Interface, Link, Node, Position, Topology,
                                  new_id)

UNTITLED = "untitled"
PASTE_OFFSET = 40.0
NUDGE_MERGE_ID = 1
ALIGN_MODES = {"left": "Align left", "center": "Align centres", "right": "Align right", "top": "Align top",
               "middle": "Align middles", "bottom": "Align bottom", "horizontal": "Distribute horizontally",
               "vertical": "Distribute vertically", "grid": "Align to grid"}


def aligned(positions: dict[str, Position], mode: str) -> dict[str, Position]:
    """Where each position goes when they are aligned, distributed evenly, or snapped to the grid."""
    xs, ys = [p.x for p in positions.values()], [p.y for p in positions.values()]
    if mode in ("left", "center", "right"):
        x = {"left": min(xs), "center": round((min(xs) + max(xs)) / 2, 1), "right": max(xs)}[mode]
        return {i: Position(x, p.y) for i, p in positions.items()}
    if mode in ("top", "middle", "bottom"):
        y = {"top": min(ys), "middle": round((min(ys) + max(ys)) / 2, 1), "bottom": max(ys)}[mode]
        return {i: Position(p.x, y) for i, p in positions.items()}
    if mode in ("horizontal", "vertical"):
        along = (lambda p: p.x) if mode == "horizontal" else (lambda p: p.y)
        order = sorted(positions, key=lambda i: along(positions[i]))
        first, last = along(positions[order[0]]), along(positions[order[-1]])
        step = (last - first) / max(1, len(order) - 1)
        spaced = {i: round(first + n * step, 1) for n, i in enumerate(order)}
        return {i: Position(spaced[i], p.y) if mode == "horizontal" else Position(p.x, spaced[i])
                for i, p in positions.items()}
    return {i: Position(round(p.x / GRID) * GRID, round(p.y / GRID) * GRID) for i, p in positions.items()}


class Editor(QObject):
    """Owns the lab being edited, its undo stack and its scene."""

    topology_replaced = Signal()
    model_changed = Signal()
    edited = Signal(object)  # with model_changed: the node, link, annotation or topology that changed
    status_message = Signal(str)

    def __init__(self, registry: Registry, icons: IconCache, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.registry = registry
        self.undo_stack = QUndoStack(self)
        self.scene = TopologyScene(icons, self.vlans_of, self)
        self.scene.annotation_resized.connect(self.resize_annotation)
        scene, stack = self.scene, self.undo_stack
        # the scene and the stack empty themselves while they are destroyed: nobody may hear that as an edit
        self.destroyed.connect(lambda: (scene.blockSignals(True), stack.blockSignals(True)))
        self._paste_count = 0
        self._layout_pool = serial_pool(self)
        self._layout_worker: Worker | None = None
        self._revision = 0  # counts edits, so that a layout computed meanwhile is not applied over them
        self.topology = Topology(name=UNTITLED)
        self.scene.set_topology(self.topology)
        self._listen(self.topology)

    def set_topology(self, topology: Topology) -> None:
        """Edit another lab: the scene follows it, the undo history starts afresh."""
        for event in self._events(self.topology):
            event.disconnect(self._changed)
        self.topology = topology
        self._revision += 1
        self.scene.set_topology(topology)  # the scene hears about edits first, then the panels
        self._listen(topology)
        self.undo_stack.clear()
        self._paste_count = 0
        self.topology_replaced.emit()

    def _listen(self, topology: Topology) -> None:
        for event in self._events(topology):
            event.connect(self._changed)

    @staticmethod
    def _events(topology: Topology) -> list[Event[Any]]:
        e = topology.events
        return [e.node_added, e.node_removed, e.node_changed, e.link_added, e.link_removed, e.link_changed,
                e.annotation_added, e.annotation_removed, e.annotation_changed, e.lab_changed, e.checks_changed]

    def _changed(self, subject: object) -> None:
        self._revision += 1
        self.edited.emit(subject)
        self.model_changed.emit()

    def vlans_of(self, node: Node) -> dict[str, str] | None:
        """The node's VLANs port by port, as its VLANs setting writes them; None where its kind keeps no VLANs."""
        kind = self.registry.get(node.kind)
        name = vlans_setting_name(kind.settings_type) if kind is not None else ""
        if not name:
            return None
        vlans = node.settings.get(name, {})
        return vlans if isinstance(vlans, dict) else {}

    # ------------------------------------------------------------ nodes and links

    def place_node(self, kind_name: str, at: QPointF) -> Node | None:
        if kind_name not in self.registry:
            self.status_message.emit(f"unknown kind {kind_name!r}")
            return None
        at = self.scene.snapped(at) if self.scene.snap_to_grid else at
        taken = {n.name for n in self.topology.nodes.values()}
        node = Node(new_id("node"), unique_name(stem_for(self.registry.kinds[kind_name]), taken), kind_name,
                    position=Position(round(at.x(), 1), round(at.y(), 1)))
        self.undo_stack.push(AddCommand(self.topology, node))
        return node

    def free_ports(self, node_id: str, count: int = 8) -> list[str]:
        """The first `count` free ports of a node, in order, for the port chooser."""
        kind = self.registry.get(self.topology.nodes[node_id].kind)
        if kind is None:
            return []
        used = set(self.topology.used_ports(node_id))
        ports: list[str] = []
        while len(ports) < count and (port := kind.ports.next_free(used)) is not None:
            ports.append(port)
            used.add(port)
        return ports

    def can_connect(self, a_id: str, b_id: str) -> str:
        """Why these two nodes cannot be linked, or "" when they can."""
        if a_id == b_id:
            return "a link must join two different nodes"
        a, b = self.topology.nodes[a_id], self.topology.nodes[b_id]
        a_kind, b_kind = self.registry.get(a.kind), self.registry.get(b.kind)
        if a_kind is not None and b_kind is not None and (refusal := link_refusal(a_kind, b_kind)):
            return refusal
        for this, kind in ((a, a_kind), (b, b_kind)):
            if kind is not None and kind.ports.next_free(self.topology.used_ports(this.id)) is None:
                return f"{this.name} has no free port left ({kind.ports.describe()})"
        return ""

    def connect_nodes(self, a_id: str, b_id: str, a_port: str | None = None, b_port: str | None = None) -> Link | None:
        reason = self.can_connect(a_id, b_id)
        a_port = a_port or next(iter(self.free_ports(a_id, 1)), None)
        b_port = b_port or next(iter(self.free_ports(b_id, 1)), None)
        if reason or a_port is None or b_port is None:
            self.status_message.emit(reason or "no free port")
            return None
        link = Link(new_id("link"), Endpoint(a_id, a_port), Endpoint(b_id, b_port))
        self._add_addressed(link)
        return link

    def _add_addressed(self, link: Link) -> None:
        """Add a link whose ends take addresses from the lab's pool, when it has one, and whose LANs' hosts take
        their router as gateway: one undo step."""
        trial = self.topology.copy()
        trial.add_link(link)
        edits = address_links(trial, self.registry, [link.id])
        for (_, side), interface in edits.interfaces.items():
            getattr(link, side).interface = interface
        for shortage in dict.fromkeys(edits.shortages):
            self.status_message.emit(f"{self.topology.describe_link(link)} has no address: {shortage}")
        if not edits.settings:
            self.undo_stack.push(AddCommand(self.topology, link))
            return
        step = Macro(f"Link {self.topology.describe_link(link)}", self.topology)
        AddCommand(self.topology, link, step)
        for node_id, settings in edits.settings.items():
            self._edit_node(node_id, f"Set the default gateway of {self.topology.nodes[node_id].name}", step,
                            settings=settings)
        self.undo_stack.push(step)

    def name_error(self, node_id: str, name: str) -> str:
        """Why a node may not take this name, or ""."""
        if not name:
            return "a node needs a name"
        if not is_valid_node_name(name):
            return "letters, digits, '-' and '_' only, starting with a letter or digit"
        other = self.topology.node_named(name)
        if other is not None and other.id != node_id:
            return f"another node is already named {name}"
        return ""

    def rename_node(self, node_id: str, name: str) -> str:
        """Rename a node; returns why the name was refused, or ""."""
        if name == self.topology.nodes[node_id].name:
            return ""
        error = self.name_error(node_id, name)
        if not error:
            old = self.topology.nodes[node_id].name
            self.undo_stack.push(self._edit_node(node_id, f"Rename {old} to {name}", name=name))
        return error

    def set_node_settings(self, node_id: str, settings: dict[str, object]) -> None:
        if settings != self.topology.nodes[node_id].settings:
            node = self.topology.nodes[node_id]
            self.undo_stack.push(self._edit_node(node_id, f"Edit {node.name}", settings=settings))

    def set_port_vlans(self, node_id: str, port: str, vlans: PortVlans | None) -> None:
        """Make a switch's port an access port or a trunk (None: not set), one undo step."""
        node = self.topology.nodes[node_id]
        kind = self.registry.get(node.kind)
        name = vlans_setting_name(kind.settings_type) if kind is not None else ""
        if not name:
            return
        vlans_now = dict(self.vlans_of(node) or {})
        if vlans is None:
            vlans_now.pop(port, None)
        else:
            vlans_now[port] = str(vlans)
        settings = {key: value for key, value in node.settings.items() if key != name}
        if vlans_now:
            settings[name] = vlans_now
        if settings != node.settings:
            self.undo_stack.push(self._edit_node(node_id, f"Set the VLANs of {node.name}:{port}", settings=settings))

    def set_startup_commands(self, node_id: str, commands: list[str]) -> None:
        node = self.topology.nodes[node_id]
        if commands != node.startup_commands:
            self.undo_stack.push(self._edit_node(node_id, f"Edit the startup commands of {node.name}",
                                                 startup_commands=commands))

    def set_node_site(self, node_id: str, site: str) -> None:
        node = self.topology.nodes[node_id]
        if site != node.site:
            where = f"site {site}" if site else "this machine"
            self.undo_stack.push(self._edit_node(node_id, f"Place {node.name} on {where}", site=site))

    def place_on_sites(self, sites: dict[str, str]) -> None:
        """Give each node (by id) its site, as one undo step."""
        changed = {node_id: site for node_id, site in sites.items() if self.topology.nodes[node_id].site != site}
        if changed:
            step = Macro(f"Place {len(changed)} nodes on the suggested sites", self.topology)
            for node_id, site in changed.items():
                self._edit_node(node_id, "", step, site=site)
            self.undo_stack.push(step)

    def update_link(self, link_id: str, *, a: Interface | None = None, b: Interface | None = None,
                    impairment: Impairment | None = None) -> None:
        link = self.topology.links[link_id]
        current = {"a": link.a.interface, "b": link.b.interface, "impairment": link.impairment}
        new = {field: value for field, value in (("a", a), ("b", b), ("impairment", impairment))
               if value is not None and value != current[field]}
        if new:
            self.undo_stack.push(SetFieldsCommand(f"Edit link {self.topology.describe_link(link)}",
                                                  partial(self.topology.update_link, link_id),
                                                  {field: current[field] for field in new}, new))

    def adopt(self, changed: Topology, node_names: list[str], title: str) -> None:
        """Take the settings of the nodes named, and the interfaces of their links, from `changed` (a copy of the lab
        edited outside the editor: what `vtopo save` found running), as one undo step."""
        macro = Macro(title, self.topology)
        for name in node_names:
            node, theirs = self.topology.node_named(name), changed.node_named(name)
            if node is None or theirs is None:
                continue
            if theirs.settings != node.settings:
                self._edit_node(node.id, f"Edit {name}", macro, settings=theirs.settings)
            for link in self.topology.links_of(node.id):
                new = changed.links.get(link.id)
                if new is None:
                    continue
                current = {"a": link.a.interface, "b": link.b.interface}
                fields = {side: getattr(new, side).interface for side in current
                          if getattr(new, side).interface != current[side]}
                if fields:
                    SetFieldsCommand(f"Edit link {self.topology.describe_link(link)}",
                                     partial(self.topology.update_link, link.id),
                                     {side: current[side] for side in fields}, fields, macro)
        if macro.children:
            self.undo_stack.push(macro)

    def update_lab(self, *, name: str | None = None, notes: str | None = None, vm_backend: str | None = None) -> None:
        new = {field: value for field, value in (("name", name or None), ("notes", notes), ("vm_backend", vm_backend))
               if value is not None and value != getattr(self.topology, field)}
        if new:
            old = {field: getattr(self.topology, field) for field in new}
            self.undo_stack.push(SetFieldsCommand("Edit lab", self.topology.update_lab, old, new))

    def set_addressing(self, pool: AddressPool) -> None:
        """The pool new links take their addresses from (empty: addressed by hand); one undo step."""
        if pool != self.topology.addressing:
            self.undo_stack.push(SetFieldsCommand("Edit the lab's address pool", self.topology.update_lab,
                                                  {"addressing": self.topology.addressing}, {"addressing": pool}))

    def set_sites(self, sites: dict[str, Site]) -> None:
        """The machines the lab may place nodes on, by name; one undo step."""
        if sites != self.topology.sites:
            self.undo_stack.push(SetFieldsCommand("Edit the lab's sites", self.topology.update_lab,
                                                  {"sites": dict(self.topology.sites)}, {"sites": dict(sites)}))

    def _edit_node(self, node_id: str, title: str, parent: Command | None = None, /,
                   **new: Any) -> SetFieldsCommand:
        node = self.topology.nodes[node_id]
        return SetFieldsCommand(title, partial(self.topology.update_node, node_id),
                                {field: getattr(node, field) for field in new}, new, parent)

    def _edit_annotation(self, annotation_id: str, title: str, parent: Command | None = None, /,
                         **new: Any) -> SetFieldsCommand:
        annotation = self.topology.annotations[annotation_id]
        return SetFieldsCommand(title, partial(self.topology.update_annotation, annotation_id),
                                {field: getattr(annotation, field) for field in new}, new, parent)

    # ------------------------------------------------------------ annotations

    def add_annotation(self, shape: str, at: QPointF, text: str = "") -> Annotation:
        width, height = (220.0, 60.0) if shape == "note" else (240.0, 160.0)
        where = clear_box(Position(round(at.x(), 1), round(at.y(), 1)), width, height, self._occupied())
        annotation = Annotation(new_id("note"), shape, text or ("Note" if shape == "note" else ""), where, width,
                                height)
        self.undo_stack.push(AddCommand(self.topology, annotation))
        return annotation

    def set_annotation_text(self, annotation_id: str, text: str) -> None:
        if text != self.topology.annotations[annotation_id].text:
            self.undo_stack.push(self._edit_annotation(annotation_id, "Edit note", text=text))

    def resize_annotation(self, annotation_id: str, width: float, height: float) -> None:
        annotation = self.topology.annotations[annotation_id]
        if (annotation.width, annotation.height) != (width, height):
            self.undo_stack.push(self._edit_annotation(annotation_id, "Resize", width=round(width, 1),
                                                       height=round(height, 1)))

    # ------------------------------------------------------------ selection-wide edits

    def commit_moves(self) -> bool:
        """After a drag: one "Move" step for every selected item whose position differs from the model."""
        moves = self._moved_positions()
        if not moves:
            return False
        self._push_positions("Move", moves)
        return True

    def _moved_positions(self) -> dict[str, Position]:
        moves: dict[str, Position] = {}
        for node_id in self.scene.selected_node_ids():
            pos = self.scene.nodes[node_id].pos()
            if (pos.x(), pos.y()) != (self.topology.nodes[node_id].position.x, self.topology.nodes[node_id].position.y):
                moves[node_id] = Position(round(pos.x(), 1), round(pos.y(), 1))
        for annotation_id in self.scene.selected_annotation_ids():
            pos = self.scene.annotations[annotation_id].pos()
            model = self.topology.annotations[annotation_id].position
            if (pos.x(), pos.y()) != (model.x, model.y):
                moves[annotation_id] = Position(round(pos.x(), 1), round(pos.y(), 1))
        return moves

    def _push_positions(self, text: str, positions: dict[str, Position], parent: Command | None = None) -> None:
        parent = parent or Macro(text, self.topology)
        for item_id, position in positions.items():
            if item_id in self.topology.nodes:
                self._edit_node(item_id, "Move", parent, position=position)
            else:
                self._edit_annotation(item_id, "Move", parent, position=position)
        self.undo_stack.push(parent)

    def _selected_positions(self) -> dict[str, Position]:
        positions = {i: self.topology.nodes[i].position for i in self.scene.selected_node_ids()}
        return positions | {i: self.topology.annotations[i].position for i in self.scene.selected_annotation_ids()}

    def align(self, mode: str) -> None:
        """Align the selected nodes and annotations (one of ALIGN_MODES); one undo step."""
        positions = self._selected_positions()
        if not positions:
            return
        target = aligned(positions, mode)
        changed = {i: p for i, p in target.items() if (p.x, p.y) != (positions[i].x, positions[i].y)}
        if changed:
            self._push_positions(ALIGN_MODES[mode], changed)

    @property
    def laying_out(self) -> bool:
        return self._layout_worker is not None

    def auto_layout(self, style: str) -> None:
        """Lay the nodes out (one of layout.LAYOUTS) on a pool thread, then as one undo step; notes stay where they
        are. A big lab takes seconds, and the canvas stays live meanwhile; an edit made meanwhile wins."""
        if self.laying_out:
            return
        topology, registry, revision = self.topology.copy(), self.registry, self._revision
        worker = Worker(lambda _report: layout.layered(topology, registry) if style == "layered" else
                        layout.force_directed(topology))
        worker.returned.connect(lambda target: self._laid_out(target, revision))
        worker.errored.connect(lambda error: self.status_message.emit(f"auto-layout failed: {error}"))
        worker.finished.connect(self._layout_finished)
        self._layout_worker = worker
        self.status_message.emit(f"laying out {len(topology.nodes)} nodes…")
        worker.start(self._layout_pool)

    def _layout_finished(self) -> None:
        self._layout_worker = None

    def _laid_out(self, target: dict[str, Position], revision: int) -> None:
        if revision != self._revision:
            self.status_message.emit("the lab changed while it was being laid out; lay it out again")
            return
        current = {i: n.position for i, n in self.topology.nodes.items()}
        changed = {i: p for i, p in target.items() if (p.x, p.y) != (current[i].x, current[i].y)}
        if changed:
            self._push_positions("Auto-layout", changed)
        self.status_message.emit("")

    def nudge(self, dx: float, dy: float) -> None:
        """Move the selection by (dx, dy); a burst of nudges is one undo step."""
        positions = self._selected_positions()
        if positions:
            moved = {i: Position(round(p.x + dx, 1), round(p.y + dy, 1)) for i, p in positions.items()}
            nudges = MergingMacro("Nudge", self.topology, NUDGE_MERGE_ID, frozenset(moved))
            self._push_positions("Nudge", moved, nudges)

    def delete_selection(self) -> None:
        """One undo step: the selected links, every link of the selected nodes, the nodes, the annotations."""
        node_ids = self.scene.selected_node_ids()
        link_ids = self.scene.selected_link_ids()
        annotation_ids = self.scene.selected_annotation_ids()
        if not (node_ids or link_ids or annotation_ids):
            return
        parent = Macro("Delete", self.topology)
        claimed = set(link_ids) - {link.id for node_id in node_ids for link in self.topology.links_of(node_id)}
        for link_id in claimed:
            RemoveCommand(self.topology, self.topology.links[link_id], parent)
        for node_id in node_ids:
            own = [link.id for link in self.topology.links_of(node_id) if link.id not in claimed]
            claimed.update(own)
            remove_node(self.topology, node_id, own, parent)
        for annotation_id in annotation_ids:
            RemoveCommand(self.topology, self.topology.annotations[annotation_id], parent)
        self.undo_stack.push(parent)

    def selection_fragment(self) -> Fragment:
        return fragment_of(self.topology, set(self.scene.selected_node_ids()),
                                     set(self.scene.selected_annotation_ids()))

    def copy_selection(self) -> None:
        fragment = self.selection_fragment()
        if not fragment.empty:
            clipboard.put_on_clipboard(fragment)
            self._paste_count = 0

    def cut_selection(self) -> None:
        self.copy_selection()
        self.delete_selection()

    def paste(self, at: QPointF | None = None, shown: QRectF | None = None) -> None:
        """Paste centred on `at` (the cursor), or a little further from the original at each paste, unless that is
        outside `shown` (the part of the canvas in view): then in its middle."""
        try:
            fragment = clipboard.from_clipboard()
        except LabError as error:
            self.status_message.emit(f"cannot paste, the clipboard's vtopo data is damaged: {error.problems[0]}")
            return
        if fragment is None or fragment.empty:
            self.status_message.emit("nothing to paste")
            return
        centre = fragment.centre()
        if at is None:
            self._paste_count += 1
            step = PASTE_OFFSET * self._paste_count
            beside = QPointF(centre.x + step, centre.y + step)
            at = beside if shown is None or shown.contains(beside) else shown.center()
        offset = Position(round(at.x() - centre.x, 1), round(at.y() - centre.y, 1))
        self.insert_fragment(fragment, offset, "Paste")

    def _occupied(self) -> Occupied:
        return Occupied(node.position for node in self.topology.nodes.values())

    def duplicate_selection(self) -> None:
        fragment = self.selection_fragment()
        if not fragment.empty:
            self.insert_fragment(fragment, Position(PASTE_OFFSET, PASTE_OFFSET), "Duplicate")

    def insert_fragment(self, fragment: Fragment, offset: Position, text: str) -> None:
        """Add a copy of the fragment (new ids and names, shifted, clear of the nodes drawn) as one undo step, and
        select it."""
        offset = clear_offset([n.position for n in fragment.nodes], offset, self._occupied())
        taken = {n.name for n in self.topology.nodes.values()}
        copy = instantiate(fragment, taken, offset)
        parent = Macro(text, self.topology)
        for node in copy.nodes:
            AddCommand(self.topology, node, parent)
        for link in copy.links:
            AddCommand(self.topology, link, parent)
        for annotation in copy.annotations:
            AddCommand(self.topology, annotation, parent)
        self.undo_stack.push(parent)
        self.scene.select_ids([n.id for n in copy.nodes] + [a.id for a in copy.annotations])
