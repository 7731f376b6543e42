"""Undo commands. Each one only calls Topology methods; composites are built from child commands."""
from __future__ import annotations

import copy
from typing import Any, Iterable

from PySide6.QtGui import QUndoCommand

from vtopo.model.topology import Annotation, Impairment, Interface, Link, Node, Position, Topology


class Command(QUndoCommand):
    """An undo step that may be made of child steps: redo runs them in order, undo in reverse.

    The children live in a Python list rather than in Qt's parent/child tree, so that exactly one side (the
    QUndoStack, for the top-level command) owns the C++ objects.
    """

    def __init__(self, text: str, parent: Command | None = None) -> None:
        super().__init__(text)
        self.children: list[Command] = []
        if parent is not None:
            parent.children.append(self)

    def redo(self) -> None:
        for child in self.children:
            child.redo()

    def undo(self) -> None:
        for child in reversed(self.children):
            child.undo()


class AddNodeCommand(Command):
    def __init__(self, topology: Topology, node: Node, parent: Command | None = None) -> None:
        super().__init__(f"Add {node.name}", parent)
        self._topology = topology
        self._node = node

    def redo(self) -> None:
        self._topology.add_node(self._node)

    def undo(self) -> None:
        self._topology.remove_node(self._node.id)


class AddLinkCommand(Command):
    def __init__(self, topology: Topology, link: Link, parent: Command | None = None) -> None:
        super().__init__(f"Link {topology.describe_link(link)}", parent)
        self._topology = topology
        self._link = link

    def redo(self) -> None:
        self._topology.add_link(self._link)

    def undo(self) -> None:
        self._topology.remove_link(self._link.id)


class RemoveLinkCommand(Command):
    def __init__(self, topology: Topology, link_id: str, parent: Command | None = None) -> None:
        link = topology.links[link_id]
        super().__init__(f"Remove link {topology.describe_link(link)}", parent)
        self._topology = topology
        self._link = link
        self._index = 0

    def redo(self) -> None:
        self._index = list(self._topology.links).index(self._link.id)  # where it is now, just before it goes
        self._topology.remove_link(self._link.id)

    def undo(self) -> None:
        self._topology.add_link(self._link, self._index)


class RemoveNodeCommand(Command):
    """Removes the given links (children, run first), then the node. Undo restores the node, then its links."""

    def __init__(self, topology: Topology, node_id: str, link_ids: Iterable[str],
                 parent: Command | None = None) -> None:
        node = topology.nodes[node_id]
        super().__init__(f"Remove {node.name}", parent)
        self._topology = topology
        self._node = node
        self._index = 0
        for link_id in link_ids:
            RemoveLinkCommand(topology, link_id, self)

    def redo(self) -> None:
        super().redo()
        self._index = list(self._topology.nodes).index(self._node.id)
        self._topology.remove_node(self._node.id)

    def undo(self) -> None:
        self._topology.add_node(self._node, self._index)
        super().undo()


class UpdateNodeCommand(Command):
    """Rename a node and/or replace its settings."""

    def __init__(self, topology: Topology, node_id: str, *, name: str | None = None,
                 settings: dict[str, Any] | None = None, parent: Command | None = None) -> None:
        node = topology.nodes[node_id]
        super().__init__(f"Rename {node.name} to {name}" if name is not None else f"Edit {node.name}", parent)
        self._topology = topology
        self._node_id = node_id
        self._new = (name, copy.deepcopy(settings))
        self._old = (node.name if name is not None else None,
                     copy.deepcopy(node.settings) if settings is not None else None)

    def redo(self) -> None:
        name, settings = self._new
        self._topology.update_node(self._node_id, name=name, settings=copy.deepcopy(settings))

    def undo(self) -> None:
        name, settings = self._old
        self._topology.update_node(self._node_id, name=name, settings=copy.deepcopy(settings))


