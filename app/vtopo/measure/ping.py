"""Latency between two nodes with ping: a sample per reply (or missing reply) as it arrives,
then min/avg/max/mdev and loss from ping's own summary."""
from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Unpack

from vtopo.measure.base import MeasureRun, Who
from vtopo.measure.nodes import MeasureError
from vtopo.measure.preflight import describe_ping_failure
from vtopo.measure.ranges import outside
from vtopo.measure.record import RunRecord

_REPLY = re.compile(r"icmp_seq=(?P<seq>\d+)\s+ttl=(?P<ttl>\d+)\s+time=(?P<rtt>[\d.]+)\s*ms(?P<dup>.*DUP!)?")
_NO_ANSWER = re.compile(r"^no answer yet for icmp_seq=(?P<seq>\d+)")
_ERROR_REPLY = re.compile(r"^From (?P<from>\S+) icmp_seq=(?P<seq>\d+) (?P<what>.+)$")
_COUNTS = re.compile(r"(?P<tx>\d+) packets transmitted, (?P<rx>\d+) received.*?(?P<loss>[\d.]+)% packet loss")
_RTT = re.compile(r"= (?P<min>[\d.]+)/(?P<avg>[\d.]+)/(?P<max>[\d.]+)/(?P<mdev>[\d.]+) ms")


@dataclass(frozen=True)
class PingOptions:
    count: int = 10
    interval_s: float = 0.2
    timeout_s: float = 1.0
    """How long to wait for each reply before counting it lost (-W)."""
    size: int = 56

    def problems(self) -> list[str]:
        return outside(("count", self.count, 1, 100000, "1 and 100000"),
                       ("interval", self.interval_s, 0.002, 60, "0.002 s and 60 s"),
                       ("timeout", self.timeout_s, 0.1, 60, "0.1 s and 60 s"),
                       ("size", self.size, 0, 65507, "0 and 65507 bytes"))

    def describe(self) -> str:
        return f"ping -c {self.count} -i {self.interval_s:g} -s {self.size}"


@dataclass(frozen=True)
class PingReply:
    """One echo request's fate: `rtt_ms` is None when no answer came (in time)."""

    seq: int
    rtt_ms: float | None
    at_s: float
    """Seconds since the run started."""
    ttl: int | None = None
    error: str = ""
    """e.g. "Destination Host Unreachable" when a router or the source itself answered so."""


@dataclass(kw_only=True)
class PingResult(RunRecord):
    options: PingOptions
    transmitted: int = 0
    received: int = 0
    loss_percent: float = 0.0
    rtt_min_ms: float | None = None
    rtt_avg_ms: float | None = None
    rtt_max_ms: float | None = None
    rtt_mdev_ms: float | None = None
    replies: list[PingReply] = field(default_factory=list)


    def summary(self) -> str:
        rtt = (
            f"rtt min/avg/max/mdev = {self.rtt_min_ms:.3f}/{self.rtt_avg_ms:.3f}/{self.rtt_max_ms:.3f}/"
            f"{self.rtt_mdev_ms:.3f} ms"
            if self.rtt_avg_ms is not None
            else "no rtt"
        )
        return (f"{self.source} -> {self.destination} ({self.address}): {self.transmitted} sent, "
                f"{self.received} received, {self.loss_percent:g}% loss, {rtt}")


class PingRun(MeasureRun[PingReply, PingResult, PingOptions]):
    """`ping` from `source` to `address`, yielding a `PingReply` per reply or missing reply. A ping needs no
    preflight: it is one."""

    what = "ping"

    def _default_options(self) -> PingOptions:
        return PingOptions()

    def _new_result(self, **who: Unpack[Who]) -> PingResult:
        return PingResult(options=self.options, **who)

    def _argv(self) -> list[str]:
        o = self.options
        wait = max(1, round(o.timeout_s))
        return self.source.argv(
            ["ping", "-n", "-O", "-c", str(o.count), "-i", f"{o.interval_s:g}", "-W", str(wait), "-s", str(o.size),
             self.address]
        )

    def _measure(self) -> Iterator[PingReply]:
        result = self._partial
        self._check_options()
        self.source.check_address(self.address)
        child = self._start(self._argv(), what=f"ping in {self.source.name}", lines=True)
        t0 = time.monotonic()
        o = self.options
        deadline = t0 + o.count * o.interval_s + o.timeout_s + 10.0
        lines: list[str] = []
        reported: set[int] = set()
        for line in self._lines(child, deadline, lambda: f"ping in {self.source.name} to {self.address} did not end "
                                "in time"):
            lines.append(line)
            reply = _parse_reply(line, time.monotonic() - t0)
            if reply is None or (reply.rtt_ms is None and reply.seq in reported):
                continue  # "no answer yet" and an ICMP error can both speak of one lost request
            reported.add(reply.seq)
            result.replies.append(reply)
            yield reply
        if not self.cancelled:
            code = child.wait(timeout=2.0)
            self._summarise(lines, code if code is not None else -1)

    def _summarise(self, lines: list[str], returncode: int) -> None:
        result = self._partial
        text = "\n".join(lines)
        counts = _COUNTS.search(text)
        if counts is None:
            raise MeasureError(
                describe_ping_failure(self.source.name, self.address, result.destination, text, returncode,
                                      self.options.timeout_s)
            )
        result.transmitted = int(counts["tx"])
        result.received = int(counts["rx"])
        result.loss_percent = float(counts["loss"])
        if (rtt := _RTT.search(text)) is not None:
            result.rtt_min_ms = float(rtt["min"])
            result.rtt_avg_ms = float(rtt["avg"])
            result.rtt_max_ms = float(rtt["max"])
            result.rtt_mdev_ms = float(rtt["mdev"])
        if result.received == 0:
            result.status = "failed"
            result.error = describe_ping_failure(
                self.source.name, self.address, result.destination, text, returncode, self.options.timeout_s
            )
            raise MeasureError(result.error)


def _parse_reply(line: str, at_s: float) -> PingReply | None:
    if (m := _REPLY.search(line)) is not None:
        if m["dup"]:
            return None
        return PingReply(seq=int(m["seq"]), rtt_ms=float(m["rtt"]), at_s=at_s, ttl=int(m["ttl"]))
    if (m := _NO_ANSWER.match(line)) is not None:
        return PingReply(seq=int(m["seq"]), rtt_ms=None, at_s=at_s)
    if (m := _ERROR_REPLY.match(line)) is not None:
        return PingReply(seq=int(m["seq"]), rtt_ms=None, at_s=at_s, error=m["what"].strip())
    return None
