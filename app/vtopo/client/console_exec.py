"""Run one command inside a VM through its serial console, as if it were a local process:

    python -m vtopo.client.console_exec SOCKET -- CMD [ARG...]

The built-in guest keeps a root shell on its console (QEMU serves it on a unix socket). The command is
typed there between two markers; what it prints between them comes out on stdout line by line, and its
exit status becomes this process's. SIGTERM or SIGINT types Ctrl-C into the console, so a measurement
that is cancelled leaves nothing running in the guest either.
"""
from __future__ import annotations

import re
import secrets
import shlex
import signal
import socket
import sys
import time
from types import FrameType

from vtopo.host.console import connected

MARKER_TIMEOUT_S = 15.0
"""How long the shell may take to start the command: a guest under TCG on a busy host is slow."""
SHELL_WAIT_S = 120.0
"""How long a guest may take to give its console a shell: a startup command runs while the VM is still booting."""
PROBE_INTERVAL_S = 1.0
CTRL_C = b"\x03"
_ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\r")


class ConsoleBusy(OSError):
    """The console did not answer: another client holds it, or the guest's shell is not there."""


def typed_line(argv: list[str], nonce: str) -> bytes:
    """The line typed into the guest's shell. The markers are split by quotes, so the echo of this line never
    looks like the markers the shell prints. A bare program name is looked up on PATH first: busybox's shell
    would otherwise run its own applet of that name (its ping) rather than the real program (iputils ping)."""
    name = shlex.quote(argv[0])
    program = name if "/" in argv[0] else f'"$(which {name} || echo {name})"'
    command = " ".join([program, *(shlex.quote(arg) for arg in argv[1:])])
    return f'echo vtopo-start-"{nonce}"; {command}; echo vtopo-exit-$?-"{nonce}"\n'.encode()


def run(path: str | socket.socket, argv: list[str]) -> int:
    """Run `argv` on the console at `path` (or on a socket connected to it); its exit status."""
    nonce = secrets.token_hex(4)
    start = f"vtopo-start-{nonce}".encode()
    exit_line = re.compile(rb"vtopo-exit-(\d+)-" + nonce.encode())
    with connected(path) as console:

        def interrupt(signum: int, _frame: FrameType | None) -> None:
            console.sendall(CTRL_C)
            sys.exit(128 + signum)

        signal.signal(signal.SIGTERM, interrupt)
        signal.signal(signal.SIGINT, interrupt)
        console.sendall(CTRL_C)  # a half-typed line or a command left running goes first
        _wait_for_shell(console, nonce)
        console.sendall(typed_line(argv, nonce))
        return _relay(console, start, exit_line)


def _wait_for_shell(console: socket.socket, nonce: str) -> None:
    """Type a harmless echo until the shell answers it: what is typed while the guest still boots is lost, and
    the command itself must be typed only once."""
    answer = f"vtopo-ready-{nonce}".encode()
    deadline = time.monotonic() + SHELL_WAIT_S
    pending = b""
    while time.monotonic() < deadline:
        console.sendall(f'echo vtopo-ready-"{nonce}"\n'.encode())
        console.settimeout(PROBE_INTERVAL_S)
        try:
            while True:
                data = console.recv(65536)
                if not data:
                    raise ConsoleBusy("the VM's console closed: the VM stopped")
                pending += data
                *lines, pending = pending.split(b"\n")
                if any(_ESCAPES.sub(b"", line).endswith(answer) for line in lines):
                    return
        except TimeoutError:
            continue
    raise ConsoleBusy(f"the VM's console did not answer within {SHELL_WAIT_S:g} s: is a `vtopo console` attached "
                      "to it?")


def _relay(console: socket.socket, start: bytes, exit_line: re.Pattern[bytes]) -> int:
    started = False
    pending = b""
    console.settimeout(MARKER_TIMEOUT_S)
    while True:
        try:
            data = console.recv(65536)
        except TimeoutError:
            raise ConsoleBusy("the VM's console did not answer: is a `vtopo console` attached to it?") from None
        if not data:
            raise ConsoleBusy("the VM's console closed: the VM stopped")
        pending += data
        *lines, pending = pending.split(b"\n")
        for raw in lines:
            line = _ESCAPES.sub(b"", raw)
            if not started:
                if line.endswith(start):
                    started = True
                    console.settimeout(None)
                continue
            if (done := exit_line.search(line)) is not None:
                return int(done[1])
            sys.stdout.buffer.write(line + b"\n")
            sys.stdout.flush()


def main(args: list[str]) -> int:
    if len(args) < 3 or args[1] != "--":
        print("usage: python -m vtopo.client.console_exec SOCKET -- CMD [ARG...]", file=sys.stderr)
        return 2
    try:
        return run(args[0], args[2:])
    except OSError as error:
        print(f"console {args[0]}: {error.strerror or error}", file=sys.stderr)
        return 255


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
