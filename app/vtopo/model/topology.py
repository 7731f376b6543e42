"""The lab as the user drew it: nodes, links between their ports, and notes. Plain Python."""
from __future__ import annotations

import copy
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, TypeVar

from vtopo.model.addressing import AddressPool
from vtopo.model.events import Event
from vtopo.model.expectations import Check, Experiment
from vtopo.model.sites import Site

if TYPE_CHECKING:
    from vtopo.model.checkpoints import Checkpoint
    from vtopo.model.stages import Stage


def new_id(prefix: str) -> str:
    return f"{prefix}-{os.urandom(4).hex()}"


T = TypeVar("T")


def _insert(items: dict[str, T], key: str, value: T, index: int | None) -> dict[str, T]:
    """`items` with `value` at position `index` (the end when None), so an undone delete keeps the file order."""
    if index is None or index >= len(items):
        items[key] = value
        return items
    ordered = list(items.items())
    ordered.insert(index, (key, value))
    return dict(ordered)


Range = tuple[float, float]
COORDINATE: Range = (-1_000_000.0, 1_000_000.0)
ANNOTATION_SIZE: Range = (0.0, 100_000.0)
MTU: Range = (0, 65535)  # 0: the kernel's default; the compiler asks for 68 at least otherwise
IMPAIRMENT_LIMITS: dict[str, Range] = {"delay_ms": (0.0, 60_000.0), "jitter_ms": (0.0, 60_000.0),
                                       "loss_pct": (0.0, 100.0), "rate_mbit": (0.0, 1_000_000.0)}


@dataclass(frozen=True)
class Position:
    """Where a node is drawn."""

    x: float = 0.0
    y: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "x", float(self.x))
        object.__setattr__(self, "y", float(self.y))

    def __deepcopy__(self, memo: dict[int, object]) -> Position:
        return self  # immutable: an undo step or a worker's copy of the lab can share it


VLAN_ID: Range = (1, 4094)  # 0 is a frame without a VLAN, 4095 is reserved


@dataclass
class Subinterface:
    """An 802.1Q subinterface of a node's interface: its frames leave the interface tagged with `vlan`. It is named
    after its interface and VLAN (eth0.10) and has addresses of its own."""

    vlan: int
    addresses: list[str] = field(default_factory=list)


@dataclass
class Interface:
    """Settings of the interface at one end of a link. Empty fields mean "let vtopo choose"."""

    name: str = ""
    mac: str = ""
    mtu: int = 0
    addresses: list[str] = field(default_factory=list)
    subinterfaces: list[Subinterface] = field(default_factory=list)
    dhcp: bool = False  # the node runs a DHCP client on it, which takes its IPv4 address from a server


@dataclass
class Endpoint:
    """One end of a link: a node's port and the interface on it."""

    node: str
    port: str
    interface: Interface = field(default_factory=Interface)


@dataclass
class Impairment:
    """netem/tbf settings applied to both ends of a link."""

    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    loss_pct: float = 0.0
    rate_mbit: float = 0.0

    @property
    def active(self) -> bool:
        return any((self.delay_ms, self.jitter_ms, self.loss_pct, self.rate_mbit))


@dataclass
class Node:
    """A node of the lab: its kind and that kind's settings."""

    id: str
    name: str
    kind: str
    settings: dict[str, Any] = field(default_factory=dict)
    position: Position = field(default_factory=Position)
    startup_commands: list[str] = field(default_factory=list)  # shell commands run inside the node after deploy
    site: str = ""  # the name of the site it runs on; "" for the machine vtopo runs on


@dataclass
class Link:
    """A link between two nodes' ports, and what it does to the frames it carries."""

    id: str
    a: Endpoint
    b: Endpoint
    impairment: Impairment = field(default_factory=Impairment)

    @property
    def ends(self) -> tuple[Endpoint, Endpoint]:
        return (self.a, self.b)


@dataclass
class Annotation:
    """Free text or a rectangle on the canvas, for teaching."""

    id: str
    shape: str  # "note" or "rect"
    text: str = ""
    position: Position = field(default_factory=Position)
    width: float = 200.0
    height: float = 100.0

    def __post_init__(self) -> None:
        self.width, self.height = float(self.width), float(self.height)


@dataclass
class ModelEvents:
    """What the model tells its listeners (the designer's scene) when it changes."""

    node_added: Event[Node] = field(default_factory=Event)
    node_removed: Event[Node] = field(default_factory=Event)
    node_changed: Event[Node] = field(default_factory=Event)
    link_added: Event[Link] = field(default_factory=Event)
    link_removed: Event[Link] = field(default_factory=Event)
    link_changed: Event[Link] = field(default_factory=Event)
    annotation_added: Event[Annotation] = field(default_factory=Event)
    annotation_removed: Event[Annotation] = field(default_factory=Event)
    annotation_changed: Event[Annotation] = field(default_factory=Event)
    lab_changed: Event["Topology"] = field(default_factory=Event)
    checks_changed: Event["Topology"] = field(default_factory=Event)
    together: Event[bool] = field(default_factory=Event)  # True before edits made as one step, False after them


