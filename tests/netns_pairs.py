"""Test support: two network namespaces joined by a veth, made and removed by the caller's test.

Only for tests and benchmarks (it needs root). Every name carries the creating process's pid,
so parallel test sessions never collide and cleanup only removes what this process made.
"""
from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from vtopo.kinds.contract import IPERF3_SERVER
from vtopo.measure.nodes import MeasureEndpoint, in_netns

S = TypeVar("S")


@dataclass(frozen=True)
class NetnsPair:
    a: MeasureEndpoint
    b: MeasureEndpoint
    netns_a: str
    netns_b: str
    address_a: str
    address_b: str

    def pids(self) -> set[int]:
        """Processes still running inside either namespace."""
        found: set[int] = set()
        for ns in (self.netns_a, self.netns_b):
            out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
            found |= {int(p) for p in out.split()}
        return found


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@contextmanager
def netns_pair(tag: str = "t", subnet: str = "10.251") -> Iterator[NetnsPair]:
    """Namespaces vtm<pid><tag>a/b with a veth between them: a is SUBNET.0.1/24, b is SUBNET.0.2/24."""
    base = f"vtm{os.getpid()}{tag}"
    ns_a, ns_b = f"{base}a", f"{base}b"
    dev_a, dev_b = f"{base}a"[:15], f"{base}b"[:15]
    addr_a, addr_b = f"{subnet}.0.1", f"{subnet}.0.2"
    created: list[str] = []
    try:
        for ns in (ns_a, ns_b):
            _ip("netns", "add", ns)
            created.append(ns)
        _ip("link", "add", dev_a, "netns", ns_a, "type", "veth", "peer", "name", dev_b, "netns", ns_b)
        for ns, dev, addr in ((ns_a, dev_a, addr_a), (ns_b, dev_b, addr_b)):
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        yield NetnsPair(MeasureEndpoint("a", in_netns(ns_a)), MeasureEndpoint("b", in_netns(ns_b)), ns_a, ns_b, addr_a,
                        addr_b)
    finally:
        for ns in created:
            _end_processes_in(ns)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@contextmanager
def standing_iperf3_server(pair: NetnsPair, port: int) -> Iterator[MeasureEndpoint]:
    """b as a VM would be: an `iperf3 -s` that always runs in it, and no way to run commands there."""
    server = subprocess.Popen(["ip", "netns", "exec", pair.netns_b, "iperf3", "-s", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline and not subprocess.run(
            ["ip", "netns", "exec", pair.netns_b, "ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True
        ).stdout.strip():
            time.sleep(0.05)
        yield MeasureEndpoint(pair.b.name, None, {IPERF3_SERVER: port},
                              f"{pair.b.name} is a VM: vtopo has no shell inside it")
    finally:
        server.terminate()
        server.wait(5)


def samples_with_arrivals(run: Iterable[S]) -> tuple[list[S], list[float]]:
    """Iterate a run; its samples, and when each arrived (seconds from the start), to show they are live."""
    samples: list[S] = []
    arrivals: list[float] = []
    start = time.monotonic()
    for sample in run:
        arrivals.append(time.monotonic() - start)
        samples.append(sample)
    return samples, arrivals


def _end_processes_in(ns: str) -> None:
    # Only namespaces this process created: anything left in them was started by this test.
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    for pid in (int(p) for p in out.split()):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and subprocess.run(
        ["ip", "netns", "pids", ns], capture_output=True, text=True
    ).stdout.strip():
        time.sleep(0.05)
