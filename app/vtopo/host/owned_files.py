"""Every directory and file vtopo makes under /run/vtopo and /var/lib/vtopo: made with an explicit mode, never
the one the umask of whoever runs vtopo would leave, and written as root without following a symlink.

Directories are PRIVATE (root alone, or the daemon a directory is handed to), SHARED with the vtopo group (the
directories of lab records, which members may list), or a PASSAGE that other users may go through but not list (the
lab's directory, once it holds a directory of frr's or of the QEMU user's). Lab records, journals, console logs and
daemons' files are PRIVATE_FILE: a member's client asks the agent about the member's own labs. A daemon's
configuration is SHARED_FILE, readable by the daemon's group.

Some of these directories belong to another user (a router's directory belongs to frr). Root never follows a
symlink there: a daemon running as that user could plant one, pointing at /etc/shadow, so that root's next write or
chown lands on it. Files are opened with O_NOFOLLOW (and O_NONBLOCK, so a planted FIFO fails instead of blocking),
and directories are checked with lstat and handed over with lchown.
"""
from __future__ import annotations

import errno
import fcntl
import grp
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vtopo.model.rules import CLIENTS_GROUP, PASSAGE_DIRECTORY, PRIVATE_DIRECTORY

PRIVATE, SHARED, PASSAGE = PRIVATE_DIRECTORY, 0o750, PASSAGE_DIRECTORY
PRIVATE_FILE, SHARED_FILE = 0o600, 0o640
DAEMON_UMASK = 0o077  # the daemons vtopo starts make their pid files, sockets and logs for themselves alone

_PLANTED = {errno.ELOOP, errno.ENOTDIR, errno.ENXIO, errno.EISDIR}  # a symlink, a FIFO, a directory where we open
_WRITE = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # truncated once checked


class Planted(OSError):
    """Something other than what vtopo makes sits where it writes."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def clients_gid() -> int:
    """The vtopo group's id, or -1 (keep root's group) on a host where setup did not create it."""
    try:
        return grp.getgrnam(CLIENTS_GROUP).gr_gid
    except KeyError:
        return -1


def make_directory(path: str | Path, mode: int = PRIVATE, *, gid: int = -1, exist_ok: bool = False) -> None:
    """Make the directory `path` with exactly `mode` (and group `gid`); the parents it lacks become a PASSAGE, or
    get `mode` and `gid` when `mode` is SHARED. With `exist_ok`, a directory already there (a real one, root's) gets
    the mode and group too."""
    path = Path(path)
    if not path.parent.is_dir():
        parents = (mode, gid) if mode == SHARED else (PASSAGE, -1)
        make_directory(path.parent, parents[0], gid=parents[1], exist_ok=True)
    try:
        os.mkdir(path, mode)
    except FileExistsError:
        if not exist_ok:
            raise
    _set_mode(path, mode, gid)


def _set_mode(path: str | Path, mode: int, gid: int = -1) -> None:
    """Give the directory `path`, when it is a real one of ours, exactly `mode` (mkdir's passes through the umask)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        if error.errno not in _PLANTED:
            raise
        raise Planted(error.errno, f"{os.strerror(error.errno or 0)}; refusing to use it", str(path)) from None
    try:
        if os.fstat(fd).st_uid == os.geteuid():
            os.fchmod(fd, mode)
            if gid != -1:
                os.fchown(fd, -1, gid)
    finally:
        os.close(fd)


def open_file(path: str | Path, flags: int, mode: int = PRIVATE_FILE, *, gid: int = -1) -> int:
    """A descriptor on the regular file `path`, created (or, when already there, set) with exactly `mode` and group
    `gid`; never through a symlink."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as error:
        if error.errno not in _PLANTED:
            raise
        raise Planted(error.errno, f"{os.strerror(error.errno or 0)}; refusing to write through it",
                      str(path)) from None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise Planted(0, "not a regular file; refusing to write to it", str(path))
        if found.st_nlink > 1:  # a hard link another user made to a file elsewhere
            raise Planted(0, "a file with another name elsewhere; refusing to write to it", str(path))
        os.fchmod(fd, mode)
        if gid != -1:
            os.fchown(fd, -1, gid)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def held(fd: int, shared: bool = False) -> Iterator[None]:
    """A lock on the open file or directory `fd` (exclusive, or `shared` with other shared holders) while the block
    runs; `fd` is closed after it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def write_file(path: str | Path, content: str, mode: int = PRIVATE_FILE, *, gid: int = -1) -> None:
    with os.fdopen(open_file(path, _WRITE, mode, gid=gid), "w") as file:
        file.truncate()
        file.write(content)


def write_for_daemon(path: str, content: str, executable: bool = False) -> None:
    """A file root writes for a daemon into its directory (a router's config): readable by the directory's group,
    and a script the daemon runs when `executable`."""
    from vtopo.ops.files import EXECUTABLE_FILE  # the mode the explained script gives it (importing an op loads all)

    write_file(path, content, EXECUTABLE_FILE if executable else SHARED_FILE,
               gid=os.lstat(os.path.dirname(path)).st_gid)


def hand_over(path: str, user: str | tuple[int, int]) -> None:
    """Give the directory `path` to a daemon's user (user and group of that name, or a uid and gid); the directory it
    is in becomes a PASSAGE, so that the user reaches it without seeing what else is there."""
    if isinstance(user, str):
        shutil.chown(path, user, user)
    else:
        os.chown(path, *user, follow_symlinks=False)
    _set_mode(os.path.dirname(path), PASSAGE)


def open_to_read(path: str | Path) -> int:
    """A descriptor on the regular file `path` in a directory another user can write (a pid file, a daemon's log):
    never through a symlink, never waiting on a FIFO."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Planted(0, "not a regular file; refusing to read it", str(path))
    return fd


def remove_if_empty(path: str | Path) -> None:
    """Remove the directory `path` when nothing is in it; keep it when something is, or when it is a mount point (a
    simulated host's, scripts/sim-host.sh, holds /run/vtopo so)."""
    try:
        os.rmdir(path)
    except OSError as error:
        if error.errno not in (errno.ENOENT, errno.ENOTEMPTY, errno.EBUSY):
            raise


def read_small_file(path: str | Path, limit: int = 4096) -> str:
    """The first `limit` bytes of `path`, opened as open_to_read does."""
    fd = open_to_read(path)
    try:
        return os.read(fd, limit).decode(errors="replace")
    finally:
        os.close(fd)

