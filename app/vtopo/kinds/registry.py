"""The registry of node kinds, filled from the `vtopo.kinds` entry-point group, built-ins included."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any

from vtopo.kinds.contract import NodeKind
from vtopo.kinds.settings import parse_settings
from vtopo.model.problems import Problem
from vtopo.model.topology import Topology

ENTRY_POINT_GROUP = "vtopo.kinds"


@dataclass
class Registry:
    kinds: dict[str, NodeKind[Any]] = field(default_factory=dict)
    load_problems: list[str] = field(default_factory=list)

    def register(self, kind: NodeKind[Any]) -> None:
        self.kinds[kind.name] = kind

    def get(self, name: str) -> NodeKind[Any] | None:
        return self.kinds.get(name)

    def __contains__(self, name: str) -> bool:
        return name in self.kinds

    def check_nodes(self, topology: Topology) -> tuple[dict[str, Any], list[Problem]]:
        """Check kinds, settings and port names. Returns the typed settings of each node by id, and the problems."""
        problems: list[Problem] = []
        settings: dict[str, Any] = {}
        for index, node in enumerate(topology.nodes.values()):
            path = f"$.nodes[{index}]"
            subject = f"node {node.name}"
            kind = self.get(node.kind)
            if kind is None:
                known = ", ".join(sorted(self.kinds))
                problems.append(Problem(f"unknown kind {node.kind!r} (known kinds: {known}; a plugin may be missing)",
                                        subject, f"{path}.kind", node.id))
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
    """Every installed kind. A broken plugin is reported, not fatal."""
    registry = Registry()
    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            kind_class = entry.load()
            kind = kind_class()
        except Exception as exc:  # a third-party plugin may fail in any way; report it and go on
            registry.load_problems.append(f"plugin {entry.name} ({entry.value}) failed to load: {exc}")
            continue
        if not isinstance(kind, NodeKind):
            registry.load_problems.append(f"plugin {entry.name} ({entry.value}) is not a vtopo NodeKind")
            continue
        registry.register(kind)
    return registry


@lru_cache(maxsize=1)
def installed_kinds() -> Registry:
    """The registry of every installed kind, loaded once per process."""
    return load_registry()
