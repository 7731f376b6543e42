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


def test_a_link_whose_rate_stays_is_told_once_and_links_that_moved_alike_share_their_rate() -> None:
    meter = RateMeter()
    meter.changes({"a": (0, 0), "b": (0, 0), "c": (0, 0)}, 0.0)
    first = meter.changes({"a": (1000, 10), "b": (1000, 10), "c": (500, 5)}, 1.0)
    assert first == {"a": LinkRate(8000, 10.0), "b": LinkRate(8000, 10.0), "c": LinkRate(4000, 5.0)}
    assert first["a"] is first["b"]  # a packet flooded through a switch: one rate for the links it crossed
    assert meter.changes({"a": (2000, 20), "b": (2000, 20), "c": (1500, 15)}, 2.0) == {"c": LinkRate(8000, 10.0)}
    assert meter.changes({"a": (2000, 20), "b": (3000, 30), "c": (1500, 15)}, 3.0) == {"a": STILL, "c": STILL}
    assert meter.changes({"a": (100, 1), "b": (4000, 40), "c": (1500, 15)}, 4.0) == {}  # a's device made anew
