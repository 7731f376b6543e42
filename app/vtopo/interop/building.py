"""What an importer builds: a vtopo lab from nodes and links named the way another tool names them, with a notice
for everything that did not come over as it was.

Ports follow each kind's rules: an interface that already is a port's name (eth1 on a container) keeps it, any
other gets the next free port and, on a namespace, keeps its own name as the interface's name (a router's `ens2`,
which its configuration refers to). Positions come from the source when every node has one; otherwise the lab is
laid out by role.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from vtopo import layout
from vtopo.host.image_store import resolve
from vtopo.kinds.contract import Role
from vtopo.lab_terms import DEFAULT_PREFIX_LENGTH, MAX_INTERFACE_NAME
from vtopo.kinds.registry import Registry
from vtopo.model.rules import INTERFACE_NAME, NODE_NAME, unique_name
from vtopo.model.topology import Endpoint, Interface, Link, Node, Position, Topology

NAMED_INTERFACES = frozenset({"container", "router"})
"""Kinds whose interface inside the node is named by the link end (the others name their devices themselves)."""
MAX_NAME = 32


@dataclass(frozen=True)
class Notice:
    """Something the user should know about one node or link of the import (or the whole lab when subject is "")."""

    subject: str
    message: str

    def __str__(self) -> str:
        return f"{self.subject}: {self.message}" if self.subject else self.message


@dataclass
class Imported:
    topology: Topology
    notices: list[Notice]


@dataclass
class End:
    """One end of a link as the source names it."""

    node: str  # the node's name in the source
    interface: str = ""
    mac: str = ""
    addresses: list[str] = field(default_factory=list)


@dataclass
class _PendingLink:
    a: End
    b: End
    mtu: int


class LabBuilder:
    """Collects nodes and links under the source's names, then makes the lab."""

    def __init__(self, name: str, registry: Registry) -> None:
        self.registry = registry
        self.topology = Topology(name=safe_name(name, "lab"), id=f"lab-{safe_name(name, 'lab')}")
        self.notices: list[Notice] = []
        self._ids: dict[str, str] = {}  # source name -> node id
        self._links: list[_PendingLink] = []
        self._placed = True

    def add_node(self, source_name: str, kind: str, settings: dict[str, Any] | None = None,
                 position: Position | None = None, startup_commands: list[str] | None = None,
                 name: str = "") -> Node:
        """A node the source calls `source_name` (its links name it so), named `name` or after it."""
        taken = {node.name for node in self.topology.nodes.values()}
        wanted = name or source_name
        name = safe_name(wanted, kind)
        if name in taken:
            name = unique_name(name, taken)
        if name != wanted:
            self.notify(f"node {name}", f"named {wanted!r} in the source (vtopo's node names hold letters, "
                        "digits, '-' and '_')")
        node = Node(id=name, name=name, kind=kind, settings=settings or {}, position=position or Position(),
                    startup_commands=list(startup_commands or []))
        self._placed = self._placed and position is not None
        self.topology.nodes[node.id] = node
        self._ids[source_name] = node.id
        return node

    def node(self, source_name: str) -> Node | None:
        node_id = self._ids.get(source_name)
        return self.topology.nodes[node_id] if node_id else None

    def add_link(self, a: End, b: End, mtu: int = 0) -> None:
        self._links.append(_PendingLink(a, b, mtu))

    def notify(self, subject: str, message: str) -> None:
        self.notices.append(Notice(subject, message))

    def ends_of(self, source_name: str) -> list[End]:
        """The link ends of a node, as the source names them."""
        return [end for link in self._links for end in (link.a, link.b) if end.node == source_name]

    def build(self) -> Imported:
        ports = self._ports()
        self._shorten_host_names(ports)
        for link in self._links:
            ends = []
            for end in (link.a, link.b):
                node = self.topology.nodes[self._ids[end.node]]
                port = ports[id(end)]
                name = end.interface if node.kind in NAMED_INTERFACES and end.interface != port else ""
                ends.append(Endpoint(node.id, port, Interface(name=name, mac=end.mac, mtu=link.mtu,
                                                              addresses=list(end.addresses))))
            link_id = "--".join(f"{self.topology.nodes[end.node].name}-{end.port}" for end in ends)
            self.topology.links[link_id] = Link(link_id, ends[0], ends[1])
        if self.topology.nodes and not self._placed:
            for node_id, position in layout.layered(self.topology, self.registry).items():
                self.topology.nodes[node_id].position = position
            self.notify("", "the source gives no position for every node: the lab is laid out by role (routers, "
                        "then switches, then hosts)")
        return Imported(self.topology, self.notices)

    def _shorten_host_names(self, ports: dict[int, str]) -> None:
        """Renames a node whose devices in the host (a bridge, its ports, a VM's taps, the host's own ends) would
        pass the kernel's 15 characters once vtopo names them `<lab prefix>-<node>-<port>`."""
        taken = {node.name for node in self.topology.nodes.values()}
        for source_name, node_id in self._ids.items():
            node = self.topology.nodes[node_id]
            kind = self.registry.get(node.kind)
            if kind is None or (kind.role is Role.NAMESPACE and kind.name != "host"):
                continue
            longest = max((len(ports[id(end)]) for end in self.ends_of(source_name)), default=0)
            if len(node.name) + longest + 2 + DEFAULT_PREFIX_LENGTH <= MAX_INTERFACE_NAME:
                continue
            stem = kind.name_stem or kind.name
            old, node.name = node.name, stem if stem not in taken else unique_name(stem, taken)
            taken.add(node.name)
            self.notices = [Notice(f"node {node.name}", notice.message) if notice.subject == f"node {old}" else notice
                            for notice in self.notices]
            self.notify(f"node {node.name}", f"named {old!r} in the source, too long for the names vtopo gives its "
                        f"devices in the host (<lab prefix>-{old}-<port> would pass the kernel's "
                        f"{MAX_INTERFACE_NAME} characters)")

    def _ports(self) -> dict[int, str]:
        """The port of every end (by id of the End): its own name where that is a free port of the kind, else the
        next port that is neither taken nor named by another end of the node."""
        ports: dict[int, str] = {}
        by_node: dict[str, list[End]] = {}
        for link in self._links:
            for end in (link.a, link.b):
                by_node.setdefault(end.node, []).append(end)
        for source_name, ends in by_node.items():
            node = self.topology.nodes[self._ids[source_name]]
            kind = self.registry.get(node.kind)
            assert kind is not None, f"importers make only installed kinds, not {node.kind}"
            spec = kind.ports
            used: set[str] = set()
            wanted = [_as_port(end.interface, spec.prefix, node.kind in NAMED_INTERFACES) for end in ends]
            for end, port in zip(ends, wanted):
                if port and spec.index_of(port) is not None and port not in used:
                    ports[id(end)] = port
                    used.add(port)
            reserved = used | {port for port in wanted if port}
            for end in ends:
                if id(end) not in ports:
                    port = spec.next_free(reserved) or spec.name(spec.first + len(reserved))
                    ports[id(end)] = port
                    reserved.add(port)
        return ports


