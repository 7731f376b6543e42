"""The stages of an exercise: which one a user is at, the checks that complete it, and when they may go on.

The current stage is the user's, not the lab's: it is kept in the user's data directory (vtopo.user_data), one small
file per lab name, so that a lab file handed out, or shared by a class, never changes as a student works through it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from vtopo import user_data
from vtopo.checks.engine import Outcome
from vtopo.checks.spec import TypedCheck
from vtopo.model.stages import Stage
from vtopo.model.io import write_atomically
from vtopo.model.topology import Topology


def _record(lab_name: str) -> Path:
    return user_data.folder(user_data.STAGES) / f"{user_data.file_stem(lab_name)}.stage.json"


def current_stage(topology: Topology) -> int:
    """The stage (from 1) the user is at in this lab: 1 when none was recorded, or when the record no longer fits."""
    try:
        number = json.loads(_record(topology.name).read_text(encoding="utf-8")).get("stage")
    except (OSError, ValueError, AttributeError):
        return 1
    fits = isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= len(topology.stages)
    return number if fits else 1


def record_stage(topology: Topology, number: int) -> None:
    if not 1 <= number <= len(topology.stages):
        raise ValueError(f"lab {topology.name} has stages 1 to {len(topology.stages)}, not {number}")
    target = _record(topology.name)
    user_data.make_directory(target.parent)
    write_atomically(target, json.dumps({"lab": topology.name, "stage": number}) + "\n", user_data.PRIVATE_FILE)


def checks_of(stage: Stage, checks: list[TypedCheck]) -> list[TypedCheck]:
    """The typed checks that complete `stage`, in the stage's order: those the student sees. A hidden check is the
    teacher's, for grading; it neither shows nor holds the student back."""
    by_name = {check.check.name: check for check in checks}
    return [by_name[name] for name in stage.checks if name in by_name and not by_name[name].check.hidden]


@dataclass(frozen=True)
class StageState:
    """A stage and its checks' outcomes: complete when every one of them passes."""

    number: int
    stage: Stage
    outcomes: list[Outcome]

    @property
    def complete(self) -> bool:
        return all(outcome.passed for outcome in self.outcomes)

    @property
    def failing(self) -> list[str]:
        return [outcome.check.check.name for outcome in self.outcomes if not outcome.passed]


def passed_on_the_way(current: int, target: int) -> list[int]:
    """The stages a move from stage `current` to stage `target` leaves behind as done: those from `current` up to
    `target`'s; going back leaves none."""
    return list(range(current, target))
