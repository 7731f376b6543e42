"""What a lab expects of itself: named checks, the stages of an exercise, and the measurement matrix of its
experiment. Plain Python.

The parameters of a check and the options of a test stay as the file gave them; the check types and the
measurement tools validate them, as node kinds validate their settings.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Check:
    """One expectation, e.g. "h1 reaches h3", with the words a student reads when it fails."""

    name: str
    type: str
    params: dict[str, Any] = field(default_factory=dict)
    explain: str = ""
    hidden: bool = False
    """The teacher's: graded, but left out of the student's copy."""


@dataclass
class Stage:
    """One step of an exercise: what the student reads, and the checks (by name) that complete it."""

    title: str
    instructions: str = ""  # Markdown; images relative to the lab's folder
    checks: list[str] = field(default_factory=list)
    checkpoint: str = ""  # the name of the checkpoint the stage starts from, if any
    solution: str = ""  # Markdown, the teacher's: left out of the student's copy


@dataclass
class Pair:
    """Two nodes a measurement runs between: the source runs the client, the destination answers."""

    name: str
    source: str
    destination: str


@dataclass
class Test:
    """One measurement, run on every pair: a tool (iperf, ping, rr) and its options."""

    name: str
    tool: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class Comparison:
    """A ratio to report: the mean of one cell ("pair/test") over the mean of another."""

    name: str
    cell: str
    versus: str
    published: str = ""
    """The figure the reference experiment published for this comparison, printed beside the one measured."""


@dataclass
class Experiment:
    """A matrix of measurements: every test on every pair, repeated, after warm-up runs that are not kept."""

    pairs: list[Pair] = field(default_factory=list)
    tests: list[Test] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    repeats: int = 3
    warmup: int = 0

    @property
    def empty(self) -> bool:
        return not (self.pairs or self.tests)

    def cells(self) -> list[tuple[Pair, Test]]:
        return [(pair, test) for pair in self.pairs for test in self.tests]


def cell_name(pair: Pair, test: Test) -> str:
    return f"{pair.name}/{test.name}"
