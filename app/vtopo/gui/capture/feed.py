"""One capture in a worker thread: it finds where to listen, starts tcpdump, and hands decoded packets to the GUI
in batches. Decoding is bounded per batch, so a flood costs the GUI thread no more than a quiet link does."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

from vtopo.capture import Capture, CaptureError, CaptureTarget, summarize

BATCH_S = 0.1
DECODE_PER_BATCH = 100
"""At most this many packets are decoded for the list per batch (1,000 a second); the rest stay in the file."""
COUNTERS_EVERY_S = 1.0

TargetFinder = Callable[[], CaptureTarget]
"""Finds the capture's target (reads the deployed lab back); runs in the worker thread. Raises CaptureError."""


class CaptureFeed(QObject):
    listening = Signal(object)  # the CaptureTarget, once tcpdump listens
    failed = Signal(str)
    batch = Signal(object)  # list of (PacketSummary, RawPacket), oldest first
    counters = Signal(int, int, int)  # captured, dropped by the kernel, captured but not decoded for the list
    finished = Signal()

    def __init__(self, find_target: TargetFinder, bpf: str = "") -> None:
        super().__init__()
        self._find_target = find_target
        self._bpf = bpf
        self._stop = threading.Event()
        self.paused = False
        self.capture: Capture | None = None

    @Slot()
    def work(self) -> None:
        try:
            self.capture = Capture(self._find_target(), self._bpf)
            self.capture.start()
        except CaptureError as error:
            self.failed.emit(str(error))
            self.finished.emit()
            return
        self.listening.emit(self.capture.target)
        self._relay(self.capture)
        self.finished.emit()

    def _relay(self, capture: Capture) -> None:
        not_shown = 0
        counted = time.monotonic()
        while not self._stop.wait(BATCH_S):
            arrived = capture.take()
            if self.paused:
                not_shown += len(arrived)
                arrived = []
            elif len(arrived) > DECODE_PER_BATCH:
                not_shown += len(arrived) - DECODE_PER_BATCH
                arrived = arrived[-DECODE_PER_BATCH:]
            if arrived:
                self.batch.emit([(summarize(packet), packet) for packet in arrived])
            if time.monotonic() - counted >= COUNTERS_EVERY_S or not capture.running:
                counted = time.monotonic()
                capture.ask_for_drops()
                self.counters.emit(capture.captured, capture.kernel_drops, not_shown)
            if not capture.running:
                return
        capture.stop()
        self.counters.emit(capture.captured, capture.kernel_drops, not_shown)

    def stop(self) -> None:
        """Ask the worker to end tcpdump; `finished` follows. Safe from any thread."""
        self._stop.set()
