"""A deployed lab's nodes and links against its plan: what `vtopo status` shows of each.

The plan is compiled once from the lab's record; each part's state then comes from two questions asked of the host,
whose answers the caller gives: does what an operation made still exist, and which of a link's interfaces are down.
`vtopo status --verify` answers them by probing the host; the agent's record of a lab answers them from the kernel's
and the processes' events it heard (vtopo.server.live).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from vtopo import ops as o
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import ResolvedLab, resolve, with_impairment
from vtopo.compile.plan import Plan, Step
from vtopo.host import owned_files
from vtopo.host.state import LabRecord, Operated
from vtopo.kinds.contract import LabContext, NodeContext, ServesDhcp, image_of
from vtopo.lab_terms import image_reference
from vtopo.kinds.registry import Registry
from vtopo.model.topology import Impairment, Topology
from vtopo.reports import LabStatus, PartState

INTENDED_STATES = ("running", "stopped", "down")  # a node stopped or a link taken down by the user is as it should be
LINK_ENDS = (o.CreateVeth, o.CreateMacvlan, o.CreateVlan, o.MoveLink, o.CreateTap, o.CreateMacvtap)

Exists = Callable[[o.Op], "bool | None"]
"""Whether what an op made is there now; None for ops that make nothing worth asking about."""


@dataclass(frozen=True)
class Interface:
    """An interface a lab made, in a node's namespace (`netns`) or the host's (None)."""

    netns: str | None
    name: str


def lab_state(applied: int, total: int, parts: list[PartState]) -> str:
    """A lab's state from how many of its plan's `total` operations are `applied` (journaled) and its parts'."""
    if applied < total:
        return f"incomplete (deploy was interrupted at op {applied} of {total})"
    if any(part.state not in INTENDED_STATES for part in parts):
        return "degraded"
    return "running"


def interfaces_of(op: o.Op) -> Iterator[Interface]:
    """The interfaces a link's operation makes (a veth's two ends, a macvlan, a tunnel's end, a tap, ...)."""
    if isinstance(op, o.CreateVeth):
        yield Interface(op.netns, op.name)
        yield Interface(op.peer_netns, op.peer)
    elif isinstance(op, o.MoveLink):
        yield Interface(op.netns, op.new_name)
    elif isinstance(op, (o.CreateMacvlan, o.CreateVlan, o.CreateVxlan)):
        yield Interface(op.netns, op.name)
    elif isinstance(op, (o.CreateTap, o.CreateMacvtap)):
        yield Interface(None, op.name)


def undone_by_removing(op: o.Op) -> Iterator[Interface]:
    """The interfaces whose removal undoes what `op` made: those it makes, a bridge, both sides of a bridge port."""
    yield from interfaces_of(op)
    if isinstance(op, o.CreateBridge):
        yield Interface(None, op.name)
    elif isinstance(op, o.CreateVeth) and op.master:
        yield Interface(None, op.master)
    elif isinstance(op, o.SetMaster):
        yield Interface(None, op.name)
        yield Interface(None, op.master)


@dataclass(frozen=True)
class Compiled:
    """A lab under its prefix, resolved and lowered into its plan: as a deploy compiled it, or from its record."""

    topology: Topology
    resolved: ResolvedLab
    plan: Plan

    @property
    def lab(self) -> LabContext:
        """The lab in context as this site deployed it."""
        return self.resolved.this_site

    def with_impairment(self, link_id: str, impairment: Impairment, ops: list[o.Op]) -> Compiled:
        """The lab as a live change of one link's impairment left it, whose `ops` set it (as a deploy of the lab so
        changed would): its plan takes them instead of the link's impairment before, nothing compiled again."""
        resolved = with_impairment(self.resolved, link_id, impairment)
        topology = resolved.topology if self.topology is self.resolved.topology else replace(
            self.topology, links={**self.topology.links, link_id: resolved.topology.links[link_id]})
        return Compiled(topology, resolved,
                        _impaired(self.plan, f"link {topology.describe_link(topology.links[link_id])}", ops))


def compiled_from(record: LabRecord, kinds: Registry) -> Compiled:
    """The lab of a record, resolved and lowered again as its deploy did it."""
    topology = record.topology()
    resolved = resolve(topology, kinds, record.facts(), record.consent(), record.media())
    return Compiled(topology, resolved, compile_plan(resolved))


