"""`vtopo save` and Lab ▸ Save running configuration: what the nodes of a running lab have become (a router's running
configuration, a container's addresses and routes), written back into the lab so that the next deploy rebuilds it.

Reading is a plan, as every change to a running lab is (vtopo.lab_operations): a `ReadState` op for each command that shows a
node's state (its kind's `state_commands`), applied through the lab's KernelHost as root (this process, or the agent
for the lab's owner); `vtopo save --explain` is the same ops on a ScriptHost. What the commands print is the lab's
owner's to shape, so root parses none of it: vtopo.saved_states reads it, run as the owner (nobody for root's labs),
and its answer is read as a checkpoint of a lab file is, field by field; the lab with that state must then compile.
The state read is recorded in the lab's record, so that a restarted router comes back with what was saved, and the
journal takes the ops a deploy of the lab so saved makes. Applying it to a lab is pure, and says what changed on each
node, for the designer to show before it writes.
"""
from __future__ import annotations

import difflib
import json
import shlex
import subprocess
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Any

from vtopo import ops as o
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.host.lab_parts import Compiled
from vtopo.host.resolved_labs import ResolvedLabs
from vtopo.host.state import LabRecord, StateStore, deployed_media
from vtopo.kinds.contract import LabContext, NodeContext, NodeKind, SavesState, generated_settings_of
from vtopo.lab_record import consent_of
from vtopo.lab_terms import HostFacts, LabNames
from vtopo.kinds.registry import Registry, installed_kinds
from vtopo.kinds.running import SavedState
from vtopo.model import io, untrusted_json
from vtopo.model.problems import LabError
from vtopo.model.rules import subinterface_name
from vtopo.model.topology import Interface, Topology
from vtopo.lab_operations import LiveChange, OperateError, running_lab
from vtopo.privileges import owner_or_nobody, python_module_as, run_bounded
from vtopo.saved_states import OUTPUT_BYTES, TOO_LARGE, UNREADABLE, WHY_CHARACTERS

READER_SECONDS = 120.0  # resolving a lab of a thousand nodes and reading their state takes a few seconds
READER_MEMORY_BYTES = 2 << 30


@dataclass(frozen=True)
class RunningState:
    """What `read_running` found: each node's state by name, the lab as deployed with it written in (a .vtopo
    document), the file the lab was deployed from ("" when none), and the nodes stopped and links (by id) down."""

    states: dict[str, SavedState]
    document: dict[str, Any]
    source: str
    stopped: list[str] = field(default_factory=list)
    down: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"states": {name: {"settings": state.settings, "addresses": state.addresses}
                           for name, state in self.states.items()},
                "document": self.document, "source": self.source, "stopped": self.stopped, "down": self.down}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunningState:
        """What the agent sent: settings and addresses are checked again when the lab they go into is loaded."""
        states = {str(name): SavedState(dict(value.get("settings", {})),
                                        {str(port): [str(a) for a in addresses]
                                         for port, addresses in value.get("addresses", {}).items()})
                  for name, value in data.get("states", {}).items() if isinstance(value, dict)}
        return cls(states, dict(data.get("document", {})), str(data.get("source", "")),
                   [str(name) for name in data.get("stopped", [])], [str(link) for link in data.get("down", [])])


@dataclass(frozen=True)
class NodeChange:
    """What saving changes on one node: its settings and addresses as text, before and after."""

    node: str
    before: str
    after: str

    def diff(self, before: str = "in the lab", after: str = "running") -> str:
        return "".join(difflib.unified_diff(self.before.splitlines(True), self.after.splitlines(True),
                                            f"{self.node} {before}", f"{self.node} {after}"))


def save_ops(lab: LabContext, stopped: Collection[str]) -> list[o.ReadState]:
    """`vtopo save`'s plan: each command that shows a running node's state, as its kind names them, run inside the
    node. A stopped node has none: its daemons are stopped, and it keeps what the lab says."""
    return [o.ReadState(owner=node.subject, node=node.node.name, command=shlex.join(command),
                        argv=tuple(node.kind.command_in(node, list(command))))
            for node, kind in _saving(lab, stopped) for command in kind.state_commands(node)]


