"""Reading the iperf3 3.12 client's text output (run with -f k -V --forceflush): its interval
lines as they arrive, then its summary. Used when the destination has a standing iperf3 server
whose output vtopo cannot read (a VM's built-in guest), so the client is the only witness.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from vtopo.measure.iperf_parse import (A_COUNT, BYTE_UNITS, INTERVAL_LINE, RATE_UNITS, UDP_RECEIVER, ClientReport,
                                       role_direction)
from vtopo.measure.results import CpuUsage, Direction, DirectionTotals, IntervalSample, IperfOptions, Totals

_CPU = re.compile(
    r"^CPU Utilization: local/\w+ (?P<lt>[\d.]+)% \((?P<lu>[\d.]+)%u/(?P<ls>[\d.]+)%s\), "
    r"remote/\w+ (?P<rt>[\d.]+)% \((?P<ru>[\d.]+)%u/(?P<rs>[\d.]+)%s\)"
)
_VERSION = re.compile(r"^(?P<version>iperf 3\.\S+)")
_ERROR = re.compile(r"^iperf3: error - (?P<message>.*)$")


@dataclass(frozen=True)
class _SummaryLine:
    stream: str
    direction: Direction
    side: str  # "sender" or "receiver"
    totals: Totals


def client_error(lines: list[str]) -> str | None:
    """The client's own error message ("unable to connect to server: ..."), if it printed one."""
    for line in lines:
        if (m := _ERROR.match(line.strip())) is not None:
            return m["message"]
    return None


def _summary_line(line: str, default: Direction) -> _SummaryLine | None:
    m = INTERVAL_LINE.match(line.strip())
    if m is None:
        return None
    rest = m["rest"].strip()
    side = next((s for s in ("sender", "receiver") if rest.endswith(s)), None)
    if side is None:
        return None
    rest = rest[: -len(side)].strip()
    direction = role_direction(m["role"], default)
    totals = Totals(
        bytes=int(float(m["xfer"]) * BYTE_UNITS[m["xunit"]]),
        seconds=float(m["end"]) - float(m["start"]),
        bits_per_second=float(m["rate"]) * RATE_UNITS[m["runit"]],
    )
    if (udp := UDP_RECEIVER.match(rest)) is not None:
        totals = replace(totals, packets=int(udp["total"]))
        if side == "receiver":
            lost = max(0, int(udp["lost"]))
            totals = replace(totals, jitter_ms=float(udp["jitter"]), lost_packets=lost,
                             lost_percent=100.0 * lost / int(udp["total"]) if int(udp["total"]) else 0.0)
    elif (tcp := A_COUNT.match(rest)) is not None and side == "sender":
        totals = replace(totals, retransmits=int(tcp["count"]))
    return _SummaryLine(m["id"], direction, side, totals)


def parse_client_text(lines: list[str], options: IperfOptions, live: list[IntervalSample]) -> ClientReport:
    """The client's summary (sender and receiver totals per direction, both CPU figures, the
    version) from its text output; `live` are the interval samples already read from it."""
    default: Direction = "reverse" if options.reverse else "forward"
    summaries = [s for s in (_summary_line(line, default) for line in lines) if s is not None]
    wanted = "SUM" if options.parallel > 1 else None
    by_key = {(s.direction, s.side): s.totals for s in summaries if wanted is None or s.stream == wanted}
    totals: dict[Direction, DirectionTotals | None] = {}
    for direction in ("forward", "reverse"):
        sent, received = by_key.get((direction, "sender")), by_key.get((direction, "receiver"))
        totals[direction] = DirectionTotals(sent, received) if sent and received else None
    cpu_host = cpu_remote = None
    version = ""
    for line in lines:
        if (cpu := _CPU.match(line.strip())) is not None:
            cpu_host = CpuUsage(float(cpu["lt"]), float(cpu["lu"]), float(cpu["ls"]))
            cpu_remote = CpuUsage(float(cpu["rt"]), float(cpu["ru"]), float(cpu["rs"]))
        elif not version and (v := _VERSION.match(line.strip())) is not None:
            version = v["version"]
    return ClientReport(list(live), totals["forward"], totals["reverse"], cpu_host, cpu_remote, version)
