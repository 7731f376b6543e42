"""The `vtopo.kinds` entry points of the installed distributions, as importlib.metadata finds them, kept between runs
in the user's cache under a stamp of what that scan reads: each folder on sys.path and each distribution's
entry_points.txt in it, by modification time. A command that meets the same stamp again neither loads
importlib.metadata nor reads every distribution's entry points (a sixth of `vtopo kinds`).

The cache names the modules that make the kinds, which vtopo imports: it is read only from a file and a folder of the
user's own that nobody else may write, and a cache that is not is ignored (the scan is made, and kept if it can be).
"""
from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any, Iterable, Protocol

from vtopo.user_data import PRIVATE_FILE, cache_home, make_directory

ENTRY_POINT_GROUP = "vtopo.kinds"
CACHE_FILE = "kind-entry-points.json"
DISTRIBUTIONS = (".dist-info", ".egg-info")  # the folders of installed distributions that importlib.metadata reads


class KindEntryPoint(Protocol):
    """An entry point of the group (an importlib.metadata EntryPoint, or one read from the cache)."""

    @property
    def name(self) -> str:
        """The kind's name."""

    @property
    def value(self) -> str:
        """module:attribute, what makes the kind."""

    def load(self) -> Any:
        """The object `value` names, its module imported."""


@dataclass(frozen=True)
class CachedEntryPoint:
    """An entry point as the cache keeps it: loaded as importlib.metadata loads one (extras in brackets aside)."""

    name: str
    value: str

    def load(self) -> Any:
        module, _, attribute = self.value.split("[")[0].partition(":")
        found = import_module(module.strip())
        for part in filter(None, attribute.strip().split(".")):
            found = getattr(found, part)
        return found


def kind_entry_points() -> list[KindEntryPoint]:
    """Every installed kind's entry point: the cache's when its stamp is that of the installed distributions now,
    else those importlib.metadata finds, which are then kept."""
    stamp = _installed_stamp()
    if stamp is None:
        return list(_scanned())
    kept = _read(cache_home() / CACHE_FILE)
    if kept is not None and kept.get("stamp") == stamp:
        return [CachedEntryPoint(name, value) for name, value in kept["entry_points"]]
    found = list(_scanned())
    _keep(cache_home() / CACHE_FILE, {"stamp": stamp, "entry_points": [[e.name, e.value] for e in found]})
    return found


def _scanned() -> Iterable[KindEntryPoint]:
    from importlib.metadata import entry_points

    return entry_points(group=ENTRY_POINT_GROUP)


def _installed_stamp() -> list[Any] | None:
    """What importlib.metadata reads to find the entry points, by modification time; None where distributions are
    also found another way than in sys.path's folders (an import hook's), which the stamp would not see change."""
    from importlib.machinery import PathFinder

    if [finder for finder in sys.meta_path if hasattr(finder, "find_distributions")] != [PathFinder]:
        return None
    stamp: list[Any] = []
    for entry in sys.path:
        folder = os.path.abspath(entry)
        try:
            with os.scandir(folder) as listing:
                found = sorted(item.name for item in listing if item.name.endswith(DISTRIBUTIONS))
            stamp.append([folder, os.stat(folder).st_mtime_ns, [[name, _modified(folder, name)] for name in found]])
        except OSError:  # not a folder (a zip file on sys.path is read as one too): its own time stands for it
            stamp.append([folder, _modified(folder)])
    return stamp


def _modified(folder: str, distribution: str = "") -> int | None:
    path = os.path.join(folder, distribution, "entry_points.txt") if distribution else folder
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _private(status: os.stat_result) -> bool:
    """The user's own, and nobody else may write it."""
    return status.st_uid == os.geteuid() and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _read(path: Path) -> dict[str, Any] | None:
    """The cache at `path`, if it is a file of the user's own in a folder of theirs that nobody else may write."""
    try:
        folder = os.lstat(path.parent)
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as cache:
        status = os.fstat(cache.fileno())
        if not (stat.S_ISDIR(folder.st_mode) and _private(folder) and stat.S_ISREG(status.st_mode)
                and _private(status)):
            return None
        try:
            kept = json.loads(cache.read())
        except ValueError:
            return None
    return kept if isinstance(kept, dict) else None


def _keep(path: Path, cache: dict[str, Any]) -> None:
    """Write the cache whole (a reader meanwhile sees the old one or the new), where the user may: a cache is only
    ever a shortcut, so a folder that cannot be made or written, or that is not private to the user, keeps none."""
    try:
        make_directory(path.parent)
        if not _private(os.lstat(path.parent)):
            return
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(descriptor, "w") as out:
            json.dump(cache, out)
        os.chmod(temporary, PRIVATE_FILE)
        os.replace(temporary, path)
    except OSError:
        return
