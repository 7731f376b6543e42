"""Child processes of a measurement: started in their own session, read line by line, ended by pid.

Each child is the leader of a new session, so `stop()` signals exactly the process group this
module created (the wrapper an `InNode` adds and everything under it) and nothing else.
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
        assert self.popen.stdout is not None and self._lines is not None
        for line in self.popen.stdout:
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
            result.append(f.read().decode(errors="replace"))
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
    child = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, errors="replace", start_new_session=True,
    )
    try:
        out, err = child.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, err = child.communicate()
    return subprocess.CompletedProcess(argv, child.returncode, out, err)
