"""One capture for the dock, as a job for the Worker idiom (vtopo.gui.workers): it finds where to listen, starts
the capture agent (a process of its own, vtopo.capture.capture_process) and reports what the agent sends. The agent does
the per-packet work, so a flood does not hold the GIL the GUI thread needs."""
from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from vtopo.capture import CaptureTarget
from vtopo.capture.capture_process import read_report, spec_of
from vtopo.capture.engine import new_capture_file
from vtopo.gui.workers import Report

STOP_GRACE_S = 3.0

TargetFinder = Callable[[], CaptureTarget]
"""Finds the capture's target (reads the deployed lab back); runs in the worker thread. Raises CaptureError."""


class CaptureFeed:
    """The job: reports the CaptureTarget once found, then each vtopo.capture.capture_process.Report as it arrives."""

    def __init__(self, find_target: TargetFinder, bpf: str = "") -> None:
        self._find_target = find_target
        self._bpf = bpf
        self._lock = threading.Lock()
        self._stopped = False
        self._agent: subprocess.Popen[bytes] | None = None
        self.file: Path = new_capture_file()
        """The full capture, pcapng; removed by `close()`."""

    def __call__(self, report: Report) -> None:
        target = self._find_target()
        report(target)
        with self._lock:
            if self._stopped:
                return
            self._agent = agent = subprocess.Popen(
                [sys.executable, "-m", "vtopo.capture.capture_process", spec_of(target, self._bpf, self.file)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, start_new_session=True)
        assert agent.stdout is not None
        while (message := read_report(agent.stdout)) is not None:
            report(message)
        agent.wait()
        agent.stdout.close()

    def stop(self) -> None:
        """End the agent (and its tcpdump) by its pid; the job then returns. Safe from any thread."""
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
