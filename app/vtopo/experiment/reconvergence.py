"""Reconvergence after a link goes down: how long a pair's pings stop when a link on their path is taken down, until
the routers have found another path. The link goes down and up again with the lab's own link operation (`vtopo
link`), and the pings are the ping measurement's, sent every `interval_s`: the outage is the run of requests that
got no reply, so it is known to within one interval. After each run the link comes back up, and the run ends once
the pings take their old path again (the TTL of the replies says so), ready for the next one. An outage shorter
than the interval loses no request, and is measured as 0: the replies' TTL shows the new path all the same."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol, Unpack

from vtopo.measure import MeasureError, PingOptions, PingRun
from vtopo.measure.base import Cancelled, MeasureRun, Who
from vtopo.measure.nodes import MeasureEndpoint
from vtopo.measure.ping import PingReply
from vtopo.measure.ranges import outside
from vtopo.measure.record import RunRecord

STEADY_S = 2.0  # how long the replies must come in a row, with one TTL, for a path to be steady


class LinkSwitch(Protocol):
    """What takes a running lab's link down and up: the agent's client (vtopo.client.agent_client.AgentClient)."""

    def set_link_state(self, lab: str, a: str, b: str, up: bool) -> str: ...


@dataclass(frozen=True)
class ReconvergenceOptions:
    link: str = ""
    """The link to take down, as `vtopo link` names it: two node names, each with an optional ":PORT"."""
    interval_s: float = 0.005
    timeout_s: float = 60.0
    """How long to wait for the pings to come back, after the link goes down and again after it comes up."""

    @property
    def ends(self) -> list[str]:
        return self.link.split()

    def problems(self) -> list[str]:
        wrong = [] if len(self.ends) == 2 else [f"link must name the two ends of a link, as in \"r1 r3\" or "
                                                 f"\"r1:eth1 r3:eth1\", not {self.link!r}"]
        return wrong + outside(("interval", self.interval_s, 0.002, 1, "0.002 s and 1 s"),
                               ("timeout", self.timeout_s, 1, 3600, "1 s and 1 hour"))

    def describe(self) -> str:
        return f"link {' '.join(self.ends)} down, ping every {self.interval_s:g} s"


@dataclass(kw_only=True)
class ReconvergenceResult(RunRecord):
    options: ReconvergenceOptions
    seconds: float | None = None
    """From the first request lost to the first answered again, in units of the ping interval: 0 when the pings
    took the new path (a new TTL) without losing one."""
    lost: int = 0
    ttl_before: int | None = None
    ttl_after: int | None = None
    """The TTL of the replies on the path found while the link was down."""


class ReconvergenceRun(MeasureRun[PingReply, ReconvergenceResult, ReconvergenceOptions]):
    """Ping from `source` to `address`; once the pings are steady, take the link down through `links`, measure
    the outage, bring the link up and wait until the pings take their old path again."""

    what = "reconvergence"

    def __init__(self, source: MeasureEndpoint, destination: MeasureEndpoint, address: str,
                 options: ReconvergenceOptions, *, links: LinkSwitch, lab: str, path: str = "") -> None:
        super().__init__(source, destination, address, options, lab=lab, path=path)
        self.links = links
        self._ping: PingRun | None = None

    def _default_options(self) -> ReconvergenceOptions:
        return ReconvergenceOptions()

    def _new_result(self, **who: Unpack[Who]) -> ReconvergenceResult:
        return ReconvergenceResult(options=self.options, **who)

    def cancel(self) -> None:
        super().cancel()
        if self._ping is not None:
            self._ping.cancel()

    def _measure(self) -> Iterator[PingReply]:
        self._check_options()
        self._ping = PingRun(self.source, self.destination, self.address,
                             PingOptions(count=100000, interval_s=self.options.interval_s, timeout_s=1.0),
                             preflight=False)
        replies = iter(self._ping)
        try:
            yield from self._outage(replies)
        finally:
            self._ping.cancel()
            for _ in replies:  # to its end, which the cancel makes near
                pass

    def _outage(self, replies: Iterator[PingReply]) -> Iterator[PingReply]:
        result, options = self._partial, self.options
        (a, b), lab = options.ends, result.lab
        steady = self._steady(replies, None, f"{self.source.name} gets no steady replies from {self.address}")
        result.ttl_before = steady.ttl
        yield steady
        self.links.set_link_state(lab, a, b, up=False)
        try:
            answered = steady.seq
            for reply in replies:
                yield reply
                if reply.at_s > steady.at_s + options.timeout_s:
                    break
                if reply.rtt_ms is None or reply.seq <= answered:
                    continue
                if reply.seq > answered + 1 or reply.ttl != steady.ttl:  # requests went unanswered, or a new path
                    result.lost = reply.seq - answered - 1
                    result.seconds = result.lost * options.interval_s
                    result.ttl_after = reply.ttl
                    break
                answered = reply.seq
            if self.cancelled:
                raise Cancelled()
            if result.seconds is None:
                raise MeasureError(f"taking link {a}–{b} down did not interrupt the pings from {self.source.name} "
                                   f"to {self.address} within {options.timeout_s:g} s: is the link on their path?")
        finally:
            self.links.set_link_state(lab, a, b, up=True)
        yield self._steady(replies, result.ttl_before, f"after link {a}–{b} came up again, the pings from "
                           f"{self.source.name} did not take their old path (TTL {result.ttl_before}) within "
                           f"{options.timeout_s:g} s")

    def _steady(self, replies: Iterator[PingReply], ttl: int | None, failure: str) -> PingReply:
        """The reply that ends STEADY_S of requests answered in a row with one TTL (`ttl`, if given): a path that
        routing has settled on, not one it is still choosing. The run may start up to the timeout after the first
        reply: a reply lost early does not fail a path that settles."""
        run: list[PingReply] = []
        started: float | None = None
        for reply in replies:
            started = reply.at_s if started is None else started
            if reply.rtt_ms is not None and (ttl is None or reply.ttl == ttl) and \
                    (not run or (reply.seq == run[-1].seq + 1 and reply.ttl == run[-1].ttl)):
                run.append(reply)
            else:
                run = [reply] if reply.rtt_ms is not None and (ttl is None or reply.ttl == ttl) else []
            if run and run[-1].at_s - run[0].at_s >= STEADY_S:
                return run[-1]
            if reply.at_s - started > self.options.timeout_s + STEADY_S:
                break
        if self.cancelled:
            raise Cancelled()
        raise MeasureError(failure)
