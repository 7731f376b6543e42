"""The registry of node kinds, filled from the `vtopo.kinds` entry-point group, built-ins included.

A kind's plugin is imported when something first asks for the kind: checking a lab of containers loads no VM
code, and a broken plugin troubles only the labs that use its kind, and the lists of every kind.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from threading import RLock
from typing import TYPE_CHECKING, Any

from vtopo.kinds.contract import NodeKind, undeclared_hooks
from vtopo.kinds.entry_points import ENTRY_POINT_GROUP, KindEntryPoint, kind_entry_points
from vtopo.kinds.settings import parse_settings
from vtopo.model.problems import Problem

if TYPE_CHECKING:
    from vtopo.model.topology import Topology


@dataclass
class Registry:
    """The installed node kinds, by name."""

    unloaded: dict[str, KindEntryPoint] = field(default_factory=dict)
    """Installed kinds whose plugin nobody has asked for yet, by kind name (the entry point's name)."""
    loaded: dict[str, NodeKind[Any]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    """Why a kind's plugin did not load, by kind name."""
    _loading: RLock = field(default_factory=RLock, init=False, repr=False, compare=False)
    """Held while a plugin loads, so that a thread asking for the same kind meanwhile waits for it."""

    def register(self, kind: NodeKind[Any]) -> None:
        self.loaded[kind.name] = kind

    def get(self, name: str) -> NodeKind[Any] | None:
        if name in self.unloaded:
            with self._loading:
                entry = self.unloaded.get(name)
                if entry is not None:  # else another thread loaded it while this one waited
                    self._load(entry)
                    del self.unloaded[name]
        return self.loaded.get(name)

    def __contains__(self, name: str) -> bool:
        return self.get(name) is not None

    def names(self) -> list[str]:
        """The name of every installed kind not known to be broken, without loading a plugin."""
        return sorted({*self.unloaded, *self.loaded})

    def load_all(self) -> dict[str, NodeKind[Any]]:
        """Every installed kind that loads, by name: the plugins nobody had asked for are loaded now."""
        for name in list(self.unloaded):
            self.get(name)
        return self.loaded

    @property
    def kinds(self) -> dict[str, NodeKind[Any]]:
        return self.load_all()

    @property
    def load_problems(self) -> list[str]:
        """Why plugins failed to load, every installed kind tried."""
        self.load_all()
        return [self.failed[name] for name in sorted(self.failed)]

    def _load(self, entry: KindEntryPoint) -> None:
        try:
            kind = entry.load()()
        except Exception as exc:  # a third-party plugin may fail in any way; report it and go on
            self.failed[entry.name] = f"plugin {entry.name} ({entry.value}) failed to load: {exc}"
            return
        if not isinstance(kind, NodeKind):
            self.failed[entry.name] = f"plugin {entry.name} ({entry.value}) is not a vtopo NodeKind"
        elif undeclared := undeclared_hooks(kind):
            self.failed[entry.name] = (f"plugin {entry.name} ({entry.value}) writes {', '.join(undeclared)}: add "
                                       "the capability to the kind's bases, or vtopo never calls it")
        elif kind.name != entry.name:
            self.failed[entry.name] = (f"plugin {entry.name} ({entry.value}) makes the kind {kind.name!r}: its entry "
                                       "point must carry the kind's name")
        else:
            self.register(kind)

    def check_nodes(self, topology: Topology) -> tuple[dict[str, Any], list[Problem]]:
        """Check kinds, settings and port names. Returns the typed settings of each node by id, and the problems."""
        problems: list[Problem] = []
        settings: dict[str, Any] = {}
        for index, node in enumerate(topology.nodes.values()):
            path = f"$.nodes[{index}]"
            subject = f"node {node.name}"
            kind = self.get(node.kind)
            if kind is None:
                known = ", ".join(self.names())
                message = self.failed.get(node.kind) or (f"unknown kind {node.kind!r} (known kinds: {known}; a plugin "
                                                         "may be missing)")
                problems.append(Problem(message, subject, f"{path}.kind", node.id))
                continue
            parsed, found = parse_settings(kind.settings_type, node.settings, f"{path}.settings", subject, node.id)
            problems.extend(found)
            if parsed is not None:
                settings[node.id] = parsed
        for index, link in enumerate(topology.links.values()):
            for side, end in (("a", link.a), ("b", link.b)):
                node = topology.nodes[end.node]
                kind = self.get(node.kind)
                if kind is not None and kind.ports.index_of(end.port) is None:
                    problems.append(Problem(f"{node.name} ({node.kind}) has no port {end.port!r}; its ports are "
                                            f"{kind.ports.describe()}", f"link {topology.describe_link(link)}",
                                            f"$.links[{index}].{side}.port", link.id))
        return settings, problems


def load_registry() -> Registry:
    """Every installed kind, each plugin to be loaded when its kind is first asked for. A broken plugin is
    reported, not fatal."""
    return Registry(unloaded={entry.name: entry for entry in kind_entry_points()})


@lru_cache(maxsize=1)
def installed_kinds() -> Registry:
    """The registry of every installed kind, loaded once per process."""
    return load_registry()
