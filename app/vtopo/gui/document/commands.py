"""Undo commands. Each one only calls Topology methods; composites are built from child commands."""
from __future__ import annotations

import copy
from dataclasses import dataclass
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


Part = Node | Link | Annotation


@dataclass(frozen=True)
class _Kind:
    """How a topology holds one kind of part, and how an undo step names it."""

    collection: Callable[[Topology], Mapping[str, Part]]
    add: Callable[[Topology, Any, int | None], None]
    remove: Callable[[Topology, str], object]
    adding: Callable[[Topology, Any], str]
    removing: Callable[[Topology, Any], str]


_KINDS: dict[type, _Kind] = {
    Node: _Kind(lambda t: t.nodes, Topology.add_node, Topology.remove_node,
                lambda _, node: f"Add {node.name}", lambda _, node: f"Remove {node.name}"),
    Link: _Kind(lambda t: t.links, Topology.add_link, Topology.remove_link,
                lambda t, link: f"Link {t.describe_link(link)}",
                lambda t, link: f"Remove link {t.describe_link(link)}"),
    Annotation: _Kind(lambda t: t.annotations, Topology.add_annotation, Topology.remove_annotation,
                      lambda _, note: f"Add {note.shape}", lambda _, note: f"Remove {note.shape}"),
}


class AddCommand(Command):
    """Adds a node, a link or an annotation at the end; undo removes it."""

    def __init__(self, topology: Topology, part: Part, parent: Command | None = None) -> None:
        self._kind = _KINDS[type(part)]
        super().__init__(self._kind.adding(topology, part), parent)
        self._topology = topology
        self._part = part

    def redo(self) -> None:
        self._kind.add(self._topology, self._part, None)

    def undo(self) -> None:
        self._kind.remove(self._topology, self._part.id)


class RemoveCommand(Command):
    """Removes a node, a link or an annotation, after its child steps; undo puts it back where it was, then
    undoes the children."""

    def __init__(self, topology: Topology, part: Part, parent: Command | None = None) -> None:
        self._kind = _KINDS[type(part)]
        super().__init__(self._kind.removing(topology, part), parent)
        self._topology = topology
        self._part = part
        self._index = 0

    def redo(self) -> None:
        super().redo()
        self._index = list(self._kind.collection(self._topology)).index(self._part.id)  # where it is just before
        self._kind.remove(self._topology, self._part.id)

    def undo(self) -> None:
        self._kind.add(self._topology, self._part, self._index)
        super().undo()


def remove_node(topology: Topology, node_id: str, link_ids: Iterable[str], parent: Command | None = None) -> Command:
    """Removes the given links (children, run first), then the node. Undo restores the node, then its links."""
    command = RemoveCommand(topology, topology.nodes[node_id], parent)
    for link_id in link_ids:
        RemoveCommand(topology, topology.links[link_id], command)
    return command


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

    def absorb(self, later: SetFieldsCommand) -> None:
        """Take a later edit of the same fields into this one: undo still goes back to before this one."""
        self._new = later._new


class Macro(Command):
    """A parent for child commands, whose edits the topology's views hear as made together."""

    def __init__(self, text: str, topology: Topology) -> None:
        super().__init__(text)
        self._topology = topology

    def redo(self) -> None:
        with self._topology.edits_together():
            super().redo()

    def undo(self) -> None:
        with self._topology.edits_together():
            super().undo()


class MergingMacro(Macro):
    """A macro of SetFieldsCommands that absorbs the next one of the same kind over the same subjects, so that a
    burst of arrow-key nudges is one undo step."""

    def __init__(self, text: str, topology: Topology, merge_id: int, subjects: frozenset[str]) -> None:
        super().__init__(text, topology)
        self._merge_id = merge_id
        self._subjects = subjects

    def id(self) -> int:
        return self._merge_id

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, MergingMacro) or other._subjects != self._subjects \
                or len(other.children) != len(self.children):
            return False
        for mine, theirs in zip(self.children, other.children):
            if not isinstance(mine, SetFieldsCommand) or not isinstance(theirs, SetFieldsCommand):
                return False
            mine.absorb(theirs)
        return True
