"""Where vtopo remembers deployed labs: one directory per lab, holding the lab and the journal of applied ops.

The journal records each op *before* it runs, so after a crash `vtopo cleanup` knows everything that may exist.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from vtopo.host.owned_files import PRIVATE_FILE, SHARED, clients_gid, make_directory, open_file, write_file
from vtopo.kinds.environment import HostFacts, LabOwner, Trust
from vtopo.ops import Op, op_from_json

DEFAULT_ROOT = Path(os.environ.get("VTOPO_STATE_DIR", "/var/lib/vtopo"))


@dataclass
class Operated:
    """What the user changed on the running lab since it was deployed: nodes stopped and links taken down."""

    stopped: set[str] = field(default_factory=set)  # node names
    down: set[str] = field(default_factory=set)  # link ids

    def to_json(self) -> dict[str, list[str]]:
        return {"stopped": sorted(self.stopped), "down": sorted(self.down)}


DEPLOYMENT_FIELDS = ("name", "topology", "facts", "consent", "source")


def facts_of(deployment: dict[str, Any]) -> HostFacts:
    """The host's facts a lab was compiled against, from its record (or the deployment the agent sent)."""
    return HostFacts(**deployment["facts"])


def consent_of(deployment: dict[str, Any]) -> Trust:
    """What the user allowed when the lab was deployed, so the running lab can be analysed again."""
    data = deployment.get("consent", {})
    uid, gid = data.get("owner", (0, 0))
    return Trust(host_devices=frozenset(data.get("host_devices", ())), images=frozenset(data.get("images", ())),
                 startup_commands=frozenset(data.get("startup_commands", ())), owner=LabOwner(int(uid), int(gid)))


@dataclass
class LabRecord:
    """A deployed (or half-deployed) lab as the state directory knows it."""

    directory: Path

    @property
    def prefix(self) -> str:
        return self.directory.name

    def read(self) -> dict[str, Any]:
        lab: dict[str, Any] = json.loads((self.directory / "lab.json").read_text())
        return lab

    def write(self, data: dict[str, Any]) -> None:
        """Root's alone: a user's client asks the agent for what it may know of a lab (`deployment`)."""
        path = self.directory / "lab.json"
        write_file(path.with_suffix(".tmp"), json.dumps(data, sort_keys=True, indent=1), PRIVATE_FILE)
        path.with_suffix(".tmp").replace(path)

    def deployment(self) -> dict[str, Any]:
        """What compiles the lab as it was deployed (see `facts_of`, `consent_of`): what the agent gives the owner."""
        return {key: value for key, value in self.read().items() if key in DEPLOYMENT_FIELDS}

    @property
    def name(self) -> str:
        return str(self.read()["name"])

    @property
    def owner(self) -> int:
        """The uid that deployed the lab (root for labs deployed in-process or before owners were recorded)."""
        return int(self.read().get("owner", 0))

    def services(self) -> list[str]:
        """The shared host services (e.g. "openvswitch") the lab needs; recorded before they are started."""
        try:
            return list(self.read().get("services", []))
        except FileNotFoundError:  # forgotten meanwhile
            return []

    def facts(self) -> HostFacts:
        return facts_of(self.read())

    def consent(self) -> Trust:
        return consent_of(self.read())

    def operated(self) -> Operated:
        data = self.read().get("operated", {})
        return Operated(set(data.get("stopped", ())), set(data.get("down", ())))

    def write_operated(self, operated: Operated) -> None:
        self.write({**self.read(), "operated": operated.to_json()})

    @contextmanager
    def locked(self) -> Iterator[None]:
        """One change to the running lab at a time (the CLI and the designer may both operate it)."""
        fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def replace_in_journal(self, drop: Callable[[Op], bool], add: list[Op]) -> None:
        """Rewrite the journal without the ops `drop` picks and with `add` at its end, in one rename. Only for ops
        that destroy does not undo (an impairment changed live), so a crash mid-way loses nothing destroy needs."""
        path = self.directory / "journal.jsonl"
        kept = [op for op in self.journal() if not drop(op)]
        temporary = path.with_suffix(".tmp")
        write_file(temporary, "".join(json.dumps(op.to_json(), sort_keys=True) + "\n" for op in kept + add))
        temporary.replace(path)

    def journal(self) -> list[Op]:
        path = self.directory / "journal.jsonl"
        if not path.exists():
            return []
        ops = []
        for line in path.read_text().splitlines():
            if line.strip():
                try:
                    ops.append(op_from_json(json.loads(line)))
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut short by a crash: its op never ran
        return ops


def consent_to_json(consent: Trust) -> dict[str, Any]:
    return {"host_devices": sorted(consent.host_devices), "images": sorted(consent.images),
            "startup_commands": sorted(consent.startup_commands), "owner": [consent.owner.uid, consent.owner.gid]}


class Journal:
    """Append-only; one write per op, flushed to the kernel before the op runs."""

    def __init__(self, path: Path):
        self._fd = open_file(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)

    def record(self, op: Op) -> None:
        os.write(self._fd, (json.dumps(op.to_json(), sort_keys=True) + "\n").encode())

    def close(self) -> None:
        os.close(self._fd)


class StateStore:
    def __init__(self, root: Path = DEFAULT_ROOT):
        self.root = Path(root)
        self.labs_dir = self.root / "labs"

    def create(self, prefix: str, lab: dict[str, Any]) -> LabRecord:
        directory = self.labs_dir / prefix
        while True:
            try:
                make_directory(directory, SHARED, gid=clients_gid())  # FileExistsError if the prefix is taken
                break
            except FileNotFoundError:  # another vtopo removed the empty parents meanwhile
                continue
        record = LabRecord(directory)
        record.write(lab)
        return record

    def labs(self) -> Iterator[LabRecord]:
        try:
            directories = sorted(self.labs_dir.iterdir())
        except FileNotFoundError:  # no lab, or the last one's destroy has just removed the directory
            return
        for directory in directories:
            if (directory / "lab.json").exists():
                yield LabRecord(directory)

    def find(self, name_or_prefix: str) -> LabRecord | None:
        return next((lab for lab in self.labs() if name_or_prefix in (lab.prefix, lab.name)), None)

    @staticmethod
    def not_found(name_or_prefix: str) -> str:
        """What to say when `find` found no lab."""
        return f"no deployed lab is named {name_or_prefix!r}; `vtopo status` lists the deployed labs"

    def forget(self, record: LabRecord) -> None:
        shutil.rmtree(record.directory, ignore_errors=True)
        self.remove_empty_directories()

    def remove_empty_directories(self) -> None:
        """Once the last lab is gone, vtopo leaves not even its own empty directories behind."""
        for directory in (self.labs_dir, self.root):
            try:
                directory.rmdir()
            except FileNotFoundError:
                continue
            except OSError:
                break

    def marker(self, name: str) -> Path:
        return self.root / name

    def write_marker(self, name: str) -> None:
        make_directory(self.root, SHARED, gid=clients_gid(), exist_ok=True)
        write_file(self.marker(name), "")
