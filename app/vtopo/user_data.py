"""Where vtopo writes what it makes for a user: measurement histories, experiment outputs and the stage each exercise
is at.

Never beside a lab's file, which may sit in a checkout, a shared folder or /etc, and whose path may come from someone
else (the source a member's client reported when it deployed): in a data directory of the user's own, private to them.
Each user's, root's too, is $XDG_DATA_HOME/vtopo (~/.local/share/vtopo), and $VTOPO_DATA_DIR names another. Root's is
not under /var/lib/vtopo: that is the deployed labs' state, which members' labs pass through.
A command writes anywhere else only when asked to with -o.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

PRIVATE_DIRECTORY, PRIVATE_FILE = 0o700, 0o600
HISTORIES, EXPERIMENTS, STAGES, HANDOUTS = "histories", "experiments", "stages", "handouts"


def data_home() -> Path:
    chosen = os.environ.get("VTOPO_DATA_DIR")
    if chosen:
        return Path(chosen)
    xdg = os.environ.get("XDG_DATA_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "share") / "vtopo"


def cache_home() -> Path:
    """Where vtopo keeps what it can make again: $XDG_CACHE_HOME/vtopo (~/.cache/vtopo)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "vtopo"


def file_stem(name: str) -> str:
    """A lab's name as one file name: every character but letters, digits, '.', '-' and '_' becomes '_', and it
    never starts with a dot (so never names a folder above)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".") or "untitled"


def folder(name: str) -> Path:
    """A folder of the data home (HISTORIES, EXPERIMENTS, STAGES, HANDOUTS)."""
    return data_home() / name


def make_directory(path: Path) -> None:
    """`path` and the folders above it that are missing; those made here are private to the user."""
    missing = [directory for directory in (path, *path.parents) if not directory.exists()]
    for directory in reversed(missing):
        try:
            directory.mkdir(PRIVATE_DIRECTORY)
        except FileExistsError:
            continue  # made meanwhile by another command
        directory.chmod(PRIVATE_DIRECTORY)  # whatever the umask
