"""Connect to a VM's serial console: QEMU serves it on a unix socket (`-chardev socket`). (A user's terminal attaches
to it in vtopo.client.console.)

The socket lies in the VM's directory, which belongs to the QEMU user on the direct backend: a QEMU that escaped its
guest could put a symlink there, or a link to another service's socket, and root connecting to it would hand that
service a client it sees as root. So the directory is opened without following a symlink, the socket must be one
(not a symlink) and belong to the directory's owner, and root connects through a descriptor on that very socket.
"""
from __future__ import annotations

import os
import re
import socket
import stat
from collections.abc import Collection

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
