"""Files a topology names (a router's startup-config, a bind-mounted frr.conf), read the way vtopo reads an image:
inside the topology's folder, or where the user said.

A relative path is resolved against the topology's folder and walked one name at a time from it, never following
a symlink (O_NOFOLLOW at every step), so `..`, an absolute path or a link cannot lead outside. Only a regular file
is opened, looked at first without opening it (opening a FIFO waits, a device may act). A path outside the folder
is read only when the user named it, or a folder above it, with --allow-outside; a topology file cannot.
"""
from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from vtopo.model.problems import ConsentRequest, Problem

OUTSIDE_FILE = "file outside the topology's folder"
MAX_FILE_BYTES = 1024 * 1024
"""A configuration file larger than this is no configuration (an FRR config of 1,000 interfaces is 100 kB)."""


class Unreadable(Exception):
    """Why a file the topology names was not read, in words that follow its name; `outside` is the real path the
    user may allow (--allow-outside, or the designer's file dialog) when that is why."""

    def __init__(self, message: str, outside: Path | None = None) -> None:
        super().__init__(message)
        self.outside = outside


class Missing(Unreadable):
    """The file does not exist."""


class _ThroughLink(Unreadable):
    """The path goes through a symlink: the user may allow the file it leads to."""


@dataclass(frozen=True)
class TopologyFolder:
    """The folder of the topology being imported, and the paths outside it the user allowed."""

    root: Path
    allowed: frozenset[Path] = field(default_factory=frozenset)

    def read(self, name: str) -> str:
        """The text of the file `name` (as the topology writes it), or Unreadable saying why not."""
        target = Path(os.path.realpath(self.root / name))
        if any(target == allowed or allowed in target.parents for allowed in self.allowed):
            return _read_at(target)
        path = PurePosixPath(name)
        if path.is_absolute() or ".." in path.parts:
            raise Unreadable(f"lies outside the topology's folder {self.root}; vtopo reads such a file only when you "
                             f"name it: --allow-outside {target}", target)
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in path.parts[:-1]:
                child = _open_folder(fd, part)
                os.close(fd)
                fd = child
            return _read_regular(fd, path.name)
        except _ThroughLink as error:
            error.outside = target
            raise
        finally:
            os.close(fd)


def _read_at(target: Path) -> str:
    """A file the user allowed, by its real path."""
    try:
        fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        raise _refusal(error, target.parent.name) from None
    try:
        return _read_regular(fd, target.name)
    finally:
        os.close(fd)


def _open_folder(directory: int, part: str) -> int:
    try:
        return os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory)
    except OSError as error:
        raise _refusal(error, part) from None


def _refusal(error: OSError, part: str) -> Unreadable:
    if error.errno in (errno.ELOOP, errno.ENOTDIR):
        return _ThroughLink(f"goes through {part}, which is a symlink or not a folder; vtopo follows no links from a "
                            "topology's folder (--allow-outside PATH reads the file it leads to)")
    if error.errno == errno.ENOENT:
        return Missing("does not exist")
    return Unreadable(f"cannot be read: {error.strerror}")


def _read_regular(directory: int, base: str) -> str:
    try:
        info = os.stat(base, dir_fd=directory, follow_symlinks=False)
    except OSError as error:
        raise _refusal(error, base) from None
    if stat.S_ISLNK(info.st_mode):
        raise _ThroughLink("is a symlink; vtopo follows no links from a topology's folder (--allow-outside PATH reads "
                         "the file it leads to)")
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable("is not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise Unreadable(f"is larger than {MAX_FILE_BYTES // 1024} kB; no configuration is that big")
    try:
        fd = os.open(base, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
    except OSError as error:
        raise _refusal(error, base) from None
    with os.fdopen(fd, "rb") as file:
        opened = os.fstat(file.fileno())
        if (opened.st_ino, opened.st_dev) != (info.st_ino, info.st_dev):
            raise Unreadable("changed while it was read")
        data = file.read(MAX_FILE_BYTES + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Unreadable(f"is not UTF-8 text (byte {error.start} cannot be decoded)") from None


def unreadable(subject: str, path: str, field_name: str, name: str, error: Unreadable) -> Problem:
    """The problem of a file the topology names at `path` that could not be read, with the consent that would let
    the import read it when that is why."""
    consent = ConsentRequest(OUTSIDE_FILE, str(error.outside), "the import reads this file, which lies outside the "
                             "topology's folder") if error.outside is not None else None
    return Problem(f"{field_name} {name!r} {error}", subject, path, consent=consent)
