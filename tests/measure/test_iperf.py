from __future__ import annotations

import threading
import time

import pytest

from vtopo.measure import MeasureEndpoint, IperfOptions, IperfRun, MeasureError, UnreachableError, in_netns
from netns_pairs import NetnsPair, samples_with_arrivals

pytestmark = pytest.mark.privileged


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _iperf3_pids(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"iperf3" in f.read() and _alive(pid):
                    alive.append(pid)
        except FileNotFoundError:
            pass
    return alive


def test_tcp_run_yields_a_sample_per_interval_and_a_plausible_total(pair: NetnsPair) -> None:
    run = IperfRun(pair.a, pair.b, pair.address_b, IperfOptions(duration_s=3), lab="t", path="a-b")
    samples, arrivals = samples_with_arrivals(run)
    result = run.result
    assert result.status == "ok", result.error
    assert len(samples) == 3
    # Live: each sample arrives about when its interval ends, not all at the end.
    assert arrivals[0] < arrivals[-1] - 1.0
    assert [s.direction for s in samples] == ["forward"] * 3
    assert all(s.bits_per_second > 1e6 for s in samples)
    assert result.forward is not None and result.reverse is None
    assert result.forward.sent.bytes > 0 and result.forward.received.bytes > 0
    mean = result.mean_bits_per_second
    assert mean is not None and 1e6 < mean < 1e12
    interval_mean = sum(s.bits_per_second for s in samples) / len(samples)
    assert abs(interval_mean - mean) / mean < 0.25
    assert result.cpu_host is not None and result.cpu_remote is not None
    assert result.retransmits is not None  # the sender's count, from the client's JSON
    assert all(s.retransmits is not None and s.cwnd_bytes for s in result.intervals)
    assert result.iperf_version.startswith("iperf 3")
    assert _iperf3_pids(run.pids) == []


def test_udp_run_at_a_fixed_rate_reports_loss(pair: NetnsPair) -> None:
    run = IperfRun(pair.a, pair.b, pair.address_b, IperfOptions(protocol="udp", duration_s=2, bitrate="20M"))
    samples = list(run)
    result = run.result
    assert result.status == "ok", result.error
    assert len(samples) == 2
    for s in samples:  # live, from the receiving server
        assert s.jitter_ms is not None and s.lost_packets is not None and s.packets
        assert s.lost_percent is not None
        assert 15e6 < s.bits_per_second < 25e6
    assert result.forward is not None
    received = result.forward.received
    assert received.lost_packets is not None and received.packets and received.lost_percent is not None
    assert received.jitter_ms is not None
    assert result.lost_percent is not None and result.lost_percent < 5
    assert 15e6 < (result.mean_bits_per_second or 0) < 25e6


def test_reverse_run_measures_destination_to_source(pair: NetnsPair) -> None:
    run = IperfRun(pair.a, pair.b, pair.address_b, IperfOptions(duration_s=2, reverse=True))
    samples = list(run)
    result = run.result
    assert result.status == "ok", result.error
    assert samples and all(s.direction == "reverse" for s in samples)
    assert all(s.retransmits is not None for s in samples)  # the server sends: it knows them live
    assert result.reverse is not None and result.forward is None
    assert (result.mean_bits_per_second or 0) > 1e6


def test_bidirectional_parallel_run_reports_both_directions(pair: NetnsPair) -> None:
    run = IperfRun(pair.a, pair.b, pair.address_b, IperfOptions(duration_s=2, bidir=True, parallel=2))
    samples = list(run)
    result = run.result
    assert result.status == "ok", result.error
    assert sorted(s.direction for s in samples) == ["forward", "forward", "reverse", "reverse"]
    assert result.forward is not None and result.reverse is not None
    assert result.reverse.received.bits_per_second > 1e6


def test_cancel_mid_run_leaves_no_iperf3_process(pair: NetnsPair) -> None:
    run = IperfRun(pair.a, pair.b, pair.address_b, IperfOptions(duration_s=30))
    got = []
    for sample in run:
        got.append(sample)
        run.cancel()
    assert len(got) == 1
    assert run.result.status == "cancelled"
    assert len(run.pids) == 2
    assert _iperf3_pids(run.pids) == []
    assert pair.pids() == set()


def test_cancel_from_another_thread_before_any_sample(pair: NetnsPair) -> None:
    run = IperfRun(pair.a, pair.b, pair.address_b, IperfOptions(duration_s=30, interval_s=5))
    timer = threading.Timer(0.8, run.cancel)
    timer.start()
    t0 = time.monotonic()
    assert list(run) == []
    assert time.monotonic() - t0 < 3
    assert run.result.status == "cancelled"
    assert _iperf3_pids(run.pids) == []
    assert pair.pids() == set()


def test_stopping_iteration_early_ends_the_processes(pair: NetnsPair) -> None:
    run = IperfRun(pair.a, pair.b, pair.address_b, IperfOptions(duration_s=30))
    iterator = iter(run)
    next(iterator)
    iterator.close()  # type: ignore[attr-defined]
    assert _iperf3_pids(run.pids) == []


def test_two_concurrent_runs_between_the_same_pair_do_not_collide(pair: NetnsPair) -> None:
    runs = [IperfRun(pair.a, pair.b, pair.address_b, IperfOptions(duration_s=2)) for _ in range(2)]
    errors: list[BaseException] = []

    def go(run: IperfRun) -> None:
        try:
            run.run()
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=go, args=(r,)) for r in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert [r.result.status for r in runs] == ["ok", "ok"]
    assert runs[0].result.port != runs[1].result.port
    assert all(len(r.result.intervals) == 2 for r in runs)


