"""Where vtopo remembers deployed labs: one directory per lab, holding the lab and the journal of applied ops.

The journal records each op *before* it runs, so after a crash `vtopo cleanup` knows everything that may exist.

A lab has one identity on the host: its name, unique among deployed labs, and a prefix vtopo chooses for it (every
device, namespace and table of the lab is named by it). No string is both a lab's name and another's prefix. A lab is
looked up by its name, once; what acts on it is handed the record.
"""
from __future__ import annotations

import fcntl
import functools
import json
import os
import shutil
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from vtopo.host.owned_files import PRIVATE_FILE, SHARED, clients_gid, held, make_directory, open_file, write_file
from vtopo.lab_terms import HostFacts, Trust, default_prefix
from vtopo.reports import user_name

if TYPE_CHECKING:  # a record's lab, links and journal are read with the model, the compiler's links and the ops: the
    # list of labs needs none of them
    from vtopo.compile.links import ShapedLink
    from vtopo.model.topology import Topology
    from vtopo.ops import Op

DEFAULT_ROOT = Path(os.environ.get("VTOPO_STATE_DIR", "/var/lib/vtopo"))


@dataclass
class Operated:
    """What the user changed on the running lab since it was deployed: nodes stopped and links taken down."""

    stopped: set[str] = field(default_factory=set)  # node names
    down: set[str] = field(default_factory=set)  # link ids

    def to_json(self) -> dict[str, list[str]]:
        return {"stopped": sorted(self.stopped), "down": sorted(self.down)}

    @classmethod
    def of(cls, record: dict[str, Any]) -> Operated:
        """What a lab's record (as read) says was changed."""
        data = record.get("operated", {})
        return cls(set(data.get("stopped", ())), set(data.get("down", ())))


HOST_NETWORKS = "host_networks"  # the record's field of the subnets the lab gives the host (LabRecord.host_networks)
SHAPED_LINKS = "shaped_links"  # the record's field of each link's medium and impaired devices (shaped_links_of)
DEPLOYMENT_FIELDS = ("name", "prefix", "topology", "facts", "consent", "source", SHAPED_LINKS)


def shaped_links_of(deployment: dict[str, Any]) -> dict[str, ShapedLink]:
    """Each link with an end on this site, by id, as a live change of its impairment shapes it, from its record."""
    from vtopo.compile.links import ShapedLink

    return {link: ShapedLink.from_json(shaped) for link, shaped in deployment.get(SHAPED_LINKS, {}).items()}


def deployed_media(deployment: dict[str, Any]) -> dict[str, str]:
    """Each link's medium as the lab's deploy made it on this site, from its record: what the lab is resolved with
    again (vtopo.compile.resolve), whatever rate was set on the link since."""
    return {link: shaped.medium for link, shaped in shaped_links_of(deployment).items()}


class LabTaken(Exception):
    """A lab that cannot be deployed under its name or prefix hint: the message names the lab that holds it, and its
    owner."""


@dataclass(frozen=True)
class Usage:
    """What a lab takes of the host, as its owner's quota counts it."""

    nodes: int = 0
    vm_memory_mb: int = 0  # of its VMs and its nodes from images
    cpu_percent: int = 0  # the CPU its VMs (100 per vCPU) and its nodes from images may take, in percent of one CPU

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.nodes + other.nodes, self.vm_memory_mb + other.vm_memory_mb,
                     self.cpu_percent + other.cpu_percent)


