from __future__ import annotations

import time
from typing import Any, Callable

import pytest

from vtopo.measure.base import MeasureRun
from vtopo.measure import MeasureEndpoint, MeasureError, PingOptions, PingResult, PingRun, RROptions, RRResult, RRRun
from netns_pairs import NetnsPair

pytestmark = pytest.mark.privileged


def test_ping_gives_rtt_stats_and_a_reply_per_probe(pair: NetnsPair) -> None:
    run = PingRun(pair.a, pair.b, pair.address_b, PingOptions(count=5, interval_s=0.1))
    replies = list(run)
    result = run.result
    assert result.status == "ok"
    assert [r.seq for r in replies] == [1, 2, 3, 4, 5]
    assert all(r.rtt_ms is not None and r.rtt_ms > 0 for r in replies)
    assert result.transmitted == 5 and result.received == 5 and result.loss_percent == 0
    assert result.rtt_min_ms is not None and result.rtt_max_ms is not None and result.rtt_avg_ms is not None
    assert result.rtt_min_ms <= result.rtt_avg_ms <= result.rtt_max_ms
    assert result.rtt_mdev_ms is not None
    assert PingResult.from_json(result.to_json()) == result
    assert "0% loss" in result.summary()


def test_ping_replies_arrive_as_they_come(pair: NetnsPair) -> None:
    run = PingRun(pair.a, pair.b, pair.address_b, PingOptions(count=4, interval_s=0.3))
    t0 = time.monotonic()
    arrivals = [time.monotonic() - t0 for _ in run]
    assert arrivals[-1] - arrivals[0] > 0.6


def test_ping_without_route_says_so(pair: NetnsPair) -> None:
    run = PingRun(pair.a, MeasureEndpoint("far", None), "10.98.0.1", PingOptions(count=2))
    with pytest.raises(MeasureError, match=r"a has no route to 10\.98\.0\.1 \(far\)"):
        list(run)
    assert run.result.status == "failed"


def test_ping_to_a_silent_address_reports_total_loss(pair: NetnsPair) -> None:
    run = PingRun(pair.a, MeasureEndpoint("ghost", None), "10.251.0.99",
                  PingOptions(count=2, interval_s=0.2, timeout_s=1))
    with pytest.raises(MeasureError, match="ghost"):
        list(run)
    assert run.result.transmitted == 2 and run.result.received == 0 and run.result.loss_percent == 100


@pytest.mark.parametrize("make_run", [
    lambda pair: PingRun(pair.a, pair.b, pair.address_b, PingOptions(count=100, interval_s=0.1)),
    lambda pair: RRRun(pair.a, pair.b, pair.address_b, RROptions(duration_s=30, interval_s=0.2)),
], ids=["ping", "request-response"])
def test_a_cancelled_run_ends_its_processes(pair: NetnsPair, make_run: Callable[[NetnsPair], MeasureRun[Any, Any, Any]]) -> None:
    run = make_run(pair)
    for _ in run:
        run.cancel()
    assert run.result.status == "cancelled"
    assert pair.pids() == set()


def test_request_response_rate(pair: NetnsPair) -> None:
    run = RRRun(pair.a, pair.b, pair.address_b, RROptions(duration_s=2, interval_s=0.5))
    samples = list(run)
    result = run.result
    assert result.status == "ok", result.error
    assert len(samples) >= 3
    assert all(s.transactions > 0 for s in samples)
    assert result.transactions >= sum(s.transactions for s in samples) > 0
    assert 100 < result.transactions_per_second < 10_000_000
    assert result.latency_us_mean is not None and result.latency_us_min is not None
    assert result.latency_us_min <= result.latency_us_mean
    assert RRResult.from_json(result.to_json()) == result
    assert pair.pids() == set()


def test_request_response_unreachable(pair: NetnsPair) -> None:
    with pytest.raises(MeasureError, match="no route"):
        list(RRRun(pair.a, pair.b, "10.97.0.1", RROptions(duration_s=1)))