def _saving(lab: LabContext, stopped: Collection[str]) -> list[tuple[NodeContext[Any], SavesState[Any]]]:
    """The nodes whose state `vtopo save` reads, each with its kind: those running, of a kind that keeps one."""
    return [(node, node.kind) for node in lab.nodes.values()
            if isinstance(node.kind, SavesState) and node.node.name not in stopped]


def explain_save(lab: str | LabRecord, store: StateStore | None = None) -> str:
    """The script of what `vtopo save` runs on the lab (the commands that show its nodes' state), changing nothing."""
    with running_lab(lab, store, lowered=False) as running:
        reads = LiveChange()
        reads.add(*save_ops(running.context, running.record.operated().stopped))
        return running.explain(reads, "saving the running state")


def read_running(lab: str | LabRecord, store: StateStore | None = None, labs: ResolvedLabs | None = None
                 ) -> RunningState:
    """Each running node's state that its kind keeps, read by the ops of `save_ops`; the lab's record takes it at
    once, and `labs` (the agent's, as for `running_lab`) the lab with it, resolved."""
    with running_lab(lab, store, labs=labs) as running:
        operated = running.record.operated()
        stopped = operated.stopped
        shown = {(op.node, op.command): running.applier.read_state(op) for op in save_ops(running.context, stopped)}
        states = read_states(running.record, stopped, shown,
                             {node.node.name for node, _ in _saving(running.context, stopped)})
        saved = running.topology.copy()
        apply_state(saved, states, running.context)
        resolved = resolve(saved, installed_kinds(), running.record.facts(), running.record.consent(),
                           running.record.media())
        compiled = Compiled(saved, resolved, compile_plan(resolved))  # a state no lab may hold is refused here
        running.record.write_topology(saved)
        _journal_saved_state(running.record, running.plan.ops, compiled.plan.ops)
        if labs is not None:
            labs.keep(running.record, compiled)
        record = running.record.read()
    return RunningState(states, record["topology"], str(record.get("source") or ""), sorted(stopped),
                        sorted(operated.down))


def _journal_saved_state(record: LabRecord, deployed: list[o.Op], plan: list[o.Op]) -> None:
    """The journal as if the lab with its saved state (whose `plan` it is) had been deployed: the nodes hold that state
    already (a router's configuration, a container's addresses and routes), and status compares the journal with the
    lab as recorded. Only the ops that the saved state changes are swapped."""
    before = set(deployed)
    gone, new = before - set(plan), [op for op in plan if op not in before]
    if gone or new:
        journal = set(record.journal())
        record.replace_in_journal(lambda op: op in gone, [op for op in new if op not in journal])


def read_states(record: LabRecord, stopped: Collection[str], shown: dict[tuple[str, str], str],
                saving: Collection[str]) -> dict[str, SavedState]:
    """The state of each node in `saving` that its kind reads out of what its commands printed (`shown`, by node and
    command), read by vtopo.saved_states as the lab's owner (nobody for root's labs), with no group, no capability
    and no_new_privs. Its answer is read as a lab file's checkpoint is; a node it was not asked of is left out."""
    deployment = record.deployment()  # what the agent gives the lab's owner
    given = {"record": deployment, "media": deployed_media(deployment), "stopped": sorted(stopped),
             "shown": [[node, command, printed] for (node, command), printed in shown.items()]}
    command = python_module_as(*owner_or_nobody(consent_of(deployment).owner.uid), OUTPUT_BYTES, "vtopo.saved_states",
                               memory_bytes=READER_MEMORY_BYTES)
    try:
        printed = run_bounded(command, OUTPUT_BYTES, READER_SECONDS, given=json.dumps(given).encode())
    except subprocess.TimeoutExpired:
        raise OperateError(f"could not read what the nodes of lab {record.name} run: reading it took longer "
                           f"than {READER_SECONDS:.0f} s") from None
    text = printed.output.decode(errors="replace")
    if printed.status == UNREADABLE:
        raise OperateError(_unreadable(text, saving))
    if printed.status == TOO_LARGE or not printed.within_limit:
        raise OperateError(f"could not save what the nodes of lab {record.name} run: it is more than the "
                           f"{OUTPUT_BYTES >> 20} MiB a lab file may hold")
    if printed.status:
        raise OperateError(f"could not read what the nodes of lab {record.name} run: its reader ended with status "
                           f"{printed.status}")
    try:
        checkpoint = io.read_checkpoint(text)
    except LabError as error:
        raise OperateError(f"could not read what the nodes of lab {record.name} run: {error.problems[0]}") from None
    return {name: SavedState(state.settings, state.addresses) for name, state in checkpoint.nodes.items()
            if name in saving}


