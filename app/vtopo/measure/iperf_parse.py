"""Reading iperf3 3.12: the server's text interval lines (live) and the client's JSON result (final).

iperf3 3.12 has no --json-stream: with -J it prints the whole JSON document when the test ends,
--forceflush or not. So the live samples come from the server's text output, which --forceflush
flushes line by line, and the final figures come from the client's JSON.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from vtopo.measure.results import CpuUsage, Direction, DirectionTotals, IntervalSample, IperfOptions, Totals

BYTE_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
RATE_UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}

INTERVAL_LINE = re.compile(
    r"^\[\s*(?P<id>\d+|SUM)\](?:\[(?P<role>[TR]X-[SC])\])?\s+"
    r"(?P<start>\d+(?:\.\d+)?)-\s*(?P<end>\d+(?:\.\d+)?)\s+sec\s+"
    r"(?P<xfer>\d+(?:\.\d+)?)\s+(?P<xunit>[KMGT]?)Bytes\s+"
    r"(?P<rate>\d+(?:\.\d+)?)\s+(?P<runit>[KMGT]?)bits/sec(?P<rest>.*)$"
)
_TCP_SENDER = re.compile(r"^(?P<retr>\d+)\s+(?P<cwnd>\d+(?:\.\d+)?)\s+(?P<cunit>[KMGT]?)Bytes$")
UDP_RECEIVER = re.compile(r"^(?P<jitter>\d+(?:\.\d+)?)\s+ms\s+(?P<lost>-?\d+)/(?P<total>\d+)\s+\(.*%\)$")
A_COUNT = re.compile(r"^(?P<count>\d+)$")
"""What follows the rate on a UDP sender's interval line (packets) or a TCP sender's summary (retransmits)."""

LISTENING = re.compile(r"^Server listening on (?P<port>\d+)")


@dataclass(frozen=True)
class StreamLine:
    """One stream's line of one interval, as the server printed it."""

    stream: str
    role: str | None
    sample: IntervalSample


def role_direction(role: str | None, default: Direction) -> Direction:
    """The direction of a --bidir line from its role tag: what the client sends (TX-C), and so the
    server receives (RX-S), goes forward. Lines without a tag go the run's `default` way."""
    if role is None:
        return default
    return "forward" if role in ("RX-S", "TX-C") else "reverse"


def parse_interval_line(line: str, default_direction: Direction) -> StreamLine | None:
    """A per-interval line of iperf3's text output (run with -f k), or None for anything else.

    Summary lines (ending in "sender"/"receiver") and omitted intervals are not interval lines.
    """
    m = INTERVAL_LINE.match(line.strip())
    if m is None:
        return None
    rest = m["rest"].strip()
    if rest.endswith(("sender", "receiver", "(omitted)")):
        return None
    role = m["role"]
    direction = role_direction(role, default_direction)
    fields: dict[str, Any] = {}
    if (tcp := _TCP_SENDER.match(rest)) is not None:
        fields["retransmits"] = int(tcp["retr"])
        fields["cwnd_bytes"] = int(float(tcp["cwnd"]) * BYTE_UNITS[tcp["cunit"]])
    elif (udp := UDP_RECEIVER.match(rest)) is not None:
        fields["jitter_ms"] = float(udp["jitter"])
        fields["lost_packets"] = max(0, int(udp["lost"]))
        fields["packets"] = int(udp["total"])
    elif (sent := A_COUNT.match(rest)) is not None:
        fields["packets"] = int(sent["count"])
    sample = IntervalSample(
        start=float(m["start"]),
        end=float(m["end"]),
        bits_per_second=float(m["rate"]) * RATE_UNITS[m["runit"]],
        bytes=int(float(m["xfer"]) * BYTE_UNITS[m["xunit"]]),
        direction=direction,
        **fields,
    )
    return StreamLine(stream=m["id"], role=role, sample=sample)


