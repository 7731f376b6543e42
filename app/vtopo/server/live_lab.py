"""One deployed lab in the agent's record (vtopo.server.live): its parts, and what the host's events said of them.

Made with the first lab the agent reads, from the lab's parts (its plan compiled again): a record of no lab needs
neither the ops nor the compiler.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from vtopo import ops as o
from vtopo.host.heard import DetailChanged, DomainEnded, Heard, InterfaceChanged, ProcessEnded, Unheard
from vtopo.host.lab_parts import Interface, LabParts
from vtopo.reports import LabStatus, PartState

if TYPE_CHECKING:
    from vtopo.host.watch import Watcher


class LiveLab:
    """One lab's parts and what the host's events say of them."""

    def __init__(self, parts: LabParts, gone: set[o.Op], down: set[Interface]) -> None:
        self.parts = parts
        self.gone = gone  # applied operations whose work was heard to be gone
        self.gone_namespaces: set[str] = set()
        self.down = down  # interfaces heard to be down or without carrier
        self.unheard = False  # whether the watcher missed events of it: its next renewal probes the host
        self.heard = 0  # how many events it has taken in: a probe made meanwhile may predate one of them
        self.undone_by = parts.undone_by
        self.states = {owner: self._part(owner) for owner in [*parts.node_owners.values(), *parts.link_owners.values()]}
        self.details = {owner: parts.detailed(self.states[owner]).detail  # by node owner: as last told (`recount`)
                        for owner in parts.node_owners.values()}
        self.status = self._status()

    def agrees(self, found: Found) -> bool:
        """Whether a probe that `found` the lab so finds it as this record has it, and no event of it was missed."""
        gone, down = found
        return not self.unheard and not self.gone_namespaces and self.gone == gone and self.down == down

    def _exists(self, op: o.Op) -> bool | None:
        netns = getattr(op, "netns", None)
        if op in self.gone or (netns is not None and netns in self.gone_namespaces):
            return False
        return not (isinstance(op, o.CreateNamespace) and op.name in self.gone_namespaces)

    def _part(self, owner: str) -> PartState:
        return self.parts.part(owner, self._exists, lambda interface: interface in self.down)

    def _status(self) -> LabStatus:
        nodes = [self.states[owner] for owner in self.parts.node_owners.values()]
        links = [self.states[owner] for owner in self.parts.link_owners.values()]
        return self.parts.status_of(nodes, links)

    def hear(self, what: Heard) -> list[str]:
        """Take in an event; the owners ("node c1", "link c1 -- s1") it may have changed. An interface heard as it was
        already held to be (up, after a deploy: the kernel tells each carrier up to a second late) changes nothing, and
        is not counted."""
        if isinstance(what, InterfaceChanged) and what.up is not None and what.up == (what.interface not in self.down):
            return []
        self.heard += 1
        if isinstance(what, DetailChanged):
            return [what.owner]
        if isinstance(what, InterfaceChanged):
            undone = self.undone_by.get(what.interface, [])
            if what.up is None:
                self.gone.update(undone)
            elif what.up:
                self.down.discard(what.interface)
            else:
                self.down.add(what.interface)
            return [op.owner for op in undone]
        if isinstance(what, (ProcessEnded, DomainEnded)):
            self.gone.add(what.op)
            return [what.op.owner]
        if isinstance(what, Unheard):
            self.unheard = True
            return []
        self.gone_namespaces.add(what.netns)
        return list(self.states)

    def recount(self, owners: list[str]) -> tuple[list[PartState], list[PartState]]:
        """Each owner's state again: the nodes and links whose state changed (a node's with its detail as read now,
        which is compared too)."""
        nodes: list[PartState] = []
        links: list[PartState] = []
        for owner in owners:
            if owner not in self.states:
                continue
            state = self._part(owner)
            if owner.startswith("node "):
                detailed = self.parts.detailed(state)
                if state != self.states[owner] or detailed.detail != self.details.get(owner):
                    self.details[owner] = detailed.detail
                    nodes.append(detailed)
            elif state != self.states[owner]:
                links.append(state)
            self.states[owner] = state
        if nodes or links:
            self.status = self._status()
        return nodes, links

    def keep_heard(self, before: LiveLab) -> None:
        """After the agent changed the lab, what was heard of the parts the change kept: interfaces down, and work
        gone other than processes and VMs (the change may have started them again)."""
        down = before.down & set(self.undone_by)
        gone = {op for op in before.gone if not isinstance(op, (o.StartProcess, o.StartDomain))} & self.parts.applied
        changed = {op.owner for interface in down ^ self.down for op in self.undone_by.get(interface, [])}
        changed |= {op.owner for op in gone - self.gone}
        self.down, self.gone = down, self.gone | gone
        self.recount([owner for owner in self.states if owner in changed])


Found = tuple[set[o.Op], set[Interface]]
"""What a probe of the host found of a lab: its applied operations whose work is gone, its links' interfaces down."""


def probed(parts: LabParts) -> Found:
    """The lab's parts as the host has them now: each applied operation's work looked for, each link's interfaces
    asked whether they are up."""
    from vtopo.host.applier import Applier

    applier = Applier(parts.record.prefix)
    try:
        gone = {op for op in parts.applied_ops if applier.exists(op) is False}
        down = {interface for owner in parts.link_owners.values() for interface in parts.interfaces(owner)
                if not applier.up(interface.name, interface.netns)}
    finally:
        applier.close()
    return gone, down


def watched(parts: LabParts, watcher: Watcher, probe: bool, found: Found | None = None) -> LiveLab:
    """A lab's record, watched from now on: its parts as the probe that `found` them (made before, outside whatever
    the caller holds) or a probe now finds them, or as its plan made them."""
    applied = parts.applied_ops
    ended = watcher.watch(parts.data["name"], set(parts.undone_by),
                          [op.name for op in applied if isinstance(op, o.CreateNamespace)],
                          [op for op in applied if isinstance(op, o.StartProcess)], parts.detail_files(),
                          [op for op in applied if isinstance(op, o.StartDomain)])
    if found is not None:  # what ended between that probe and the watch is gone too
        gone, down = found
        return LiveLab(parts, gone | set(ended), down)
    if not probe:
        return LiveLab(parts, set(ended), set())
    return LiveLab(parts, *probed(parts))
