"""A serial console carries no window size: when `vtopo console` (or the designer's console tab) attaches and the
built-in guest's shell waits at its prompt, the terminal's size is typed into it as `stty rows R cols C`; never
while a program runs there, and never from a log that is not a plain file."""
from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from vtopo.serial_console import at_guest_prompt, say_size


@pytest.mark.parametrize(("output", "waiting"), [
    (b"Welcome\r\nvm1:~# ", True),
    (b"vm1:/tmp# ls\r\nfile\r\nvm1:/tmp# ", True),
    (b"\x1b[?2004hrouter-1:~# ", True),
    (b"vm1:~# top\r\n\x1b[H\x1b[J Mem: 1000K used", False),  # a program runs
    (b"vm1:~# ping 10.0.0.1", False),  # a line is half typed
    (b"", False),
    (b"[    1.234] Run /init as init process\r\n", False),  # still booting
])
def test_the_guests_prompt_is_recognised(output: bytes, waiting: bool) -> None:
    assert at_guest_prompt(output) is waiting


def typed(log: Path, rows: int = 40, columns: int = 120) -> bytes:
    ours, guest = socket.socketpair()
    with ours, guest:
        said = say_size(ours, str(log), rows, columns)
        guest.setblocking(False)
        try:
            data = guest.recv(4096)
        except BlockingIOError:
            data = b""
    assert said is bool(data)
    return data


def test_the_size_is_typed_at_the_prompt_only(tmp_path: Path) -> None:
    log = tmp_path / "console.log"
    log.write_bytes(b"x" * 10_000 + b"\r\nvm1:~# ")
    assert typed(log) == b"stty rows 40 cols 120\n"
    assert typed(log, 0, 0) == b""  # not on a terminal: nothing to say
    log.write_bytes(b"vm1:~# vi /etc/hosts\r\n~\r\n~")
    assert typed(log) == b""
    assert typed(tmp_path / "missing.log") == b""


def test_a_log_that_is_not_a_plain_file_is_not_read(tmp_path: Path) -> None:
    real = tmp_path / "real.log"
    real.write_bytes(b"vm1:~# ")
    link = tmp_path / "console.log"
    link.symlink_to(real)
    assert typed(link) == b""
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    assert typed(fifo) == b""  # and it does not block on it