@dataclass(eq=False)
class Topology:
    """A lab. Edits go through the methods below so that views hear about them."""

    name: str
    id: str = field(default_factory=lambda: new_id("lab"))
    notes: str = ""
    prefix: str = ""
    vm_backend: str = ""  # how VMs run: "libvirt", "qemu", or "" (auto: libvirt when libvirtd answers)
    nodes: dict[str, Node] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    annotations: dict[str, Annotation] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    stages: list[Stage] = field(default_factory=list)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    experiment: Experiment = field(default_factory=Experiment)
    sites: dict[str, Site] = field(default_factory=dict)  # by name; none: the lab runs on this machine alone
    addressing: AddressPool = field(default_factory=AddressPool)  # where new links take addresses; empty: by hand
    events: ModelEvents = field(default_factory=ModelEvents, repr=False, compare=False)

    # queries

    def node_named(self, name: str) -> Node | None:
        return next((n for n in self.nodes.values() if n.name == name), None)

    def no_node_named(self, name: str) -> str:
        """What to say when `node_named` found no node: the names there are."""
        return f"lab {self.name} has no node {name!r} (it has: {', '.join(sorted(n.name for n in self.nodes.values()))})"

    def links_of(self, node_id: str) -> list[Link]:
        return [link for link in self.links.values() if node_id in (link.a.node, link.b.node)]

    def copy(self) -> Topology:
        """A deep copy with no listeners, for a worker thread to read while the original is edited."""
        return Topology(name=self.name, id=self.id, notes=self.notes, prefix=self.prefix,
                        vm_backend=self.vm_backend, nodes=copy.deepcopy(self.nodes), links=copy.deepcopy(self.links),
                        annotations=copy.deepcopy(self.annotations), checks=copy.deepcopy(self.checks),
                        stages=copy.deepcopy(self.stages), checkpoints=copy.deepcopy(self.checkpoints),
                        experiment=copy.deepcopy(self.experiment), sites=dict(self.sites), addressing=self.addressing)

    def used_ports(self, node_id: str) -> set[str]:
        return {end.port for link in self.links_of(node_id) for end in link.ends if end.node == node_id}

    def describe_link(self, link: Link) -> str:
        def end(e: Endpoint) -> str:
            node = self.nodes.get(e.node)
            return f"{node.name if node else e.node}:{e.port}"

        return f"{end(link.a)}-{end(link.b)}"

    # edits

    @contextmanager
    def edits_together(self) -> Iterator[None]:
        """Edits made as one step (a move of 200 nodes undone, say): a view may catch up once, after the last."""
        self.events.together.emit(True)
        try:
            yield
        finally:
            self.events.together.emit(False)

    def add_node(self, node: Node, index: int | None = None) -> None:
        self.nodes = _insert(self.nodes, node.id, node, index)
        self.events.node_added.emit(node)

    def remove_node(self, node_id: str) -> Node:
        if self.links_of(node_id):
            raise ValueError(f"node {self.nodes[node_id].name} still has links; remove them first")
        node = self.nodes.pop(node_id)
        self.events.node_removed.emit(node)
        return node

    def update_node(self, node_id: str, *, name: str | None = None, settings: dict[str, Any] | None = None,
                    position: Position | None = None, startup_commands: list[str] | None = None,
                    site: str | None = None) -> None:
        node = self.nodes[node_id]
        if site is not None:
            node.site = site
        if startup_commands is not None:
            node.startup_commands = list(startup_commands)
        if name is not None:
            node.name = name
        if settings is not None:
            node.settings = dict(settings)
        if position is not None:
            node.position = position
        self.events.node_changed.emit(node)

    def add_link(self, link: Link, index: int | None = None) -> None:
        self.links = _insert(self.links, link.id, link, index)
        self.events.link_added.emit(link)

    def remove_link(self, link_id: str) -> Link:
        link = self.links.pop(link_id)
        self.events.link_removed.emit(link)
        return link

    def update_link(self, link_id: str, *, a: Interface | None = None, b: Interface | None = None,
                    impairment: Impairment | None = None) -> None:
        link = self.links[link_id]
        if a is not None:
            link.a.interface = a
        if b is not None:
            link.b.interface = b
        if impairment is not None:
            link.impairment = impairment
        self.events.link_changed.emit(link)

    def add_annotation(self, annotation: Annotation, index: int | None = None) -> None:
        self.annotations = _insert(self.annotations, annotation.id, annotation, index)
        self.events.annotation_added.emit(annotation)

    def remove_annotation(self, annotation_id: str) -> Annotation:
        annotation = self.annotations.pop(annotation_id)
        self.events.annotation_removed.emit(annotation)
        return annotation

    def update_annotation(self, annotation_id: str, *, text: str | None = None, position: Position | None = None,
                          width: float | None = None, height: float | None = None) -> None:
        annotation = self.annotations[annotation_id]
        if text is not None:
            annotation.text = text
        if position is not None:
            annotation.position = position
        if width is not None:
            annotation.width = width
        if height is not None:
            annotation.height = height
        self.events.annotation_changed.emit(annotation)

    def update_lab(self, *, name: str | None = None, notes: str | None = None, vm_backend: str | None = None,
                   sites: dict[str, Site] | None = None, addressing: AddressPool | None = None,
                   checkpoints: list[Checkpoint] | None = None) -> None:
        if name is not None:
            self.name = name
        if addressing is not None:
            self.addressing = addressing
        if checkpoints is not None:
            self.checkpoints = list(checkpoints)
        if sites is not None:
            self.sites = dict(sites)
        if notes is not None:
            self.notes = notes
        if vm_backend is not None:
            self.vm_backend = vm_backend
        self.events.lab_changed.emit(self)

    def update_checks(self, checks: list[Check]) -> None:
        self.checks = list(checks)
        self.events.checks_changed.emit(self)
