"""Undo commands. Each one only calls Topology methods; composites are built from child commands."""
from __future__ import annotations

import copy
from typing import Any, Callable, Iterable, Mapping

from PySide6.QtGui import QUndoCommand

from vtopo.model.topology import Annotation, Link, Node, Topology


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


class SetFieldsCommand(Command):
    """Set some fields of one model object through its update method (Topology.update_node bound to an id, say);
    undo sets the old values back. The one command for every edit that changes values rather than structure."""

    def __init__(self, text: str, update: Callable[..., None], old: Mapping[str, Any], new: Mapping[str, Any],
                 parent: Command | None = None) -> None:
        super().__init__(text, parent)
        self._update = update
        self._old = copy.deepcopy(dict(old))
        self._new = copy.deepcopy(dict(new))

    def redo(self) -> None:
        self._update(**copy.deepcopy(self._new))

    def undo(self) -> None:
        self._update(**copy.deepcopy(self._old))


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


def macro(text: str) -> Command:
    """A parent for child commands."""
    return Command(text)
