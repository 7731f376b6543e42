"""Child processes of a measurement: started in their own session, read line by line, ended by pid.

Each child is the leader of a new session, so `stop()` signals exactly the process group this
module created (the wrapper an `InNode` adds and everything under it) and nothing else. What runs in a
node is whatever the lab's owner put there, so this process keeps a bounded part of what it prints:
OUTPUT_BYTES of each stream, lines of at most LINE_CHARACTERS; what it prints beyond is read and dropped,
never written anywhere (the measuring process may be root's, whose disk a file of it would fill).
"""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
from typing import IO, Any

_EOF = None
OUTPUT_BYTES = 64 << 20  # iperf3's JSON for a minute of 128 parallel streams, many times over
LINE_CHARACTERS = 64 << 10  # a line of ping or of iperf3's, many times over; a longer one is read in parts
CHUNK_BYTES = 64 << 10  # a pipe's buffer
LINGERING_S = 1.0  # how long the output of a process that ended is read for, when what it left running holds it


class Child:
    """One process of a run.

    With `lines=True` its stdout and stderr (merged) are read by a thread into a queue, so the
    caller can wait for the next line with a timeout and still react to a cancel. Otherwise each
    is read by a thread of its own while it runs, its first OUTPUT_BYTES kept for `output()` after
    the process ends.
    """

    def __init__(self, argv: list[str], *, what: str, lines: bool) -> None:
        self.argv = argv
        self.what = what
        self._lines: queue.Queue[str | None] | None = None
        self._kept: tuple[_Kept, _Kept] | None = None
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
                self.popen = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    start_new_session=True,
                )
                assert self.popen.stdout is not None and self.popen.stderr is not None
                self._kept = (_Kept(self.popen.stdout, f"{what}'s output"), _Kept(self.popen.stderr, f"{what}'s errors"))
        except OSError as e:
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
        assert self._kept is not None
        out, err = self._kept
        return out.text(), err.text()

    def close(self) -> None:
        self.stop()


class _Kept:
    """What a process prints on one pipe, read by a thread while it runs: its first OUTPUT_BYTES kept, the rest read
    and dropped, so that a command printing without end neither blocks on its pipe nor fills memory or a disk. What
    it left running that holds the pipe after it ended is read, within the same bound, until it lets go of it."""

    def __init__(self, pipe: IO[bytes], what: str) -> None:
        self._pipe = pipe
        self._kept = bytearray()
        self._reader = threading.Thread(target=self._read, name=f"read {what}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        with self._pipe:
            for chunk in iter(lambda: os.read(self._pipe.fileno(), CHUNK_BYTES), b""):
                self._kept += chunk[:OUTPUT_BYTES - len(self._kept)]

    def text(self) -> str:
        """What was kept, once the pipe ended or LINGERING_S after this is asked (the process that printed ended)."""
        self._reader.join(LINGERING_S)
        return bytes(self._kept).decode(errors="replace")


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
