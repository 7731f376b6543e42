"""Writing as root into directories another user can write (a router's directory belongs to frr).

Root never follows a symlink there: a daemon running as that user could plant one, pointing at /etc/shadow, so
that root's next write or chown lands on it. Files are opened with O_NOFOLLOW (and O_NONBLOCK, so a planted FIFO
fails instead of blocking), and directories are checked with lstat and handed over with lchown.
"""
from __future__ import annotations

import os
import stat

_WRITE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Planted(OSError):
    """Something other than what vtopo makes sits where it writes."""


def write_file(path: str, content: str) -> None:
    try:
        fd = os.open(path, _WRITE, 0o644)
    except OSError as error:
        raise Planted(error.errno, f"{os.strerror(error.errno or 0)}; refusing to write through it", path) from None
    with os.fdopen(fd, "w") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Planted(0, "not a regular file; refusing to write to it", path)
        file.write(content)


def private_directory(path: str, owner_of: str) -> None:
    """Make `path` a real directory (never a symlink) owned by the owner of `owner_of`."""
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        pass
    if not stat.S_ISDIR(os.lstat(path).st_mode):
        raise Planted(0, "not a directory (a symlink?); refusing to use it", path)
    owner = os.lstat(owner_of)
    os.chown(path, owner.st_uid, owner.st_gid, follow_symlinks=False)
