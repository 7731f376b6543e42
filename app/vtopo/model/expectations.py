"""What a lab expects of itself: named checks, and the measurement matrix of its experiment (whose pairs, tests and
comparisons are in vtopo.model.measurements; an exercise's stages are in vtopo.model.stages). Plain Python.

The parameters of a check and the options of a test stay as the file gave them; the check types and the
measurement tools validate them, as node kinds validate their settings.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vtopo.model.measurements import Comparison, Pair, Test


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
