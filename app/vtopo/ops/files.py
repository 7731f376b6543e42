"""Ops on files and directories under the lab's run directory."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from vtopo.model.rules import PRIVATE_DIRECTORY
from vtopo.ops.base import Op
from vtopo.ops.host import Host

EXECUTABLE_FILE = 0o750  # a script a lab's daemon runs: its own user's and group's


@dataclass(frozen=True, kw_only=True)
class FileOp(Op, register=False):
    """An op that makes `path`: it needs the directory the path is in."""

    path: str

    def requires(self) -> frozenset[str]:
        return frozenset({f"file:{self.path.rsplit('/', 1)[0]}"})

    def provides(self) -> frozenset[str]:
        return frozenset({f"file:{self.path}"})


@dataclass(frozen=True, kw_only=True)
class MakeDirectory(FileOp):
    """A directory, owned by `user` when a daemon that drops privileges must write in it, or by the uid and gid `ids`
    (the user who is root of the lab's user namespace, whose daemons write there), with `mode` when the umask must
    not decide."""

    user: str = ""
    ids: tuple[int, int] | None = None
    mode: int | None = None
    summary_text: ClassVar[str] = "create directory {path}"

    def apply(self, host: Host) -> None:
        host.make_directory(self.path, PRIVATE_DIRECTORY if self.mode is None else self.mode, self.user, self.ids)

    def inverse(self) -> Op:
        return RemoveDirectory(owner=self.owner, path=self.path)


@dataclass(frozen=True, kw_only=True)
class RemoveDirectory(Op):
    """Removes the directory and whatever the lab's daemons left in it (pid files, sockets, logs)."""

    path: str
    summary_text: ClassVar[str] = "remove directory {path}"

    def apply(self, host: Host) -> None:
        host.remove_directory(self.path)


@dataclass(frozen=True, kw_only=True)
class WriteFile(FileOp):
    content: str
    summary_text: ClassVar[str] = "write {path}"

    def apply(self, host: Host) -> None:
        """A file the lab's daemons read (dropping privileges first)."""
        host.write_file(self.path, self.content, private=False)

    def inverse(self) -> Op:
        return RemoveFile(owner=self.owner, path=self.path)


@dataclass(frozen=True, kw_only=True)
class WriteScript(WriteFile):
    """A script a daemon of the lab runs (a DHCP client's, at each event of its lease)."""

    def apply(self, host: Host) -> None:
        host.write_file(self.path, self.content, private=False, executable=True)


@dataclass(frozen=True, kw_only=True)
class WriteHostsFile(WriteFile):
    """The lab's hosts file, copied into each node as it is made. Its content is not part of its identity, so that a
    lab which gains a node is updated in place, not deployed again (the file and the nodes' copies stay as they were).
    """

    content: str = field(compare=False)

    def apply(self, host: Host) -> None:
        """Root's alone: each node gets a copy of its own."""
        host.write_file(self.path, self.content, private=True)


@dataclass(frozen=True, kw_only=True)
class RemoveFile(Op):
    path: str
    summary_text: ClassVar[str] = "remove {path}"

    def apply(self, host: Host) -> None:
        host.remove_file(self.path)
