"""A flood at a known packet rate, and the GUI thread's stalls while it runs, timed with a Qt timer.

ping paces itself down to 1 ms between echoes (shorter intervals make it send as fast as it can), so N pings side
by side send N thousand echo requests a second, and get as many replies: 10,000 packets/s on the wire takes five.
"""
from __future__ import annotations

import re
import statistics
import subprocess
from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QTimer

ECHOES_PER_PING_S = 1000
TICK_MS = 10
_SENT = re.compile(r"(\d+) packets transmitted")


class PacedFlood:
    """Echo requests from a node to an address at `packets_per_s` / 2, replies making up the other half."""

    def __init__(self, command_in: Callable[[list[str]], list[str]], address: str, packets_per_s: int = 10_000,
                 seconds: int = 10) -> None:
        self.seconds = seconds
        argv = command_in(["ping", "-q", "-n", "-i", str(1 / ECHOES_PER_PING_S), "-s", "16", "-w", str(seconds),
                           address])
        self._pings = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                       for _ in range(max(1, packets_per_s // (2 * ECHOES_PER_PING_S)))]

    @property
    def running(self) -> bool:
        return any(ping.poll() is None for ping in self._pings)

    def packets_per_s(self) -> float:
        """Packets on the wire per second (requests and replies), from what the pings say they sent."""
        sent = 0
        for ping in self._pings:
            out, _ = ping.communicate()
            found = _SENT.search(out)
            assert found, out
            sent += int(found.group(1))
        return 2 * sent / self.seconds


class TickGaps:
    """The gaps, in ms, between the ticks of a TICK_MS timer on the GUI thread, while in the `with` block."""

    def __init__(self) -> None:
        self.gaps: list[float] = []
        self._clock = QElapsedTimer()
        self._timer = QTimer()
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(lambda: self.gaps.append(self._clock.restart()))

    def __enter__(self) -> TickGaps:
        self._clock.start()
        self._timer.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._timer.stop()

    @property
    def longest(self) -> float:
        return max(self.gaps[1:])

    def describe(self) -> str:
        ordered = sorted(self.gaps[1:])
        return (f"longest {ordered[-1]:.0f} ms, 99th percentile {ordered[int(len(ordered) * 0.99)]:.0f} ms, "
                f"median {statistics.median(ordered):.0f} ms")
