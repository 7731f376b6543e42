"""What a kind's hooks tell the host layer about a node it runs: the files the node sees of its own, the image it runs
from, where its virtual machine runs, a configuration a program on the host must accept, and what `vtopo save` keeps
of a running node. A deploy, `vtopo save` and validate against the host's facts read them; validating a lab offline
or listing the kinds loads none of them (vtopo.kinds.api hands them to a plugin when a hook first names one)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MachineProcess:
    """Where a node's virtual machine runs: a bare QEMU process, or a libvirt domain `domain` at `uri`. QEMU's pid is
    in `pid_file` either way."""

    backend: str  # "qemu" or "libvirt"
    pid_file: str
    domain: str = ""
    uri: str = ""
    vhost: bool = False  # whether the lab asks for vhost-net (the host may not give it)


@dataclass(frozen=True)
class NodeFiles:
    """What a node sees of its own in place of the host's files: `binds`, host directories of the node's (its router
    directory) each at a path inside it, as (directory, path); `files`, files over the host's, as (path, content);
    `host_read_only`, whether the rest of the host's files are read-only inside (a router, whose daemons open what
    their configuration names)."""

    binds: tuple[tuple[str, str], ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    host_read_only: bool = False


@dataclass(frozen=True)
class NodeImage:
    """The OCI image a node runs from (`vtopo image list`), by reference, and the limits of its container: memory and
    disk in MiB, CPU in percent of one CPU."""

    reference: str
    memory_mb: int
    cpu_percent: int
    disk_mb: int


@dataclass(frozen=True)
class ConfigCheck:
    """A node's configuration that a program on the host must accept, asked by validate and deploy where that program
    is installed. `argv` parses the file named by its "{file}" word, with "{dir}" a private directory it may use, and
    says what it refuses on stderr, a line `line N: message` each (FRR's `vtysh -C -f`)."""

    what: str  # "FRR", as the problem names it
    setting: str  # the setting the text is, or "" for a text vtopo generated
    text: str
    argv: tuple[str, ...]
    file_name: str = "config"
    helpers: tuple[tuple[str, str], ...] = ()  # (name, content) of files written beside it in {dir}
    skips_lines: bool = False  # whether the program, loading the text for real, skips a line it refuses and loads the
    # rest (FRR's `vtysh -b`): such a line is then a warning naming it, not an error


@dataclass(frozen=True)
class SavedState:
    """What a running node has become that a lab file can hold (`vtopo save`): settings to replace, and the addresses
    on each of its ports."""

    settings: dict[str, Any] = field(default_factory=dict)
    addresses: dict[str, list[str]] = field(default_factory=dict)