@functools.lru_cache(maxsize=256)
def _name_in(lab_file: Path, writing: tuple[int, int, int]) -> str:
    """The name in `lab_file` as it was written then (`writing`: its inode, modification time and size)."""
    return str(json.loads(lab_file.read_text())["name"])


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

    def stamp(self) -> tuple[int, ...]:
        """Which writing of the record this is: a deploy, an update or an operation, by any process, changes it."""
        found = []
        for name in ("lab.json", "journal.jsonl"):
            try:
                stat = (self.directory / name).stat()
            except FileNotFoundError:
                found += [0, 0, 0]
            else:
                found += [stat.st_ino, stat.st_mtime_ns, stat.st_size]
        return tuple(found)

    def write(self, data: dict[str, Any]) -> None:
        """Root's alone: a user's client asks the agent for what it may know of a lab (`deployment`). Not indented:
        json indents in Python, and took 15 ms at 400 containers where its C encoder takes 3 ms."""
        path = self.directory / "lab.json"
        write_file(path.with_suffix(".tmp"), json.dumps(data, sort_keys=True), PRIVATE_FILE)
        path.with_suffix(".tmp").replace(path)

    def deployment(self) -> dict[str, Any]:
        """What compiles the lab as it was deployed (see `facts_of`, `consent_of`): what the agent gives the owner."""
        return {key: value for key, value in self.read().items() if key in DEPLOYMENT_FIELDS}

    @property
    def name(self) -> str:
        """The lab's name, read once for each writing of its record: a status reads every lab's name, and the record
        holds the whole lab (40 ms to parse at 400 containers)."""
        lab_file = self.directory / "lab.json"
        written = lab_file.stat()
        return _name_in(lab_file, (written.st_ino, written.st_mtime_ns, written.st_size))

    def topology(self) -> Topology:
        from vtopo.lab_record import topology_of

        return topology_of(self.read())

    def write_topology(self, topology: Topology) -> None:
        """Record the lab as changed while it runs, with the prefix hint its file gave (the designer compares its
        edits with what is recorded)."""
        from vtopo.model import io

        data = self.read()
        hint = data["topology"].get("lab", {}).get("prefix", "")
        self.write({**data, "topology": io.to_document(replace(topology, prefix=hint))})

    def usage(self) -> Usage:
        data = self.read()
        usage = data.get("usage", {})
        return Usage(int(usage.get("nodes", len(data["topology"].get("nodes", [])))), int(usage.get("vm_memory_mb", 0)),
                     int(usage.get("cpu_percent", 0)))

    @property
    def owner(self) -> int:
        """The uid that deployed the lab (root for labs deployed in-process or before owners were recorded)."""
        return int(self.read().get("owner", 0))

    def host_networks(self) -> list[str]:
        """The subnets (CIDR) the lab gives the host's own namespace, by its host addresses and their routes: no other
        lab may give the host one that overlaps them while this lab is deployed (see the deployer's admission)."""
        return list(self.read().get(HOST_NETWORKS, []))

    def services(self) -> list[str]:
        """The shared host services (e.g. "openvswitch") the lab needs; recorded before they are started."""
        try:
            return list(self.read().get("services", []))
        except FileNotFoundError:  # forgotten meanwhile
            return []

    def facts(self) -> HostFacts:
        from vtopo.lab_record import facts_of

        return facts_of(self.read())

    def consent(self) -> Trust:
        from vtopo.lab_record import consent_of

        return consent_of(self.read())

    def media(self) -> dict[str, str]:
        """Each link's medium as the deploy made it (`deployed_media`)."""
        return deployed_media(self.read())

    def operated(self) -> Operated:
        return Operated.of(self.read())

    def write_operated(self, operated: Operated) -> None:
        self.write({**self.read(), "operated": operated.to_json()})

    @contextmanager
    def locked(self) -> Iterator[None]:
        """One change to the running lab at a time (the CLI and the designer may both operate it)."""
        with held(os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)):
            yield

    @contextmanager
    def kept(self) -> Iterator[Callable[[], bool]]:
        """While the block runs, whether this is still a deployed lab's record: False once its lab is destroyed, even
        when another lab has been deployed under the same name and prefix since. The directory is held open, so a
        directory made again at its path cannot be this one."""
        fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

        def current() -> bool:
            try:
                os.stat("lab.json", dir_fd=fd)
                return os.path.samestat(os.fstat(fd), os.stat(self.directory))
            except FileNotFoundError:
                return False

        try:
            yield current
        finally:
            os.close(fd)

    def replace_in_journal(self, drop: Callable[[Op], bool], add: Sequence[Op]) -> None:
        """Rewrite the journal without the ops `drop` picks and with `add` at its end, in one rename. Only for ops
        that destroy does not undo (an impairment changed live), or that were undone already, so a crash mid-way loses
        nothing destroy needs."""
        path = self.directory / "journal.jsonl"
        kept = [op for op in self.journal() if not drop(op)]
        temporary = path.with_suffix(".tmp")
        write_file(temporary, "".join(json.dumps(op.to_json(), sort_keys=True) + "\n" for op in [*kept, *add]))
        temporary.replace(path)

    def journal(self) -> list[Op]:
        from vtopo.ops import op_from_json

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

    def named(self, name: str) -> LabRecord | None:
        """The deployed lab named `name` (names are unique on the host)."""
        for record in self.labs():
            try:
                if record.name == name:
                    return record
            except FileNotFoundError:  # destroyed meanwhile
                continue
        return None

    @staticmethod
    def not_found(name: str) -> str:
        """What to say when no lab is `named` so."""
        return f"no deployed lab is named {name!r}; `vtopo status` lists the deployed labs"

    def claim(self, name: str, hint: str, lab: Callable[[str], dict[str, Any]],
              admit: Callable[[list[LabRecord]], None] = lambda others: None) -> LabRecord:
        """The record of a new lab `name`, under a prefix chosen here: `hint` (the lab file's prefix) when it is
        free, else the first free one derived from the name. `lab(prefix)` is what the record holds. Raises LabTaken
        when a deployed lab has this name, or has the hint or this name as its name or prefix; `admit` sees every
        other deployed lab and raises to refuse this one (a quota). One claim at a time, in any process."""
        try:
            with self._held() as deployed:
                taken: dict[str, LabRecord] = {}
                others = []
                for record in deployed:
                    try:
                        taken.update({record.name: record, record.prefix: record})
                    except FileNotFoundError:  # destroyed meanwhile
                        continue
                    others.append(record)
                holder = taken.get(name)
                if holder is not None:
                    raise LabTaken(taken_message(name, holder))
                if hint and hint in taken:
                    raise LabTaken(f"lab {name} asks for the prefix {hint}, which is the name or prefix of a deployed "
                                   f"lab; remove lab.prefix from the file and vtopo chooses one")
                admit(others)
                prefix = hint or next(candidate for attempt in range(len(taken) + 2)
                                      if (candidate := default_prefix(name, attempt)) not in taken and candidate != name)
                return self.create(prefix, lab(prefix))
        except BaseException:  # refused: the store's own directories go if no lab is left
            self.remove_empty_directories()
            raise

    def admit(self, record: LabRecord, admit: Callable[[list[LabRecord]], None], changes: dict[str, Any]) -> None:
        """`admit` an addition to `record`'s lab against every other deployed lab, as `claim` admits a new one, and
        write `changes` into its record before another claim or admission sees it."""
        with self._held() as deployed:
            admit([other for other in deployed if other.directory != record.directory])
            record.write({**record.read(), **changes})

    @contextmanager
    def _held(self) -> Iterator[list[LabRecord]]:
        """The deployed labs, while no other claim (in this process or another) can add one: a lock on the labs
        directory, made again when the last destroy removed it meanwhile."""
        while True:
            make_directory(self.labs_dir, SHARED, gid=clients_gid(), exist_ok=True)
            fd = os.open(self.labs_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    current = os.path.samestat(os.fstat(fd), os.stat(self.labs_dir))
                except FileNotFoundError:
                    current = False
                if current:
                    yield list(self.labs())
                    return
            finally:
                os.close(fd)

    def forget(self, record: LabRecord) -> None:
        shutil.rmtree(record.directory, ignore_errors=True)
        self.remove_empty_directories()

    def remove_empty_directories(self) -> None:
        """Once the last lab is gone, vtopo leaves not even its own empty directories behind. The labs directory goes
        under the claims' lock, so that a claim never makes its record in a directory being removed."""
        try:
            fd = os.open(self.labs_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = -1
        try:
            if fd != -1:
                fcntl.flock(fd, fcntl.LOCK_EX)
            for directory in (self.labs_dir, self.root):
                try:
                    directory.rmdir()
                except FileNotFoundError:
                    continue
                except OSError:
                    break
        finally:
            if fd != -1:
                os.close(fd)

    def marker(self, name: str) -> Path:
        return self.root / name

    def write_marker(self, name: str) -> None:
        make_directory(self.root, SHARED, gid=clients_gid(), exist_ok=True)
        write_file(self.marker(name), "")


def taken_message(name: str, holder: LabRecord) -> str:
    if holder.name == name:
        return (f"a lab named {name} is already deployed, by {user_name(holder.owner)}; destroy it first, or give "
                "this lab another name")
    return f"{name} is the prefix of a deployed lab; give this lab another name"
