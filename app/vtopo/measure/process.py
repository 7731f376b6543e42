"""Child processes of a measurement: started in their own session, read line by line, ended by pid.

Each child is the leader of a new session, so `stop()` signals exactly the process group this
module created (the wrapper an `InNode` adds and everything under it) and nothing else. What runs in a
node is whatever the lab's owner put there, so this process reads a bounded part of what it prints:
OUTPUT_BYTES of each stream, lines of at most LINE_CHARACTERS.
"""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from typing import IO, Any

_EOF = None
OUTPUT_BYTES = 64 << 20  # iperf3's JSON for a minute of 128 parallel streams, many times over
LINE_CHARACTERS = 64 << 10  # a line of ping or of iperf3's, many times over; a longer one is read in parts


class Child:
    """One process of a run.

    With `lines=True` its stdout and stderr (merged) are read by a thread into a queue, so the
    caller can wait for the next line with a timeout and still react to a cancel. Otherwise both
    go to temporary files, read with `output()` after the process ends (no pipe can fill up).
    """

    def __init__(self, argv: list[str], *, what: str, lines: bool) -> None:
        self.argv = argv
        self.what = what
        self._lines: queue.Queue[str | None] | None = None
        self._out: IO[bytes] | None = None
        self._err: IO[bytes] | None = None
        self._stop_lock = threading.Lock()
        try:
            if lines:
                self.popen: subprocess.Popen[Any] = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    start_new_session=True, text=True, bufsize=1, errors="replace",
                )
                self._lines = queue.Queue()
                self._reader = threading.Thread(target=self._read, name=f"read {what}", daemon=True)
                self._reader.start()
            else:
                self._out = tempfile.TemporaryFile()
                self._err = tempfile.TemporaryFile()
                self.popen = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._err, start_new_session=True,
                )
        except OSError as e:
            self._close_files()
            raise OSError(e.errno, f"cannot start {what} ({argv[0]}): {e.strerror}") from e

    @property
    def pid(self) -> int:
        return self.popen.pid

    def _read(self) -> None:
        stdout = self.popen.stdout
        assert stdout is not None and self._lines is not None
        for line in iter(lambda: stdout.readline(LINE_CHARACTERS), ""):
            self._lines.put(line.rstrip("\n"))
        self._lines.put(_EOF)

    def next_line(self, timeout: float) -> str | None:
        """The next output line; `None` at end of output; raises `queue.Empty` on timeout."""
        assert self._lines is not None
        return self._lines.get(timeout=timeout)

    def running(self) -> bool:
        return self.popen.poll() is None

    def wait(self, timeout: float) -> int | None:
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, grace_s: float = 1.0) -> None:
        """End the process group by its id (TERM, then KILL after `grace_s`) and reap the leader."""
        with self._stop_lock:
            self._stop(grace_s)

    def _stop(self, grace_s: float) -> None:
        if self.popen.poll() is None:
            # The leader is alive and unreaped, so its pid is still our process group's id.
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + grace_s
            while self.popen.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            if self.popen.poll() is None:
                try:
                    os.killpg(self.popen.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.popen.wait()
        if self._lines is not None:
            self._reader.join(timeout=2.0)
            if self.popen.stdout is not None:
                self.popen.stdout.close()

    def output(self) -> tuple[str, str]:
        """(stdout, stderr) of a process started with `lines=False`, once it has ended."""
        assert self._out is not None and self._err is not None
        result = []
        for f in (self._out, self._err):
            f.seek(0)
            result.append(f.read(OUTPUT_BYTES).decode(errors="replace"))
        return result[0], result[1]

    def _close_files(self) -> None:
        for f in (self._out, self._err):
            if f is not None:
                f.close()

    def close(self) -> None:
        self.stop()
        self._close_files()


HUNG_AFTER_S = 60.0


def run_quick(argv: list[str], timeout_s: float = HUNG_AFTER_S) -> subprocess.CompletedProcess[str]:
    """Run a short command (a probe) to completion; its whole session is killed on timeout.

    A probe bounds its own time (ping's -w and -W), so the default timeout only ends one that hangs: starting a
    command through the agent can take seconds on a busy machine, and that wait is not the probe's."""
    child = Child(argv, what=argv[0], lines=False)
    try:
        if child.wait(timeout_s) is None:
            child.stop(grace_s=0)
        out, err = child.output()
    finally:
        child.close()
    return subprocess.CompletedProcess(argv, child.popen.returncode, out, err)
