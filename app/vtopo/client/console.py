"""This terminal on a VM's serial console, which the agent connected to (vtopo.serial_console) and handed over."""
from __future__ import annotations

import os
import selectors
import socket
import termios
import time
import tty

ESCAPE = b"\x1d"
"""Ctrl-]: leaves the console (as in telnet and virsh console); the VM keeps running."""


def attach(console: socket.socket, *, stdin: int = 0, stdout: int = 1, linger_s: float = 1.0) -> None:
    """Copy the console (a socket connected to it) to `stdout` and `stdin` to the console until the VM goes away,
    Ctrl-] is typed (on a terminal), or `stdin` ends; then wait `linger_s` for the last output. Closes `console`."""
    with console:
        saved = termios.tcgetattr(stdin) if os.isatty(stdin) else None
        if saved is not None:
            tty.setraw(stdin)
        try:
            _copy(console, stdin, stdout, typed=saved is not None, linger_s=linger_s)
        finally:
            if saved is not None:
                termios.tcsetattr(stdin, termios.TCSADRAIN, saved)


def _copy(console: socket.socket, stdin: int, stdout: int, *, typed: bool, linger_s: float) -> None:
    selector = selectors.DefaultSelector()
    selector.register(console, selectors.EVENT_READ)
    selector.register(stdin, selectors.EVENT_READ)
    until: float | None = None
    while until is None or time.monotonic() < until:
        wait = None if until is None else max(0.0, until - time.monotonic())
        for key, _ in selector.select(wait):
            if key.fileobj is console:
                data = console.recv(65536)
                if not data:
                    return  # the VM is gone
                os.write(stdout, data)
                continue
            data = os.read(stdin, 4096)
            if typed and ESCAPE in data:
                console.sendall(data[: data.index(ESCAPE)])
                return
            if not data:
                selector.unregister(stdin)
                until = time.monotonic() + linger_s
                continue
            console.sendall(data)
