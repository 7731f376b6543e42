"""The stages of an exercise: what the student reads at each step, and the checks that complete it. Plain Python,
loaded with the first lab that has stages."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Stage:
    """One step of an exercise: what the student reads, and the checks (by name) that complete it."""

    title: str
    instructions: str = ""  # Markdown; images relative to the lab's folder
    checks: list[str] = field(default_factory=list)
    checkpoint: str = ""  # the name of the checkpoint the stage starts from, if any
    solution: str = ""  # Markdown, the teacher's: left out of the student's copy
