"""A VM's serial console, which QEMU serves on a unix socket (`-chardev socket`): connecting to it safely, knowing
the built-in guest's prompt on it, and running one command there as if it were a local process:

    python -m vtopo.serial_console SOCKET -- CMD [ARG...]

The built-in guest keeps a root shell on its console. The command is typed there between two markers; what it prints
between them comes out on stdout line by line, and its exit status becomes this process's. SIGTERM or SIGINT types
Ctrl-C into the console, so a measurement that is cancelled leaves nothing running in the guest either. (A user's
terminal attaches to a console in vtopo.client.console; the agent connects to it for them, vtopo.deployed.)

The socket lies in the VM's directory, which belongs to the QEMU user on the direct backend: a QEMU that escaped its
guest could put a symlink there, or a link to another service's socket, and root connecting to it would hand that
service a client it sees as root. So the directory is opened without following a symlink, the socket must be one
(not a symlink) and belong to the directory's owner, and root connects through a descriptor on that very socket.
"""
from __future__ import annotations

import os
import re
import secrets
import shlex
import signal
import socket
import stat
import sys
import time
from collections.abc import Collection
from types import FrameType

GUEST_PROMPT = re.compile(rb"[\w.-]+:[^\n]*# ")
"""The built-in guest's root shell, waiting for a line (resources/guest/build.sh: PS1="$(hostname):\\w# ")."""
_ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\r")
LOG_TAIL = 4096


def at_guest_prompt(output: bytes) -> bool:
    """Whether the console's last output ends at the built-in guest's prompt (nothing typed after it)."""
    last = _ESCAPES.sub(b"", output).rsplit(b"\n", 1)[-1]
    return GUEST_PROMPT.fullmatch(last) is not None


def say_size(console: socket.socket, log: str, rows: int, columns: int) -> bool:
    """A serial line carries no window size (TIOCSWINSZ never reaches the guest): when the console's log ends at
    the built-in guest's prompt, type the terminal's size into its shell. Whether it did. The log is read without
    following a symlink, and only if it is a plain file (the VM's directory may belong to the QEMU user)."""
    if rows <= 0 or columns <= 0:
        return False
    try:
        descriptor = os.open(log, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    with os.fdopen(descriptor, "rb") as file:
        size = os.fstat(descriptor).st_size
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return False
        file.seek(max(0, size - LOG_TAIL))
        if not at_guest_prompt(file.read(LOG_TAIL)):
            return False
    console.sendall(f"stty rows {rows} cols {columns}\n".encode())
    return True


def connected(console: str | socket.socket, owners: Collection[int] | None = None) -> socket.socket:
    """A socket connected to the console at `console`, or `console` itself when it is one. The socket's directory
    must belong to one of `owners` (any user when None) and be writable by its owner alone, and the socket must
    belong to the directory's owner, unless that is root (libvirt's QEMU, whose user it is not, makes it in root's
    directory); no symlink is followed. OSError, saying why, otherwise."""
    if isinstance(console, socket.socket):
        return console
    directory = os.open(os.path.dirname(console) or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        place = os.fstat(directory)
        if (owners is not None and place.st_uid not in owners) or place.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise PermissionError(0, "its directory may be written by a user the console does not belong to",
                                  console)
        target = os.open(os.path.basename(console), os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory)
        try:
            found = os.fstat(target)
            if not stat.S_ISSOCK(found.st_mode) or place.st_uid not in (0, found.st_uid):
                raise PermissionError(0, "it is not a socket of its directory's owner (a symlink, or planted)",
                                      console)
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                connection.connect(f"/proc/self/fd/{target}")
            except OSError:
                connection.close()
                raise
            return connection
        finally:
            os.close(target)
    finally:
        os.close(directory)

MARKER_TIMEOUT_S = 15.0
"""How long the shell may take to start the command: a guest under TCG on a busy host is slow."""
SHELL_WAIT_S = 120.0
"""How long a guest may take to give its console a shell: a startup command runs while the VM is still booting."""
PROBE_INTERVAL_S = 1.0
CTRL_C = b"\x03"
LINE_BYTES = 64 << 10  # what the guest prints is its owner's to shape: a longer line is read in parts


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
                lines, pending = _lines_of(pending + data)
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
        lines, pending = _lines_of(pending + data)
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


def _lines_of(received: bytes) -> tuple[list[bytes], bytes]:
    """The whole lines in what the console sent and the part still to come, which is a line of its own once it is
    LINE_BYTES long."""
    *lines, pending = received.split(b"\n")
    return (lines + [pending], b"") if len(pending) >= LINE_BYTES else (lines, pending)


def main(args: list[str]) -> int:
    if len(args) < 3 or args[1] != "--":
        print("usage: python -m vtopo.serial_console SOCKET -- CMD [ARG...]", file=sys.stderr)
        return 2
    try:
        return run(args[0], args[2:])
    except OSError as error:
        print(f"console {args[0]}: {error.strerror or error}", file=sys.stderr)
        return 255


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
