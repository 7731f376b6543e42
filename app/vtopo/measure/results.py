"""What an iperf3 run is asked to do and what it found: options, interval samples, the run result.

Plain dataclasses that round-trip through JSON (`to_dict`/`from_dict`, `to_json`/`from_json`)
so a history of runs can be saved beside a lab, and flatten to one CSV row each.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from vtopo.measure.ranges import outside
from vtopo.measure.record import RunRecord

Protocol = Literal["tcp", "udp"]
Direction = Literal["forward", "reverse"]
"""`forward` is data from the source node to the destination, `reverse` the other way (-R, --bidir)."""

_SIZE = re.compile(r"^\d+(\.\d+)?[KMGTkmgt]?$")


@dataclass(frozen=True)
class IperfOptions:
    protocol: Protocol = "tcp"
    duration_s: int = 10
    interval_s: float = 1.0
    parallel: int = 1
    reverse: bool = False
    bidir: bool = False
    bitrate: str | None = None
    """Target bitrate (-b) as iperf3 reads it: "100M", "1G", "500000". UDP defaults to 1M without it."""
    length: str | None = None
    """Buffer length (-l): "128K", "1400"."""
    window: str | None = None
    """Socket buffer / window size (-w): "4M"."""
    zerocopy: bool = False
    """-Z, TCP only."""

    def problems(self) -> list[str]:
        found = [] if self.protocol in ("tcp", "udp") else [f"protocol must be tcp or udp, not {self.protocol!r}"]
        found += outside(("duration", self.duration_s, 1, 86400, "1 s and 1 day"),
                         ("interval", self.interval_s, 0.1, 60, "0.1 s and 60 s"),
                         ("parallel streams", self.parallel, 1, 128, "1 and 128"))
        if self.reverse and self.bidir:
            found.append("reverse and bidirectional cannot be combined")
        if self.zerocopy and self.protocol != "tcp":
            found.append("zero-copy (-Z) is for TCP only")
        for name, value in (("bitrate", self.bitrate), ("length", self.length), ("window", self.window)):
            if value is not None and not _SIZE.match(value):
                found.append(f"{name} {value!r} is not a number with an optional K/M/G/T suffix")
        return found

    def client_args(self) -> list[str]:
        """The iperf3 client flags these options stand for (without -c, -p and output flags)."""
        args = ["-t", str(self.duration_s), "-i", _num(self.interval_s)]
        if self.protocol == "udp":
            args.append("-u")
        if self.parallel > 1:
            args += ["-P", str(self.parallel)]
        if self.reverse:
            args.append("-R")
        if self.bidir:
            args.append("--bidir")
        if self.bitrate:
            args += ["-b", self.bitrate]
        if self.length:
            args += ["-l", self.length]
        if self.window:
            args += ["-w", self.window]
        if self.zerocopy:
            args.append("-Z")
        return args

    def describe(self) -> str:
        """A short label: "TCP 10s", "UDP 5s -b 100M -R", "TCP 10s -P 4 --bidir"."""
        parts = [self.protocol.upper(), f"{self.duration_s}s"]
        if self.parallel > 1:
            parts.append(f"-P {self.parallel}")
        if self.reverse:
            parts.append("-R")
        if self.bidir:
            parts.append("--bidir")
        if self.bitrate:
            parts.append(f"-b {self.bitrate}")
        if self.length:
            parts.append(f"-l {self.length}")
        if self.window:
            parts.append(f"-w {self.window}")
        if self.zerocopy:
            parts.append("-Z")
        return " ".join(parts)

    def directions(self) -> tuple[Direction, ...]:
        if self.bidir:
            return ("forward", "reverse")
        return ("reverse",) if self.reverse else ("forward",)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


@dataclass(frozen=True)
class IntervalSample:
    """One reporting interval of one direction, summed over the parallel streams.

    Live samples come from the iperf3 server, so in a forward run they are what the destination
    received (UDP jitter and loss included) and in a reverse run what it sent (TCP retransmits
    and cwnd included). The result's copies are completed with the client's fields at the end.
    """

    start: float
    end: float
    bits_per_second: float
    bytes: int
    direction: Direction = "forward"
    retransmits: int | None = None
    cwnd_bytes: int | None = None
    """Sum of the streams' congestion windows (TCP sender)."""
    jitter_ms: float | None = None
    lost_packets: int | None = None
    packets: int | None = None

    @property
    def lost_percent(self) -> float | None:
        if self.lost_packets is None or not self.packets:
            return None
        return 100.0 * self.lost_packets / self.packets


