"""A process on a pseudo-terminal of its own, read without blocking the event loop."""
from __future__ import annotations

import errno
import fcntl
import os
import pty
import signal
import struct
import subprocess
import termios

from PySide6.QtCore import QObject, QSocketNotifier, Signal

TERM = "xterm-256color"
IN_NEW_SESSION = ["setsid", "--ctty"]
"""util-linux's setsid: a new session whose controlling terminal is the pty on stdin (job control, ^C, SIGWINCH).
Not a preexec_fn, which is unsafe in a process with threads. The child is no group leader, so setsid does not fork
and the process started is the session's leader."""
HANGUP_GRACE_S = 2.0


def set_window_size(fd: int, columns: int, lines: int) -> None:
    """TIOCSWINSZ: the kernel then sends SIGWINCH to the terminal's foreground process group."""
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))


class PtyProcess(QObject):
    """Runs `argv` in a new session on a new pty. `output` carries what it writes; `finished` its exit code."""

    output = Signal(bytes)
    finished = Signal(int)

    def __init__(self, argv: list[str], columns: int, lines: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.argv = argv
        self.master, slave = pty.openpty()
        try:
            set_window_size(slave, columns, lines)
            self.process = subprocess.Popen([*IN_NEW_SESSION, *argv], stdin=slave, stdout=slave, stderr=slave,
                                            env={**os.environ, "TERM": TERM})
        except BaseException:
            os.close(self.master)
            raise
        finally:
            os.close(slave)
        os.set_blocking(self.master, False)
        self._notifier = QSocketNotifier(self.master, QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._read)
        self.exit_code: int | None = None

    @property
    def running(self) -> bool:
        return self.exit_code is None

    def write(self, data: bytes) -> None:
        if not self.running:
            return
        while data:
            try:
                data = data[os.write(self.master, data):]
            except BlockingIOError:
                return  # the pty's input queue is full: the process is not reading; drop the rest as a tty would
            except OSError:
                return

    def resize(self, columns: int, lines: int) -> None:
        if self.running:
            set_window_size(self.master, columns, lines)

    def _read(self) -> None:
        try:
            data = os.read(self.master, 65536)
        except BlockingIOError:
            return
        except OSError as error:
            if error.errno != errno.EIO:
                raise
            data = b""  # EIO: every slave end is closed, the process is gone
        if data:
            self.output.emit(data)
        else:
            self._ended()

    def _ended(self) -> None:
        self._hang_up()
        self.finished.emit(self.exit_code)

    def close(self) -> None:
        """Hang up: closing the master sends SIGHUP to the session; what ignores it is killed after a grace time."""
        if self.running:
            self._hang_up()

    def _hang_up(self) -> None:
        self._notifier.setEnabled(False)
        os.close(self.master)
        try:
            self.exit_code = self.process.wait(timeout=HANGUP_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.exit_code = self.process.wait()