def _unreadable(text: str, saving: Collection[str]) -> str:
    """The line that says which node printed what its kind does not read, from what vtopo.saved_states said."""
    try:
        said = untrusted_json.parse(text)
    except LabError:
        said = None
    node, why = (said.get("node"), said.get("why")) if isinstance(said, dict) else (None, None)
    if node not in saving or not isinstance(why, str):
        return "could not read what a node of the lab printed: its reader said nothing of use"
    return (f"could not read the state of {node}: what its commands printed is not what its kind reads "
            f"({why[:WHY_CHARACTERS]})")


def apply_state(topology: Topology, states: dict[str, SavedState], lab: LabContext | None = None) -> list[NodeChange]:
    """Write `states` (by node name) into `topology`; what changed, node by node, as its kind compares it with what
    was deployed: a setting left empty ran as the kind generates it (`lab`: the lab in context, by default
    `topology`'s). A node that runs as deployed is left as the lab says."""
    kinds = installed_kinds()
    lab = lab or _context(topology, kinds)
    changes = []
    for name, state in sorted(states.items()):
        node = topology.node_named(name)
        if node is None:
            continue  # removed from the lab since it was deployed
        kind, context = kinds.get(node.kind), lab.nodes.get(node.id)
        generated = generated_settings_of(context) if context is not None else {}
        before = describe(topology, node.id, kind, _as_run(node.settings, generated))
        settings = dict(node.settings)
        for key, value in state.settings.items():
            if value in ("", [], {}):
                settings.pop(key, None)  # the default, which a lab file leaves out
            else:
                settings[key] = value
        ends = [end for link in topology.links_of(node.id) for end in link.ends if end.node == node.id]
        kept = node.settings, [end.interface for end in ends]
        node.settings = settings
        for end in ends:
            end.interface = _with_addresses(end.port, end.interface, state.addresses)
        after = describe(topology, node.id, kind, _as_run(settings, generated))
        if after == before:  # it runs as deployed: the lab stays as it says
            node.settings = kept[0]
            for end, interface in zip(ends, kept[1]):
                end.interface = interface
            continue
        changes.append(NodeChange(name, before, after))
    return changes


def _context(topology: Topology, kinds: Registry) -> LabContext:
    """The lab in context, for what its kinds generate; a lab with errors generates nothing."""
    try:
        return resolve(topology, kinds).valid().lab
    except LabError:
        return LabContext(topology, LabNames(topology.prefix), HostFacts())


def _as_run(settings: dict[str, Any], generated: dict[str, str]) -> dict[str, Any]:
    """A node's settings as its node ran them: a setting left empty as its kind generates it."""
    return {**settings, **{key: text for key, text in generated.items() if not settings.get(key)}}


def _with_addresses(port: str, interface: Interface, addresses: dict[str, list[str]]) -> Interface:
    """The interface of `port` with the addresses read on it and on each of its subinterfaces (PORT.VLAN)."""
    subinterfaces = [replace(sub, addresses=list(addresses.get(subinterface_name(port, sub.vlan), sub.addresses)))
                     for sub in interface.subinterfaces]
    return replace(interface, addresses=list(addresses.get(port, interface.addresses)), subinterfaces=subinterfaces)


def describe(topology: Topology, node_id: str, kind: NodeKind[Any] | None, settings: dict[str, Any]) -> str:
    """A node's settings (as its kind compares them) and its ports' and subinterfaces' addresses as text to compare,
    a multi-line setting (a configuration) line by line."""
    lines = []
    for key, value in sorted(settings.items()):
        value = kind.comparable(key, value) if isinstance(kind, SavesState) else value
        if isinstance(value, str) and "\n" in value:
            lines += [f"{key}:", *(f"  {line}" for line in value.splitlines())]
        else:
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
    for link in topology.links_of(node_id):
        for end in link.ends:
            if end.node == node_id:
                lines.append(f"{end.port}: {', '.join(end.interface.addresses) or 'no address'}")
                lines += [f"{subinterface_name(end.port, sub.vlan)}: {', '.join(sub.addresses) or 'no address'}"
                          for sub in end.interface.subinterfaces]
    return "\n".join(lines) + "\n"
