"""One capture for the dock: a worker thread finds where to listen, starts the capture agent (a process of its own,
vtopo.capture.agent) and hands its batches of decoded packets to the GUI. The agent does the per-packet work, so a
flood does not hold the GIL the GUI thread needs."""
from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from vtopo.capture import CaptureError, CaptureTarget
from vtopo.capture.agent import read_report, spec_of
from vtopo.capture.engine import new_capture_file

STOP_GRACE_S = 3.0

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
        self._lock = threading.Lock()
        self._stopped = False
        self._agent: subprocess.Popen[bytes] | None = None
        self.paused = False
        self.file: Path = new_capture_file()
        """The full capture, pcapng; removed by `close()`."""

    @Slot()
    def work(self) -> None:
        try:
            target = self._find_target()
        except CaptureError as error:
            self.failed.emit(str(error))
            self.finished.emit()
            return
        with self._lock:
            if not self._stopped:
                self._agent = subprocess.Popen([sys.executable, "-m", "vtopo.capture.agent",
                                                spec_of(target, self._bpf, self.file)],
                                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                               start_new_session=True)
        if self._agent is not None:
            self._relay(self._agent, target)
        self.finished.emit()

    def _relay(self, agent: subprocess.Popen[bytes], target: CaptureTarget) -> None:
        assert agent.stdout is not None
        not_listed_while_paused = 0
        while (report := read_report(agent.stdout)) is not None:
            if report.error:
                self.failed.emit(report.error)
            elif report.listening:
                self.listening.emit(target)
            if report.packets and self.paused:
                not_listed_while_paused += len(report.packets)
            elif report.packets:
                self.batch.emit(report.packets)
            if report.captured or report.finished:
                self.counters.emit(report.captured, report.kernel_drops, report.not_listed + not_listed_while_paused)
        agent.wait()
        agent.stdout.close()

    def stop(self) -> None:
        """End the agent (and its tcpdump) by its pid; the worker then finishes. Safe from any thread."""
        with self._lock:
            self._stopped = True
            agent = self._agent
        if agent is not None and agent.poll() is None:
            agent.send_signal(signal.SIGTERM)
            try:
                agent.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                agent.kill()

    def close(self) -> None:
        self.stop()
        self.file.unlink(missing_ok=True)