class MoveNodeCommand(Command):
    def __init__(self, topology: Topology, node_id: str, old: Position, new: Position,
                 parent: Command | None = None) -> None:
        super().__init__("Move", parent)
        self._topology = topology
        self._node_id = node_id
        self._old = Position(old.x, old.y)
        self._new = Position(new.x, new.y)

    def redo(self) -> None:
        self._topology.update_node(self._node_id, position=self._new)

    def undo(self) -> None:
        self._topology.update_node(self._node_id, position=self._old)


class UpdateLinkCommand(Command):
    def __init__(self, topology: Topology, link_id: str, *, a: Interface | None = None, b: Interface | None = None,
                 impairment: Impairment | None = None, parent: Command | None = None) -> None:
        link = topology.links[link_id]
        super().__init__(f"Edit link {topology.describe_link(link)}", parent)
        self._topology = topology
        self._link_id = link_id
        self._new = copy.deepcopy((a, b, impairment))
        self._old = copy.deepcopy((link.a.interface if a is not None else None,
                                   link.b.interface if b is not None else None,
                                   link.impairment if impairment is not None else None))

    def redo(self) -> None:
        a, b, impairment = copy.deepcopy(self._new)
        self._topology.update_link(self._link_id, a=a, b=b, impairment=impairment)

    def undo(self) -> None:
        a, b, impairment = copy.deepcopy(self._old)
        self._topology.update_link(self._link_id, a=a, b=b, impairment=impairment)


class AddAnnotationCommand(Command):
    def __init__(self, topology: Topology, annotation: Annotation, parent: Command | None = None) -> None:
        super().__init__(f"Add {annotation.shape}", parent)
        self._topology = topology
        self._annotation = annotation

    def redo(self) -> None:
        self._topology.add_annotation(self._annotation)

    def undo(self) -> None:
        self._topology.remove_annotation(self._annotation.id)


class RemoveAnnotationCommand(Command):
    def __init__(self, topology: Topology, annotation_id: str, parent: Command | None = None) -> None:
        annotation = topology.annotations[annotation_id]
        super().__init__(f"Remove {annotation.shape}", parent)
        self._topology = topology
        self._annotation = annotation
        self._index = 0

    def redo(self) -> None:
        self._index = list(self._topology.annotations).index(self._annotation.id)
        self._topology.remove_annotation(self._annotation.id)

    def undo(self) -> None:
        self._topology.add_annotation(self._annotation, self._index)


class UpdateAnnotationCommand(Command):
    """Change an annotation's text, position or size; fields left as None are not touched."""

    def __init__(self, topology: Topology, annotation_id: str, *, text: str | None = None,
                 position: Position | None = None, width: float | None = None, height: float | None = None,
                 parent: Command | None = None) -> None:
        annotation = topology.annotations[annotation_id]
        super().__init__("Edit note" if text is not None else "Move", parent)
        self._topology = topology
        self._annotation_id = annotation_id
        self._new = (text, copy.copy(position), width, height)
        self._old = (annotation.text if text is not None else None,
                     copy.copy(annotation.position) if position is not None else None,
                     annotation.width if width is not None else None,
                     annotation.height if height is not None else None)

    def redo(self) -> None:
        self._apply(self._new)

    def undo(self) -> None:
        self._apply(self._old)

    def _apply(self, values: tuple[str | None, Position | None, float | None, float | None]) -> None:
        text, position, width, height = values
        self._topology.update_annotation(self._annotation_id, text=text, position=position, width=width,
                                         height=height)


class UpdateLabCommand(Command):
    def __init__(self, topology: Topology, *, name: str | None = None, notes: str | None = None,
                 parent: Command | None = None) -> None:
        super().__init__("Edit lab", parent)
        self._topology = topology
        self._new = (name, notes)
        self._old = (topology.name if name is not None else None, topology.notes if notes is not None else None)

    def redo(self) -> None:
        self._topology.update_lab(name=self._new[0], notes=self._new[1])

    def undo(self) -> None:
        self._topology.update_lab(name=self._old[0], notes=self._old[1])


def macro(text: str) -> Command:
    """A parent for child commands."""
    return Command(text)
