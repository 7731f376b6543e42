"""Writing as root into directories another user can write (a router's directory belongs to frr), and making
the directories root bind-mounts into a daemon's mount namespace.

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

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


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
    """Make `path` a real directory (never a symlink) owned by the owner of `owner_of` (the daemon's directory).

    Its parent must be root's and writable by root alone: in a directory the daemon's user can write, the user
    could rename the checked directory away and put a symlink in its place before root bind-mounts it.
    """
    parent = os.lstat(os.path.dirname(path))
    if parent.st_uid != 0 or parent.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or not stat.S_ISDIR(parent.st_mode):
        raise Planted(0, "its parent can be written by another user than root; refusing to bind-mount from it",
                      path)
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        pass
    if not stat.S_ISDIR(os.lstat(path).st_mode):
        raise Planted(0, "not a directory (a symlink?); refusing to use it", path)
    owner = os.lstat(owner_of)
    os.chown(path, owner.st_uid, owner.st_gid, follow_symlinks=False)
