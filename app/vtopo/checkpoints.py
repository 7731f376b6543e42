"""`vtopo checkpoint`, Lab ▸ Checkpoints and a stage that starts from one: a named state of a running lab, kept in
its file, and restoring it on the running lab by changing only what differs.

Taking one reads what `vtopo save` reads (`vtopo.saving.read_running`: each router's running configuration, each
container's addresses and routes), with the nodes stopped, the links down and each link's impairment; the client
writes it into the lab's file, as the user. Restoring runs as root (this process, or the agent for the lab's owner),
through the paths every other change of a running lab takes:

1. a node stopped now that ran then is started (`vtopo.lab_operations`);
2. the running state is read again, and the nodes whose state differs (as `vtopo save` compares it) get the
   checkpoint's through `deploy --update`, which applies only the operations that change. A router's daemons take a
   configuration by adding it to what they run (`vtysh -b`), which would keep a line the checkpoint does not have,
   so each router whose configuration differs is then restarted with it, inside its node as every router loads its
   configuration; the other nodes' daemons run on untouched;
3. a node running now that was stopped then is stopped, each link taken down or up as it was, and each impairment
   set as it was, live.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from typing import Any, Callable

from vtopo import ops as o
from vtopo.host.resolved_labs import ResolvedLabs
from vtopo.host.state import LabRecord
from vtopo.kinds.running import SavedState
from vtopo.model.checkpoints import Checkpoint, NodeState
from vtopo.model.impairment_change import ImpairmentChange
from vtopo.model.topology import Endpoint, Impairment, Topology
from vtopo.lab_operations import (describe_impairment, restart_node, running_lab, set_link_impairment, set_link_state,
                           start_node, stop_node)
from vtopo.reports import DeployReport
from vtopo.saving import NodeChange, RunningState, apply_state, read_running

Update = Callable[[Topology], DeployReport]
"""How the lab takes an edited topology: `deploy --update` as its owner may (their quotas, the lab's consent)."""


def checkpoint_of(name: str, running: RunningState) -> Checkpoint:
    """The checkpoint `name` of what `read_running` found, made now."""
    links = running.document.get("links", [])
    impairments = {str(link["id"]): dict(link["impairment"]) for link in links
                   if isinstance(link, dict) and isinstance(link.get("impairment"), dict) and "id" in link}
    made = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Checkpoint(name, made, {node: NodeState(dict(state.settings), dict(state.addresses))
                                   for node, state in running.states.items()},
                      sorted(running.stopped), sorted(running.down), impairments)


@dataclass
class Restored:
    """What restoring a checkpoint changed (or, explained, would change): a line for each node and link, and the
    names of the nodes and links (as `NODE:PORT-NODE:PORT`) it changed."""

    lines: list[str] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, list[str]]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Restored:
        return cls(**{f.name: [str(item) for item in data.get(f.name, [])] for f in fields(cls)})

    def said(self, lab: str, checkpoint: str, explain: bool) -> str:
        if not (self.nodes or self.links):
            return f"lab {lab} is as checkpoint {checkpoint} has it: nothing to restore"
        verb = "restoring would change" if explain else "restored"
        return "\n".join([*self.lines, f"{verb} {len(self.nodes)} node(s) and {len(self.links)} link(s) of lab "
                                      f"{lab} to checkpoint {checkpoint}"])


def restore(record: LabRecord, checkpoint: Checkpoint, update: Update, explain: bool = False,
            labs: ResolvedLabs | None = None) -> Restored:
    """Put the running lab of `record` back as `checkpoint` has it, changing only what differs; with `explain`, say
    what that would change and change nothing. `labs` (the agent's) hold the lab resolved, for each step to read
    (vtopo.lab_operations.running_lab): without, each step resolves it again."""
    restored = Restored()
    topology = record.topology()
    names = {node.name for node in topology.nodes.values()}
    gone = sorted(({*checkpoint.nodes, *checkpoint.stopped} - names))
    if gone:
        restored.lines.append(f"not in the lab any more, left out: {', '.join(gone)}")
    stopped, wanted_stopped = record.operated().stopped, set(checkpoint.stopped) & names
    for name in sorted(stopped - wanted_stopped):
        _node(restored, name, "start", explain, lambda node: start_node(record, node, labs=labs))
    _restore_states(record, checkpoint, update, explain, restored, labs)
    for name in sorted(wanted_stopped - stopped):
        _node(restored, name, "stop", explain, lambda node: stop_node(record, node, labs=labs))
    _restore_links(record, checkpoint, explain, restored, labs)
    return restored


def _node(restored: Restored, name: str, verb: str, explain: bool, act: Callable[[str], str]) -> None:
    restored.lines.append(f"{name}: would {verb}" if explain else act(name).splitlines()[0])
    restored.nodes.append(name)


def _restore_states(record: LabRecord, checkpoint: Checkpoint, update: Update, explain: bool,
                    restored: Restored, labs: ResolvedLabs | None) -> None:
    """Each running node whose state differs from the checkpoint's gets it (see the module's docstring)."""
    live = read_running(record, labs=labs)
    topology = record.topology()
    states = {name: SavedState(state.settings, state.addresses) for name, state in checkpoint.nodes.items()
              if name in live.states}
    changes = apply_state(topology, states)
    if not changes:
        return
    if not explain:
        restored.lines += [f"deploy --update: {notice}" for notice in update(topology).notices]
    with running_lab(record, labs=labs) as running:
        reloaded = {change.node for change in changes if any(
            isinstance(op, o.LoadConfig) for op in running.processes_of(running.node(change.node)))}
    for change in changes:
        restart = change.node in reloaded
        if restart and not explain:
            restart_node(record, change.node, labs=labs)
        restored.lines.append(_node_change(change, checkpoint.name, restart, explain))
        restored.nodes.append(change.node)


def _node_change(change: NodeChange, checkpoint: str, restart: bool, explain: bool) -> str:
    how = "restarting its daemons with it" if restart else "changing only what differs"
    verb = "would take" if explain else "took"
    diff = change.diff("running", f"in checkpoint {checkpoint}").rstrip()
    return f"{change.node} {verb} the checkpoint's state, {how}:\n{diff}"


def _restore_links(record: LabRecord, checkpoint: Checkpoint, explain: bool, restored: Restored,
                   labs: ResolvedLabs | None) -> None:
    topology = record.topology()
    down = record.operated().down
    for link in topology.links.values():
        a, b = (_end(topology, end) for end in link.ends)
        name = f"{a}-{b}"
        wanted_down = link.id in checkpoint.down
        if (link.id in down) != wanted_down:
            verb = "down" if wanted_down else "up"
            restored.lines.append(f"link {name}: would go {verb}" if explain else
                                  set_link_state(record, a, b, up=not wanted_down, labs=labs))
            restored.links.append(name)
        impairment = Impairment(**checkpoint.impairments.get(link.id, {}))
        if impairment != link.impairment:
            restored.lines.append(f"link {name}: would have {describe_impairment(impairment)}" if explain else
                                  set_link_impairment(record, a, b, ImpairmentChange.to(impairment), labs=labs))
            if name not in restored.links:
                restored.links.append(name)


def _end(topology: Topology, end: Endpoint) -> str:
    return f"{topology.nodes[end.node].name}:{end.port}"
