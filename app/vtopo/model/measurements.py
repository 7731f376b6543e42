"""What a lab's experiment measures (vtopo.model.expectations.Experiment): the pairs of nodes, the tests run on each
and the ratios reported. Plain Python, loaded with the first lab that has an experiment."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