@dataclass(frozen=True)
class Totals:
    """One side's whole-run figures for one direction (iperf3's sum_sent / sum_received)."""

    bytes: int
    seconds: float
    bits_per_second: float
    retransmits: int | None = None
    jitter_ms: float | None = None
    lost_packets: int | None = None
    packets: int | None = None
    lost_percent: float | None = None


@dataclass(frozen=True)
class DirectionTotals:
    sent: Totals
    received: Totals


@dataclass(frozen=True)
class CpuUsage:
    total: float
    user: float
    system: float


@dataclass(kw_only=True)
class RunResult(RunRecord):
    """Everything one iperf3 run found, ready to save in a history."""

    options: IperfOptions
    port: int = 0
    intervals: list[IntervalSample] = field(default_factory=list)
    forward: DirectionTotals | None = None
    reverse: DirectionTotals | None = None
    cpu_host: CpuUsage | None = None
    """CPU use of the iperf3 client, in the source node (iperf3's host_total)."""
    cpu_remote: CpuUsage | None = None
    """CPU use of the iperf3 server, in the destination node (iperf3's remote_total)."""
    iperf_version: str = ""

    # -- derived figures -------------------------------------------------------------------

    @property
    def main(self) -> DirectionTotals | None:
        """The direction the run was about: forward, or reverse for a -R run."""
        return self.reverse if self.options.reverse else self.forward

    @property
    def mean_bits_per_second(self) -> float | None:
        """The receiver's mean throughput of the main direction; the interval mean if totals are missing."""
        if self.main is not None:
            return self.main.received.bits_per_second
        wanted = self.options.directions()[0]
        rates = [s.bits_per_second for s in self.intervals if s.direction == wanted]
        return sum(rates) / len(rates) if rates else None

    @property
    def retransmits(self) -> int | None:
        if self.main is not None and self.main.sent.retransmits is not None:
            return self.main.sent.retransmits
        wanted = self.options.directions()[0]
        counts = [s.retransmits for s in self.intervals if s.direction == wanted and s.retransmits is not None]
        return sum(counts) if counts else None

    @property
    def lost_percent(self) -> float | None:
        if self.main is not None:
            return self.main.received.lost_percent
        return None

    def samples(self, direction: Direction) -> list[IntervalSample]:
        return [s for s in self.intervals if s.direction == direction]

    # -- JSON ---------------------------------------------------------------------------------


    # -- CSV ----------------------------------------------------------------------------------

    CSV_HEADER = (
        "id", "started_at", "lab", "source", "destination", "address", "path", "options", "status",
        "mean_mbps", "retransmits", "lost_percent", "sent_mbps", "received_mbps",
        "reverse_received_mbps", "cpu_host_percent", "cpu_remote_percent", "error",
    )

    def csv_row(self) -> list[str]:
        main = self.main
        return [
            self.id, self.started_at, self.lab, self.source, self.destination, self.address, self.path,
            self.options.describe(), self.status,
            _mbps(self.mean_bits_per_second),
            "" if self.retransmits is None else str(self.retransmits),
            "" if self.lost_percent is None else f"{self.lost_percent:.3f}",
            _mbps(main.sent.bits_per_second if main else None),
            _mbps(main.received.bits_per_second if main else None),
            _mbps(self.reverse.received.bits_per_second if self.options.bidir and self.reverse else None),
            "" if self.cpu_host is None else f"{self.cpu_host.total:.1f}",
            "" if self.cpu_remote is None else f"{self.cpu_remote.total:.1f}",
            self.error,
        ]


def _mbps(bits_per_second: float | None) -> str:
    return "" if bits_per_second is None else f"{bits_per_second / 1e6:.3f}"
