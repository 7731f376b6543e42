"""Ops on files and directories under the lab's run directory."""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import ClassVar

from vtopo.ops.base import Op, heredoc, sh


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
    """A directory, owned by `user` when a daemon that drops privileges must write in it, with `mode` when the
    umask must not decide."""

    user: str = ""
    mode: int | None = None
    summary_text: ClassVar[str] = "create directory {path}"

    def explain(self) -> list[str]:
        lines = [sh("mkdir", "-p", self.path)]
        if self.mode is not None:
            lines.append(sh("chmod", f"{self.mode:o}", self.path))
        if self.user:
            lines.append(sh("chown", f"{self.user}:", self.path))
        return lines

    def inverse(self) -> Op:
        return RemoveDirectory(owner=self.owner, path=self.path)


@dataclass(frozen=True, kw_only=True)
class RemoveDirectory(Op):
    """Removes the directory and whatever the lab's daemons left in it (pid files, sockets, logs)."""

    path: str
    summary_text: ClassVar[str] = "remove directory {path}"

    def explain(self) -> list[str]:
        return [sh("rm", "-rf", self.path)]


@dataclass(frozen=True, kw_only=True)
class WriteFile(FileOp):
    content: str
    summary_text: ClassVar[str] = "write {path}"

    def explain(self) -> list[str]:
        return heredoc(f"cat > {shlex.quote(self.path)}", self.content)

    def inverse(self) -> Op:
        return RemoveFile(owner=self.owner, path=self.path)


@dataclass(frozen=True, kw_only=True)
class WriteHostsFile(WriteFile):
    """The lab's hosts file, copied into each node as it is made. Its content is not part of its identity, so that a
    lab which gains a node is updated in place, not deployed again (the file and the nodes' copies stay as they were).
    """

    content: str = field(compare=False)


@dataclass(frozen=True, kw_only=True)
class RemoveFile(Op):
    path: str
    summary_text: ClassVar[str] = "remove {path}"

    def explain(self) -> list[str]:
        return [sh("rm", "-f", self.path)]
