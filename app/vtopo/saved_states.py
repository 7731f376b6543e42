"""What the nodes of a running lab have become, read out of what their state commands printed by a process of no
privilege, for root, who parses none of it (`vtopo save` and checkpoints: vtopo.saving).

What a node prints is its owner's to shape: a router's `show running-config` is text a student typed, and a
container's `ip -j` output is whatever the `ip` of their node prints. Root runs this module as the lab's owner, or as
nobody for root's own labs (no supplementary group, no capability, no_new_privs, at most OUTPUT_BYTES of output), and
hands it on stdin one JSON object of root's: the lab's record, each link's medium as deployed, the nodes stopped, and
what each running node's commands printed. It resolves the lab as the record has it, has each node's kind read its
state (`SavesState.saved_state`), and prints them as one checkpoint's JSON, which root reads as it reads a checkpoint
a lab file holds (vtopo.model.io.read_checkpoint: bounded, field by field):

    python -m vtopo.saved_states < {"record": {...}, "media": {LINK: MEDIUM}, "stopped": [NODE...],
                                    "shown": [[NODE, COMMAND, PRINTED]...]}
    -> {"name": "running", "nodes": {NODE: {"settings": {...}, "addresses": {PORT: [ADDRESS...]}}}}

A node whose printout its kind cannot read ends it with status UNREADABLE and {"node": NODE, "why": TEXT}; states
larger than a lab file may be (OUTPUT_BYTES), with status TOO_LARGE and nothing printed.
"""
from __future__ import annotations

import json
import shlex
import sys
from typing import Any

from vtopo.compile.resolve import resolve
from vtopo.kinds.contract import NodeContext, SavesState
from vtopo.kinds.registry import installed_kinds
from vtopo.kinds.running import SavedState
from vtopo.lab_record import consent_of, facts_of, topology_of
from vtopo.oci_layouts import undumpable

RUNNING = "running"  # the name of the checkpoint this prints
UNREADABLE = 3
TOO_LARGE = 4
OUTPUT_BYTES = 4 << 20  # a lab file's size (vtopo.model.untrusted_json.MAX_BYTES): no saved lab is larger
WHY_CHARACTERS = 200


class Unreadable(Exception):
    """What a node printed that its kind cannot read as its state."""

    def __init__(self, node: str, why: str):
        super().__init__(why)
        self.node, self.why = node, why[:WHY_CHARACTERS]


def states_of(given: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each running node's state that its kind keeps, by node name, from what `given` says its commands printed."""
    record = given["record"]
    lab = resolve(topology_of(record), installed_kinds(), facts_of(record), consent_of(record),
                  given["media"]).valid().this_site
    shown = {(node, command): printed for node, command, printed in given["shown"]}
    stopped = set(given["stopped"])
    states = {}
    for node in lab.nodes.values():
        if isinstance(node.kind, SavesState) and node.node.name not in stopped:
            state = _read(node, node.kind, shown)
            states[node.node.name] = {"settings": state.settings, "addresses": state.addresses}
    return states


def _read(node: NodeContext[Any], kind: SavesState[Any], shown: dict[tuple[str, str], str]) -> SavedState:
    def read(argv: list[str]) -> str:
        printed = shown.get((node.node.name, shlex.join(argv)))
        if printed is None:
            raise LookupError(f"the {node.kind.label} kind reads `{shlex.join(argv)}`, which its state_commands do "
                              "not name: `vtopo save` runs only those")
        return printed

    try:
        return kind.saved_state(node, read)
    except Exception as error:  # pylint: disable=broad-exception-caught  # whatever the kind's reader raised
        raise Unreadable(node.node.name, f"{type(error).__name__}: {error}") from None


def main() -> int:
    undumpable()
    given = json.loads(sys.stdin.buffer.read())
    try:
        answer, status = {"name": RUNNING, "nodes": states_of(given)}, 0
    except Unreadable as unreadable:
        answer, status = {"node": unreadable.node, "why": unreadable.why}, UNREADABLE
    said = json.dumps(answer, ensure_ascii=False).encode()
    if len(said) > OUTPUT_BYTES:
        return TOO_LARGE  # more than a lab file may hold; the limit on what it writes would stop it midway
    sys.stdout.buffer.write(said)
    return status


if __name__ == "__main__":
    sys.exit(main())
