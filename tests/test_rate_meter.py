"""What the agent tells of a lab's link rates (vtopo.reports.RateMeter): every link's rate at the second reading, then
only the rates that changed, a stop included, and nothing while no counter moves."""
from __future__ import annotations

from vtopo.reports import STILL, LinkRate, RateMeter


def test_the_rates_that_changed_and_nothing_while_no_counter_moves() -> None:
    meter = RateMeter()
    assert meter.changes({"a": (1000, 10), "b": (0, 0)}, 10.0) == {}  # the first reading: nothing to compare
    assert meter.changes({"a": (2000, 20), "b": (0, 0)}, 11.0) == {"a": LinkRate(8000, 10.0), "b": STILL}
    assert meter.changes({"a": (2500, 24), "b": (0, 0)}, 12.0) == {"a": LinkRate(4000, 4.0)}
    assert meter.changes({"a": (2500, 24), "b": (0, 0)}, 13.0) == {"a": STILL}  # a stopped
    assert meter.changes({"a": (2500, 24), "b": (0, 0)}, 14.0) == {}  # a quiet lab is told nothing
    assert meter.changes({"a": (2500, 24), "b": (300, 3)}, 16.0) == {"b": LinkRate(1200, 1.5)}