def _impaired(plan: Plan, owner: str, ops: list[o.Op]) -> Plan:
    """The plan with link `owner`'s impairment ops replaced by `ops`: one for one where it had as many (one per device
    it impairs), else after the link's last op."""
    at = [i for i, step in enumerate(plan.steps) if isinstance(step.op, o.SetImpairment) and step.op.owner == owner]
    steps = list(plan.steps)
    if len(at) == len(ops):
        for i, op in zip(at, ops):
            steps[i] = replace(steps[i], op=op)
        return replace(plan, steps=steps)
    steps = [step for i, step in enumerate(steps) if i not in at]
    last = max((i for i, step in enumerate(steps) if step.op.owner == owner), default=len(steps) - 1)
    first = 1 + max((step.index for step in plan.steps), default=-1)
    added = [Step(first + number, op, ()) for number, op in enumerate(ops)]
    return replace(plan, steps=steps[:last + 1] + added + steps[last + 1:])


class LabParts:
    """A deployed lab's plan, by the node or link each operation belongs to."""

    def __init__(self, record: LabRecord, kinds: Registry, compiled: Compiled | None = None,
                 applied_whole: bool = False) -> None:
        """`compiled` is what the deploy that made the record compiled, which would be compiled anew from it;
        `applied_whole`, that the record's journal holds its whole plan (that deploy has just ended), which is then
        not read back."""
        self.record = record
        self.stamp = record.stamp()  # which writing of the record the parts are read from: taken first, so that a
        # writing while they are read makes them older than the record
        self.data = record.read()
        self.compiled = compiled or compiled_from(record, kinds)
        self.topology: Topology = self.compiled.topology
        plan, self.lab = self.compiled.plan, self.compiled.lab
        self.ops = plan.ops
        self.applied = set(plan.ops) if applied_whole else set(record.journal())
        self.applied_ops = [op for op in plan.ops if op in self.applied]  # in the plan's order
        self.operated = Operated.of(self.data)  # read once: the record of a lab of thousands of nodes takes a while
        self.by_owner: dict[str, list[o.Op]] = {}
        self._applied_by_owner: dict[str, list[o.Op]] = {}  # each part's state reads them: hashed once, here
        for op in plan.ops:
            self.by_owner.setdefault(op.owner, []).append(op)
        for op in self.applied_ops:
            self._applied_by_owner.setdefault(op.owner, []).append(op)
        self.node_of_netns = {op.name: op.owner.split(" ", 1)[1] for op in plan.ops
                              if isinstance(op, o.CreateNamespace) and op.owner.startswith("node ")}
        self.link_owners = {link.id: f"link {self.topology.describe_link(link)}" for link in self.topology.links.values()}
        self.link_of_owner = {owner: link_id for link_id, owner in self.link_owners.items()}
        self.node_owners = {node.name: f"node {node.name}" for node in self.topology.nodes.values()}
        self.node_ids = {node.name: node.id for node in self.topology.nodes.values()}

    def holds(self, record: LabRecord) -> bool:
        """Whether these are the parts of `record` as it is written now (another process may have written it since,
        or destroyed the lab and deployed another under its prefix)."""
        return self.record.directory == record.directory and self.stamp == record.stamp()

    @cached_property
    def undone_by(self) -> dict[Interface, list[o.Op]]:
        """What removing each interface undoes of the applied operations (see undone_by_removing): the agent's record
        of the lab watches these interfaces and reads it for each that changes."""
        undone: dict[Interface, list[o.Op]] = {}
        for op in self.applied_ops:
            for interface in undone_by_removing(op):
                undone.setdefault(interface, []).append(op)
        return undone

    def reread_operated(self) -> None:
        """What the user stopped or took down, as the record says now (a node or link request changed it)."""
        self.operated = self.record.operated()

    def interfaces(self, owner: str) -> list[Interface]:
        """The applied interfaces of a link (its owner, "link A -- B")."""
        return [interface for op in self._applied_by_owner.get(owner, []) for interface in interfaces_of(op)]

    def end_name(self, interface: Interface) -> str:
        """An interface as a user names it: NODE:IFNAME in a node, the device's name on the host."""
        node = self.node_of_netns.get(interface.netns or "")
        return f"{node}:{interface.name}" if node else interface.name

    def part(self, owner: str, exists: Exists, is_down: Callable[[Interface], bool]) -> PartState:
        """The state of one node or link ("node NAME", "link A -- B")."""
        kind, name = owner.split(" ", 1)
        if kind == "node":
            intended = "stopped" if name in self.operated.stopped else "running"
        else:
            intended = "down" if self.link_of_owner.get(owner) in self.operated.down else "running"
        ops, applied = self.by_owner.get(owner, []), self._applied_by_owner.get(owner, [])
        stopped = intended == "stopped"  # its processes are meant to be gone
        missing = [op.summary() for op in applied if not (stopped and isinstance(op, (o.StartProcess, o.StartDomain)))
                   and exists(op) is False]
        not_applied = len(ops) - len(applied)
        if missing:
            return PartState(name, "degraded", "; missing: " + ", ".join(missing))
        if not_applied:
            return PartState(name, "incomplete", f"; {not_applied} of its {len(ops)} operations were not applied")
        if kind == "link" and intended == "running":
            down = [self.end_name(interface) for interface in self.interfaces(owner) if is_down(interface)]
            if down:
                return PartState(name, "down", f"; {', '.join(down)} {'is' if len(down) == 1 else 'are'} down or "
                                               "without carrier")
        if kind == "node":
            return _with_image(PartState(name, intended), self.lab.nodes.get(self.node_ids.get(name, "")))
        return PartState(name, intended)

    def status(self, exists: Exists, is_down: Callable[[Interface], bool]) -> LabStatus:
        """Every node's and link's state, and the lab's."""
        nodes = [self.part(owner, exists, is_down) for owner in self.node_owners.values()]
        links = [self.part(owner, exists, is_down) for owner in self.link_owners.values()]
        return self.with_details(self.status_of(nodes, links))

    def with_details(self, status: LabStatus) -> LabStatus:
        """`status` with what each running node's kind says of it now (see `detailed`)."""
        return replace(status, nodes=[self.detailed(state) for state in status.nodes])

    def detailed(self, state: PartState) -> PartState:
        """A node's state with what its kind says of the running node now (a DHCP server's leases), read from the
        node's own files without following a symlink, each time a status is read (the agent watches those files:
        `detail_files`)."""
        node = self.lab.nodes.get(self.node_ids.get(state.name, ""))
        if state.state != "running" or node is None or not isinstance(node.kind, ServesDhcp):
            return state
        detail = node.kind.status_detail(node, _read_lab_file)
        return replace(state, detail=state.detail + detail) if detail else state

    def detail_files(self) -> list[tuple[str, str]]:
        """(node owner, path) of each file a node's status detail is read from, found by reading it once."""
        files: list[tuple[str, str]] = []
        for name, owner in self.node_owners.items():
            node = self.lab.nodes.get(self.node_ids.get(name, ""))
            if node is not None and isinstance(node.kind, ServesDhcp):
                def noted(path: str, limit: int, owner: str = owner) -> str:
                    files.append((owner, path))
                    return _read_lab_file(path, limit)

                node.kind.status_detail(node, noted)
        return files

    def status_of(self, nodes: list[PartState], links: list[PartState]) -> LabStatus:
        state = lab_state(len(self.applied_ops), len(self.ops), nodes + links)
        return LabStatus(self.data["name"], self.record.prefix, self.data.get("source", ""), self.data.get("owner", 0),
                         state, nodes, links, self.data["topology"])


def _with_image(state: PartState, node: NodeContext[Any] | None) -> PartState:
    """A running node's state with the image it runs from; as it is for a node another site runs (None), whose own
    status says it."""
    if state.state != "running" or node is None:
        return state
    image = image_of(node)
    found = node.facts.oci_image(image.reference) if image is not None else None
    return replace(state, detail=state.detail + f"; image {image_reference(image.reference)}@{found[0]}") \
        if image is not None and found else state


def _read_lab_file(path: str, limit: int) -> str:
    try:
        return owned_files.read_small_file(path, limit)
    except OSError:
        return ""