def test_a_second_run_after_the_first_uses_a_fresh_server(pair: NetnsPair) -> None:
    first = IperfRun(pair.a, pair.b, pair.address_b, IperfOptions(duration_s=1))
    first.run()
    second = IperfRun(pair.a, pair.b, pair.address_b, IperfOptions(duration_s=1))
    second.run()
    assert first.result.status == second.result.status == "ok"


def test_unreachable_destination_fails_before_iperf_starts(pair: NetnsPair) -> None:
    c3 = MeasureEndpoint("c3", in_netns(pair.netns_a))
    run = IperfRun(c3, pair.b, "10.99.0.9", IperfOptions(duration_s=2))
    with pytest.raises(UnreachableError, match=r"c3 has no route to 10\.99\.0\.9"):
        list(run)
    assert run.pids == []  # no iperf3 was started
    assert run.result.status == "failed" and "no route" in run.result.error


def test_silent_destination_on_the_link_gives_no_reply_message(pair: NetnsPair) -> None:
    run = IperfRun(pair.a, pair.b, "10.251.0.77", IperfOptions(duration_s=2))
    with pytest.raises(UnreachableError, match=r"a gets no reply from 10\.251\.0\.77"):
        list(run)


def test_invalid_options_fail_with_the_problem() -> None:
    run = IperfRun(MeasureEndpoint("a"), MeasureEndpoint("b"), "127.0.0.1", IperfOptions(protocol="udp", zerocopy=True))
    with pytest.raises(MeasureError, match="zero-copy"):
        list(run)


def test_iperf3_missing_in_the_destination_is_named(pair: NetnsPair) -> None:
    run = IperfRun(pair.a, pair.b, pair.address_b, IperfOptions(duration_s=1))
    run.iperf3 = "iperf3-not-here"
    with pytest.raises(MeasureError, match=r"iperf3 server in b"):
        list(run)
    assert pair.pids() == set()


def test_a_run_can_use_loopback_on_the_host() -> None:
    run = IperfRun(MeasureEndpoint("host"), MeasureEndpoint("host"), "127.0.0.1", IperfOptions(duration_s=1),
                   preflight=False)
    run.run()
    assert run.result.status == "ok"
