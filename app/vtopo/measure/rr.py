"""TCP request/response rate between two nodes (transactions per second, like netperf TCP_RR).

netperf is not installable here (Debian ships it in non-free only), so both ends are the small
standard-library agent in `rr_agent.py`, run inside the nodes with `python3 -c`.
"""
from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Unpack

from vtopo.kinds.contract import ECHO_SERVER
from vtopo.measure.base import MeasureRun, Who
from vtopo.measure.nodes import MeasureEndpoint, MeasureError, not_installed
from vtopo.measure.process import Child
from vtopo.measure.ranges import outside
from vtopo.measure.record import RunRecord

SERVER_START_TIMEOUT_S = 10.0


@cache
def agent_source() -> str:
    return (Path(__file__).with_name("rr_agent.py")).read_text()


@dataclass(frozen=True)
class RROptions:
    duration_s: float = 10.0
    interval_s: float = 1.0
    size: int = 1
    """Bytes per request and per response."""
    python: str = sys.executable
    """The interpreter to run inside the nodes; "python3" for nodes that do not share this host's files."""

    def problems(self) -> list[str]:
        return outside(("duration", self.duration_s, 0.5, 86400, "0.5 s and 1 day"),
                       ("interval", self.interval_s, 0.1, 60, "0.1 s and 60 s"),
                       ("size", self.size, 1, 65536, "1 and 65536 bytes"))

    def describe(self) -> str:
        return f"TCP_RR {self.duration_s:g}s {self.size}B"


@dataclass(frozen=True)
class RRSample:
    start: float
    end: float
    transactions: int

    @property
    def per_second(self) -> float:
        return self.transactions / (self.end - self.start) if self.end > self.start else 0.0


@dataclass(kw_only=True)
class RRResult(RunRecord):
    options: RROptions
    transactions: int = 0
    seconds: float = 0.0
    latency_us_min: float | None = None
    latency_us_mean: float | None = None
    latency_us_max: float | None = None
    samples: list[RRSample] = field(default_factory=list)

    @property
    def transactions_per_second(self) -> float:
        return self.transactions / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["transactions_per_second"] = self.transactions_per_second
        return data



class RRRun(MeasureRun[RRSample, RRResult, RROptions]):
    """Request/response between `source` (client) and `destination` (server) at `address`."""

    what = "request/response"

    def _default_options(self) -> RROptions:
        return RROptions()

    def _new_result(self, **who: Unpack[Who]) -> RRResult:
        return RRResult(options=self.options, **who)

    def _agent(self, endpoint: MeasureEndpoint, args: list[str]) -> list[str]:
        return endpoint.argv([self.options.python, "-c", agent_source(), *args])

    def _measure(self) -> Iterator[RRSample]:
        self._check_options()
        self._check_path(self.address)
        port = self.destination.servers.get(ECHO_SERVER)
        if port is None:
            server = self._start(self._agent(self.destination, ["server"]),
                                 what=f"request/response server in {self.destination.name}", lines=True)
            port = self._wait_listening(server)
        o = self.options
        client = self._start(
            self._agent(self.source, ["client", self.address, str(port), "--duration", str(o.duration_s),
                                      "--interval", str(o.interval_s), "--size", str(o.size)]),
            what=f"request/response client in {self.source.name}", lines=True,
        )
        yield from self._follow(client)

    def _wait_listening(self, server: Child) -> int:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        seen: list[str] = []
        for line in self._lines(server, deadline, lambda: self._not_listening(seen), poll_s=0.05):
            if line.startswith("LISTENING "):
                return int(line.split()[1])
            seen.append(line)
        raise MeasureError(self._not_listening(seen))

    def _not_listening(self, said_lines: list[str]) -> str:
        said = " ".join(said_lines[-3:])
        return not_installed(self.destination.name, self.options.python, said) or \
            (f"request/response server in {self.destination.name} did not start: "
             + (said or f"no output within {SERVER_START_TIMEOUT_S:.0f} s"))

    def _follow(self, client: Child) -> Iterator[RRSample]:
        result = self._partial
        deadline = time.monotonic() + self.options.duration_s + 20.0
        other: list[str] = []
        for line in self._lines(client, deadline,
                                lambda: f"request/response client in {self.source.name} did not end in time"):
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                other.append(line)
                continue
            if "error" in data:
                raise MeasureError(f"request/response client in {self.source.name}: {data['error']}")
            if data.get("done"):
                result.transactions = int(data["transactions"])
                result.seconds = float(data["seconds"])
                result.latency_us_min = data.get("latency_us_min")
                result.latency_us_mean = data.get("latency_us_mean")
                result.latency_us_max = data.get("latency_us_max")
                result.status = "ok"
                return
            sample = RRSample(float(data["start"]), float(data["end"]), int(data["transactions"]))
            result.samples.append(sample)
            yield sample
        if not self.cancelled:
            raise MeasureError(
                f"request/response client in {self.source.name} ended without a result: "
                + (" ".join(other[-3:]) or "no output")
            )
