"""Measurements between two nodes: iperf3 throughput, ping latency, TCP request/response rate.

No Qt and no knowledge of labs: each side is a `MeasureEndpoint` (a name and an `InNode`, the function
that wraps an argv to run inside that node). Every run yields samples as they arrive, then has a
`result` dataclass that round-trips through JSON.
"""
from vtopo.measure.history import history_csv, history_path, load_history, save_history
from vtopo.measure.iperf import IperfRun
from vtopo.measure.nodes import InNode, MeasureEndpoint, MeasureError, UnreachableError, in_netns, on_host
from vtopo.measure.ping import PingOptions, PingReply, PingResult, PingRun
from vtopo.measure.preflight import check_reachable
from vtopo.measure.results import (
    CpuUsage,
    DirectionTotals,
    IntervalSample,
    IperfOptions,
    RunResult,
    Totals,
)
from vtopo.measure.rr import RROptions, RRResult, RRRun, RRSample

__all__ = [
    "CpuUsage", "DirectionTotals", "MeasureEndpoint", "InNode", "IntervalSample", "IperfOptions", "IperfRun",
    "MeasureError", "PingOptions", "PingReply", "PingResult", "PingRun", "RROptions", "RRResult", "RRRun",
    "RRSample", "RunResult", "Totals", "UnreachableError", "check_reachable", "history_csv", "history_path",
    "in_netns", "load_history", "on_host", "save_history",
]
