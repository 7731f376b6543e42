"""A checkpoint: a named state of a running lab kept in its file, for a student to go back to (or a stage to start
from). Plain Python: what `vtopo checkpoint` read from the running lab, and what restoring it puts back."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

UNDO = "before-restore"
"""The checkpoint a restore keeps of the state it replaces, which undoing the restore puts back."""


@dataclass
class NodeState:
    """What a running node had become: the settings its kind keeps (a router's configuration, a container's routes)
    and its ports' addresses, by port."""

    settings: dict[str, Any] = field(default_factory=dict)
    addresses: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Checkpoint:
    """Each running node's state by node name, the nodes that were stopped, the links (by id) that were down, and
    each impaired link's impairment (by id, as a link of the lab file writes it: delay_ms, loss_pct...; a link not
    listed had none)."""

    name: str
    made: str = ""  # when, as ISO 8601 in UTC
    nodes: dict[str, NodeState] = field(default_factory=dict)
    stopped: list[str] = field(default_factory=list)
    down: list[str] = field(default_factory=list)
    impairments: dict[str, dict[str, float]] = field(default_factory=dict)


def named(checkpoints: list[Checkpoint], name: str) -> Checkpoint | None:
    return next((checkpoint for checkpoint in checkpoints if checkpoint.name == name), None)


def keep(checkpoints: list[Checkpoint], checkpoint: Checkpoint) -> list[Checkpoint]:
    """`checkpoints` with `checkpoint` in place of the one of its name, or added last."""
    if named(checkpoints, checkpoint.name) is None:
        return [*checkpoints, checkpoint]
    return [checkpoint if kept.name == checkpoint.name else kept for kept in checkpoints]
