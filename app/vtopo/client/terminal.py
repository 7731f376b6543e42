"""The client's end of a command run on a pty in a node: this terminal, raw, copied to and from the pty's master."""
from __future__ import annotations

import errno
import fcntl
import os
import selectors
import signal
import termios
import tty


def terminal_size(stdin: int = 0) -> tuple[int, int]:
    """(rows, columns) of the terminal on `stdin`; (0, 0) when it is not one."""
    if not os.isatty(stdin):
        return 0, 0
    columns, rows = os.get_terminal_size(stdin)  # columns first, as the kernel's struct winsize is not
    return rows, columns


def relay_terminal(master: int, stdin: int = 0, stdout: int = 1) -> None:
    """Copy keys to the command and its output here until the command ends; the pty follows this terminal's size.
    Closes `master`."""
    saved = termios.tcgetattr(stdin)
    previous = signal.signal(signal.SIGWINCH, lambda _signal, _frame: _copy_size(stdin, master))
    _copy_size(stdin, master)  # a resize between the request and the handler above went unheard
    tty.setraw(stdin)
    selector = selectors.DefaultSelector()
    selector.register(master, selectors.EVENT_READ)
    selector.register(stdin, selectors.EVENT_READ)
    try:
        while True:
            for key, _ in selector.select():
                if key.fd == master:
                    try:
                        data = os.read(master, 65536)
                    except OSError as error:  # EIO: the command and everything it started closed the pty
                        if error.errno != errno.EIO:
                            raise
                        return
                    if not data:
                        return
                    os.write(stdout, data)
                else:
                    data = os.read(stdin, 4096)
                    if not data:
                        selector.unregister(stdin)
                        continue
                    os.write(master, data)
    finally:
        selector.close()
        termios.tcsetattr(stdin, termios.TCSADRAIN, saved)
        signal.signal(signal.SIGWINCH, previous)
        os.close(master)


def _copy_size(source: int, target: int) -> None:
    fcntl.ioctl(target, termios.TIOCSWINSZ, fcntl.ioctl(source, termios.TIOCGWINSZ, b"\0" * 8))
