"""`vtopo save` and Lab ▸ Save running configuration: what the nodes of a running lab have become (a router's running
configuration, a container's addresses and routes), written back into the lab so that the next deploy rebuilds it.

Reading happens as root (this process, or the agent for the lab's owner) and also records the state in the lab's
record, so that a restarted router comes back with what was saved. Applying it to a lab is pure, and says what
changed on each node, for the designer to show before it writes.
"""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, replace
from typing import Any

from vtopo import ops as o
from vtopo.compile.compiler import compile_lab
from vtopo.host import processes
from vtopo.host.state import LabRecord, StateStore
from vtopo.kinds.contract import NodeContext, SavedState
from vtopo.kinds.registry import installed_kinds
from vtopo.model import io
from vtopo.model.topology import Interface, Topology, subinterface_name
from vtopo.operate import OperateError, running_lab

READ_SECONDS = 30.0


@dataclass(frozen=True)
class RunningState:
    """What `read_running` found: each node's state by name, the lab as deployed with it written in (a .vtopo
    document), and the file the lab was deployed from ("" when none)."""

    states: dict[str, SavedState]
    document: dict[str, Any]
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"states": {name: {"settings": state.settings, "addresses": state.addresses}
                           for name, state in self.states.items()},
                "document": self.document, "source": self.source}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunningState:
        """What the agent sent: settings and addresses are checked again when the lab they go into is loaded."""
        states = {str(name): SavedState(dict(value.get("settings", {})),
                                        {str(port): [str(a) for a in addresses]
                                         for port, addresses in value.get("addresses", {}).items()})
                  for name, value in data.get("states", {}).items() if isinstance(value, dict)}
        return cls(states, dict(data.get("document", {})), str(data.get("source", "")))


@dataclass(frozen=True)
class NodeChange:
    """What saving changes on one node: its settings and addresses as text, before and after."""

    node: str
    before: str
    after: str

    def diff(self) -> str:
        return "".join(difflib.unified_diff(self.before.splitlines(True), self.after.splitlines(True),
                                            f"{self.node} in the lab", f"{self.node} running"))


def read_running(lab: str | LabRecord, store: StateStore | None = None) -> RunningState:
    """Each running node's state that its kind keeps; the lab's record takes it at once."""
    with running_lab(lab, store) as running:
        stopped = running.record.operated().stopped
        states = {}
        for node in running.context.nodes.values():
            if node.node.name in stopped:
                continue  # its daemons are stopped: it keeps what the lab says
            state = node.kind.saved_state(node, _reader(node))
            if state is not None:
                states[node.node.name] = state
        saved = running.topology.copy()
        apply_state(saved, states)
        record = running.record.read()
        running.record.write({**record, "topology": io.to_document(saved)})
        _journal_saved_state(running.record, running.plan.ops, saved)
    return RunningState(states, io.to_document(saved), str(record.get("source") or ""))


def _journal_saved_state(record: LabRecord, deployed: list[o.Op], saved: Topology) -> None:
    """The journal as if the lab with its saved state had been deployed: the nodes hold that state already (a
    router's configuration, a container's addresses and routes), and status compares the journal with the lab as
    recorded. Only the ops that the saved state changes are swapped."""
    plan = compile_lab(saved, installed_kinds(), record.facts(), record.consent()).ops
    before = set(deployed)
    gone, new = before - set(plan), [op for op in plan if op not in before]
    if gone or new:
        journal = set(record.journal())
        record.replace_in_journal(lambda op: op in gone, [op for op in new if op not in journal])


def _reader(node: NodeContext[Any]) -> Any:
    def read(argv: list[str]) -> str:
        try:
            return processes.run_command(node.kind.command_in(node, argv), READ_SECONDS)
        except processes.CommandFailed as failure:
            raise OperateError(f"cannot read the running state of {node.node.name}: `{' '.join(argv)}` {failure}") \
                from None

    return read


def apply_state(topology: Topology, states: dict[str, SavedState]) -> list[NodeChange]:
    """Write `states` (by node name) into `topology`; what changed, node by node (nodes that did not change are left
    out)."""
    changes = []
    for name, state in sorted(states.items()):
        node = topology.node_named(name)
        if node is None:
            continue  # removed from the lab since it was deployed
        before = describe(topology, node.id)
        settings = dict(node.settings)
        for key, value in state.settings.items():
            if value in ("", [], {}):
                settings.pop(key, None)  # the default, which a lab file leaves out
            else:
                settings[key] = value
        node.settings = settings
        for link in topology.links_of(node.id):
            for end in link.ends:
                if end.node == node.id:
                    end.interface = _with_addresses(end.port, end.interface, state.addresses)
        after = describe(topology, node.id)
        if after != before:
            changes.append(NodeChange(name, before, after))
    return changes


def _with_addresses(port: str, interface: Interface, addresses: dict[str, list[str]]) -> Interface:
    """The interface of `port` with the addresses read on it and on each of its subinterfaces (PORT.VLAN)."""
    subinterfaces = [replace(sub, addresses=list(addresses.get(subinterface_name(port, sub.vlan), sub.addresses)))
                     for sub in interface.subinterfaces]
    return replace(interface, addresses=list(addresses.get(port, interface.addresses)), subinterfaces=subinterfaces)


def describe(topology: Topology, node_id: str) -> str:
    """A node's settings and port addresses as text to compare, a multi-line setting (a configuration) as it is."""
    node = topology.nodes[node_id]
    lines = []
    for key, value in sorted(node.settings.items()):
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
