"""iperf3 3.12 output as it really looks, parsed without running anything."""
from __future__ import annotations

from vtopo.measure.iperf_parse import (
    IntervalAssembler,
    merge_intervals,
    parse_client_json,
    parse_interval_line,
)
from vtopo.measure.results import IntervalSample, IperfOptions


def test_tcp_sender_line() -> None:
    line = "[  5]   0.00-1.00   sec  1.94 GBytes  16656639 Kbits/sec  8353    342 KBytes       "
    parsed = parse_interval_line(line, "reverse")
    assert parsed is not None
    s = parsed.sample
    assert (s.start, s.end, s.direction) == (0.0, 1.0, "reverse")
    assert s.bits_per_second == 16656639e3
    assert s.retransmits == 8353 and s.cwnd_bytes == 342 * 1024


def test_udp_receiver_line() -> None:
    s = parse_interval_line("[  5]   1.00-2.00   sec  5.96 MBytes  50016 Kbits/sec  0.006 ms  3/4318 (0.069%)",
                            "forward")
    assert s is not None
    assert s.sample.jitter_ms == 0.006 and s.sample.lost_packets == 3 and s.sample.packets == 4318
    assert abs((s.sample.lost_percent or 0) - 100 * 3 / 4318) < 1e-9


def test_udp_sender_line_and_summary_lines() -> None:
    s = parse_interval_line("[  5]   0.00-1.00   sec  2.38 MBytes  19981 Kbits/sec  1725", "reverse")
    assert s is not None and s.sample.packets == 1725 and s.sample.lost_packets is None
    assert parse_interval_line("[  5]   0.00-2.00   sec  11.9 MBytes  49879 Kbits/sec  0.006 ms  0/8629 (0%)  receiver",
                               "forward") is None
    assert parse_interval_line("[SUM]   0.00-2.01   sec  1.87 GBytes  7982448 Kbits/sec      receiver", "forward") is None
    assert parse_interval_line("Server listening on 5303 (test #1)", "forward") is None


def test_bidir_roles_give_directions() -> None:
    rx = parse_interval_line("[  5][RX-S]   0.00-1.01   sec   631 MBytes  5248248 Kbits/sec", "forward")
    tx = parse_interval_line("[  8][TX-S]   0.00-1.01   sec   482 MBytes  4015484 Kbits/sec    2   1.82 MBytes",
                             "forward")
    assert rx is not None and rx.sample.direction == "forward"
    assert tx is not None and tx.sample.direction == "reverse" and tx.sample.retransmits == 2


def test_assembler_sums_parallel_streams_without_waiting_for_the_late_sum_line() -> None:
    asm = IntervalAssembler(IperfOptions(parallel=2))
    lines = [
        "[  5]   0.00-1.04   sec   696 MBytes  5595486 Kbits/sec",
        "[  8]   0.00-1.04   sec   684 MBytes  5494828 Kbits/sec",
        "[SUM]   0.00-1.04   sec  1.35 GBytes  11090515 Kbits/sec",
        "[  5]   2.00-2.01   sec  7.38 MBytes  9015736 Kbits/sec",
        "[  8]   2.00-2.01   sec  3.62 MBytes  4476477 Kbits/sec",
    ]
    out = [asm.feed(line, "forward") for line in lines]
    assert out[0] is None and out[2] is None
    assert out[1] is not None and out[1].bits_per_second == (5595486 + 5494828) * 1e3
    assert out[3] is None and out[4] is None  # the few-ms tail is dropped


CLIENT_JSON = {
    "start": {"version": "iperf 3.12"},
    "intervals": [
        {
            "streams": [{"sender": True, "snd_cwnd": 1000, "start": 0, "end": 1.0, "bytes": 10,
                         "bits_per_second": 80.0, "retransmits": 1}],
            "sum": {"start": 0, "end": 1.0001, "seconds": 1.0, "bytes": 10, "bits_per_second": 80.0,
                    "retransmits": 1, "sender": True, "omitted": False},
        }
    ],
    "end": {
        "sum_sent": {"start": 0, "end": 1, "seconds": 1, "bytes": 10, "bits_per_second": 80.0, "retransmits": 1,
                     "sender": True},
        "sum_received": {"start": 0, "end": 1, "seconds": 1, "bytes": 9, "bits_per_second": 72.0, "sender": True},
        "cpu_utilization_percent": {"host_total": 5.0, "host_user": 1.0, "host_system": 4.0,
                                    "remote_total": 3.0, "remote_user": 1.0, "remote_system": 2.0},
    },
}


def test_client_json_gives_totals_cpu_and_completes_live_samples() -> None:
    report = parse_client_json(CLIENT_JSON, IperfOptions())
    assert report.forward is not None and report.reverse is None
    assert report.forward.sent.retransmits == 1 and report.forward.received.bits_per_second == 72.0
    assert report.cpu_host is not None and report.cpu_host.total == 5.0
    assert report.cpu_remote is not None and report.cpu_remote.total == 3.0
    live = [IntervalSample(0.0, 1.0, 75.0, 9)]
    merged = merge_intervals(live, report.intervals, 1.0)
    assert merged == [IntervalSample(0.0, 1.0, 75.0, 9, retransmits=1, cwnd_bytes=1000)]


def test_reverse_client_json_fills_the_reverse_direction() -> None:
    report = parse_client_json(CLIENT_JSON, IperfOptions(reverse=True))
    assert report.forward is None and report.reverse is not None
    assert report.intervals[0].direction == "reverse"
    # with no live samples at all, the client's own intervals stand in
    assert merge_intervals([], report.intervals, 1.0) == report.intervals
