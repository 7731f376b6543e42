"""A flood at a known packet rate, and the GUI thread's stalls while it runs, timed with a Qt timer.

iperf3 paces UDP datagrams itself and catches up when it falls behind, so it holds a packet rate on a loaded machine
where ping's 1 ms pacing did not (five pings at -i 0.001 sent 100 to 480 echoes a second each with a busy CPU).
"""
from __future__ import annotations

import json
import statistics
import subprocess
import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QTimer

TICK_MS = 10
PORT = 5399
DATAGRAM_BYTES = 64
CommandIn = Callable[[str, list[str]], list[str]]
"""(node, argv) -> the argv that runs it in that node of a deployed lab"""


class PacedFlood:
    """UDP datagrams from `source` to `address` (on `destination`) at `packets_per_s`, for `seconds`; a context
    manager that ends both iperf3s on the way out."""

    def __init__(self, command_in: CommandIn, source: str, destination: str, address: str,
                 packets_per_s: int = 10_000, seconds: int = 10) -> None:
        self.seconds = seconds
        self._server = subprocess.Popen(command_in(destination, ["iperf3", "-s", "-1", "-p", str(PORT)]),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        listening = command_in(destination, ["ss", "-lntH", f"sport = :{PORT}"])
        deadline = time.monotonic() + 10
        while not subprocess.run(listening, capture_output=True, text=True).stdout.strip():
            assert time.monotonic() < deadline and self._server.poll() is None, "iperf3 -s did not start listening"
            time.sleep(0.05)
        bits = packets_per_s * DATAGRAM_BYTES * 8
        self._client = subprocess.Popen(command_in(source, ["iperf3", "-c", address, "-p", str(PORT), "-u", "-b",
                                                            str(bits), "-l", str(DATAGRAM_BYTES), "-t", str(seconds),
                                                            "-J"]),
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def __enter__(self) -> PacedFlood:
        return self

    def __exit__(self, *_exc: object) -> None:
        for process in (self._client, self._server):
            if process.poll() is None:
                process.kill()
            process.wait()
        if self._client.stdout is not None:
            self._client.stdout.close()

    @property
    def running(self) -> bool:
        return self._client.poll() is None

    def packets_per_s(self) -> float:
        """Datagrams sent per second, as iperf3 counted them."""
        out, _ = self._client.communicate()
        total = json.loads(out)["end"]["sum"]
        return float(total["packets"]) / float(total["seconds"])


def _waited_for_a_cpu_ms() -> float:
    """How long this thread has been ready to run but waiting for a CPU, in all (the kernel's schedstat)."""
    with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as stats:
        return int(stats.read().split()[1]) / 1e6


class TickGaps:
    """The gaps, in ms, between the ticks of a TICK_MS timer on the GUI thread, while in the `with` block; and of
    each gap, how long the thread was ready to run but the kernel gave it no CPU (other processes had them all)."""

    def __init__(self) -> None:
        self.gaps: list[tuple[float, float]] = []
        self._clock = QElapsedTimer()
        self._waited = 0.0
        self._timer = QTimer()
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        waited = _waited_for_a_cpu_ms()
        self.gaps.append((float(self._clock.restart()), waited - self._waited))
        self._waited = waited

    def __enter__(self) -> TickGaps:
        self._waited = _waited_for_a_cpu_ms()
        self._clock.start()
        self._timer.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._timer.stop()

    @property
    def longest(self) -> float:
        """The longest gap."""
        return max(gap for gap, _ in self.gaps[1:])

    @property
    def longest_blocked(self) -> float:
        """The longest gap less the time the thread waited for a CPU: how long the designer itself held it up."""
        return max(gap - min(gap, waited) for gap, waited in self.gaps[1:])

    def describe(self) -> str:
        ordered = sorted(self.gaps[1:])
        gap, waited = ordered[-1]
        return (f"longest gap {gap:.0f} ms ({waited:.0f} ms of it waiting for a CPU), longest held up "
                f"{self.longest_blocked:.0f} ms, 99th percentile gap {ordered[int(len(ordered) * 0.99)][0]:.0f} ms, "
                f"median {statistics.median(g for g, _ in ordered):.0f} ms")