def _sum_optional(values: list[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def combine(samples: list[IntervalSample]) -> IntervalSample:
    """The sum of the parallel streams' samples of one interval and direction."""
    if len(samples) == 1:
        return samples[0]
    jitters = [s.jitter_ms for s in samples if s.jitter_ms is not None]
    first = samples[0]
    return replace(
        first,
        bits_per_second=sum(s.bits_per_second for s in samples),
        bytes=sum(s.bytes for s in samples),
        retransmits=_sum_optional([s.retransmits for s in samples]),
        cwnd_bytes=_sum_optional([s.cwnd_bytes for s in samples]),
        jitter_ms=sum(jitters) / len(jitters) if jitters else None,
        lost_packets=_sum_optional([s.lost_packets for s in samples]),
        packets=_sum_optional([s.packets for s in samples]),
    )


class IntervalAssembler:
    """Turns the server's stream lines into one sample per interval and direction, as soon as
    every stream of that interval has reported.

    iperf3 3.12 flushes each stream line at once but holds the [SUM] line back until the next
    interval, so the sums are made here rather than read.
    """

    def __init__(self, options: IperfOptions) -> None:
        self.streams = options.parallel
        self.interval_s = options.interval_s
        self._pending: dict[tuple[str, float, float], list[IntervalSample]] = {}

    def feed(self, line: str, default_direction: Direction) -> IntervalSample | None:
        parsed = parse_interval_line(line, default_direction)
        if parsed is None or parsed.stream == "SUM":
            return None
        s = parsed.sample
        key = (s.direction, s.start, s.end)
        group = self._pending.setdefault(key, [])
        group.append(s)
        if len(group) < self.streams:
            return None
        del self._pending[key]
        if s.end - s.start < 0.25 * self.interval_s:
            return None  # the few-millisecond tail iperf3 reports after the last full interval
        return combine(group)


# -- the client's JSON ------------------------------------------------------------------------


def _totals(d: dict[str, Any] | None, *, receiver: bool, udp: bool) -> Totals | None:
    if not d:
        return None
    return Totals(
        bytes=int(d.get("bytes", 0)),
        seconds=float(d.get("seconds", 0.0)),
        bits_per_second=float(d.get("bits_per_second", 0.0)),
        retransmits=None if receiver or "retransmits" not in d else int(d["retransmits"]),
        jitter_ms=float(d["jitter_ms"]) if udp and receiver and "jitter_ms" in d else None,
        lost_packets=int(d["lost_packets"]) if udp and receiver and "lost_packets" in d else None,
        packets=int(d["packets"]) if udp and "packets" in d else None,
        lost_percent=float(d["lost_percent"]) if udp and receiver and "lost_percent" in d else None,
    )


def _direction_totals(sent: Any, received: Any, udp: bool) -> DirectionTotals | None:
    s = _totals(sent, receiver=False, udp=udp)
    r = _totals(received, receiver=True, udp=udp)
    if s is None or r is None:
        return None
    return DirectionTotals(sent=s, received=r)


def _client_interval(interval: dict[str, Any], key: str, direction: Direction) -> IntervalSample | None:
    total = interval.get(key)
    if not total or total.get("omitted"):
        return None
    sender = bool(total.get("sender"))
    streams = [s for s in interval.get("streams", []) if bool(s.get("sender")) == sender]
    cwnds = [int(s["snd_cwnd"]) for s in streams if "snd_cwnd" in s]
    receiving = not sender
    return IntervalSample(
        start=float(total["start"]),
        end=float(total["end"]),
        bits_per_second=float(total["bits_per_second"]),
        bytes=int(total["bytes"]),
        direction=direction,
        retransmits=int(total["retransmits"]) if "retransmits" in total else None,
        cwnd_bytes=sum(cwnds) if cwnds else None,
        jitter_ms=float(total["jitter_ms"]) if receiving and "jitter_ms" in total else None,
        lost_packets=int(total["lost_packets"]) if receiving and "lost_packets" in total else None,
        packets=int(total["packets"]) if "packets" in total else None,
    )


@dataclass
class ClientReport:
    intervals: list[IntervalSample]
    forward: DirectionTotals | None
    reverse: DirectionTotals | None
    cpu_host: CpuUsage | None
    cpu_remote: CpuUsage | None
    version: str


def parse_client_json(data: dict[str, Any], options: IperfOptions) -> ClientReport:
    """The client's -J document: its intervals, both directions' totals and both CPU figures."""
    udp = options.protocol == "udp"
    main: Direction = "reverse" if options.reverse else "forward"
    intervals: list[IntervalSample] = []
    for interval in data.get("intervals", []):
        for key, direction in (("sum", main), ("sum_bidir_reverse", "reverse")):
            sample = _client_interval(interval, key, direction)
            if sample is not None:
                intervals.append(sample)
    end = data.get("end", {})
    main_totals = _direction_totals(end.get("sum_sent"), end.get("sum_received"), udp)
    other = _direction_totals(end.get("sum_sent_bidir_reverse"), end.get("sum_received_bidir_reverse"), udp)
    forward, reverse = (None, main_totals) if options.reverse else (main_totals, other)
    cpu = end.get("cpu_utilization_percent") or {}
    cpu_host = cpu_remote = None
    if cpu:
        cpu_host = CpuUsage(float(cpu["host_total"]), float(cpu["host_user"]), float(cpu["host_system"]))
        cpu_remote = CpuUsage(float(cpu["remote_total"]), float(cpu["remote_user"]), float(cpu["remote_system"]))
    version = str(data.get("start", {}).get("version", ""))
    return ClientReport(intervals, forward, reverse, cpu_host, cpu_remote, version)


def merge_intervals(
    live: list[IntervalSample], client: list[IntervalSample], interval_s: float
) -> list[IntervalSample]:
    """The live (server-side) samples, each completed with the fields only the client knew
    (the sender's retransmits and cwnd in a forward run, the receiver's loss in a reverse one).

    A direction the server never reported is taken from the client whole.
    """
    merged: list[IntervalSample] = []
    live_directions = {s.direction for s in live}
    for s in live:
        match = min(
            (c for c in client if c.direction == s.direction and abs(c.end - s.end) <= 0.5 * interval_s),
            key=lambda c: abs(c.end - s.end),
            default=None,
        )
        if match is None:
            merged.append(s)
            continue
        merged.append(
            replace(
                s,
                retransmits=s.retransmits if s.retransmits is not None else match.retransmits,
                cwnd_bytes=s.cwnd_bytes if s.cwnd_bytes is not None else match.cwnd_bytes,
                jitter_ms=s.jitter_ms if s.jitter_ms is not None else match.jitter_ms,
                lost_packets=s.lost_packets if s.lost_packets is not None else match.lost_packets,
                packets=s.packets if s.packets is not None else match.packets,
            )
        )
    merged += [c for c in client if c.direction not in live_directions]
    return merged