def _as_port(interface: str, prefix: str, named: bool) -> str:
    """The port an interface name asks for: itself on a namespace (eth1), the number it ends in on a switch or a
    machine (br0's eth3 is p3)."""
    if named:
        return interface
    number = re.search(r"(\d+)$", interface)
    return f"{prefix}{int(number.group(1))}" if number and len(number.group(1)) < 6 else ""


def safe_name(name: str, fallback: str) -> str:
    """`name` made a valid vtopo node name: other characters become '-', and it starts with a letter or digit."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-_")[:MAX_NAME]
    return cleaned if NODE_NAME.fullmatch(cleaned) else re.sub(r"[^A-Za-z0-9_-]+", "-", fallback) or "n"


def is_interface_name(name: str) -> bool:
    return INTERFACE_NAME.fullmatch(name) is not None


RUNS_IMAGE = ", run from that image, which is on this host"
HOST_PROGRAMS = ("; its image is not on this host (`vtopo image load FILE` loads it), so vtopo runs the node as a "
                 "network namespace with this host's programs")
HOST_FRR = "; its image is not on this host (`vtopo image load FILE` loads it), so the router runs this host's FRR"


def image_here(image: str) -> bool:
    """Whether the OCI image an imported node names is on this host for the user importing it: then the node runs
    from it."""
    return bool(image) and resolve(image, os.geteuid()) is not None
