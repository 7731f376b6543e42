"""A lab's checks, typed: each one's type found (built-in or a kind's) and its parameters validated."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from vtopo.checks.builtin import BUILTIN
from vtopo.kinds.check_types import CheckType
from vtopo.kinds.contract import NodeKind
from vtopo.kinds.registry import Registry
from vtopo.kinds.settings import parse_settings
from vtopo.model.expectations import Check
from vtopo.model.problems import Problem
from vtopo.model.topology import Topology


@dataclass(frozen=True)
class TypedCheck:
    """A check of the lab with its type found and its parameters parsed."""

    check: Check
    type: CheckType
    params: Any

    @property
    def explanation(self) -> str:
        return self.check.explain or self.type.describe(self.params)

    def nodes(self) -> list[str]:
        """The nodes the check is about, by name: the pair or path to highlight."""
        names = [getattr(self.params, f) for f in self.type.node_fields]
        names += [getattr(self.params, f).split(":")[0] for f in self.type.interface_fields]
        return [name for name in names if name]


def check_types(kinds: Iterable[NodeKind[Any]]) -> dict[str, CheckType]:
    """The built-in check types and those the kinds add."""
    types = {t.name: t for t in BUILTIN}
    for kind in kinds:
        types.update({t.name: t for t in kind.check_types()})
    return types


def _types_named_by(topology: Topology, registry: Registry) -> dict[str, CheckType]:
    """Check types enough for the lab's checks: those of its own kinds when they hold every type its checks name,
    else those of every installed kind (which loads every plugin)."""
    own_kinds = filter(None, (registry.get(name) for name in sorted({node.kind for node in topology.nodes.values()})))
    types = check_types(own_kinds)
    return types if all(check.type in types for check in topology.checks) else check_types(registry.kinds.values())


def typed_checks(topology: Topology, registry: Registry) -> tuple[list[TypedCheck], list[Problem]]:
    """Every check of the lab with its type and parameters, and what is wrong with the others."""
    types = _types_named_by(topology, registry)
    typed, problems = [], []
    for index, check in enumerate(topology.checks):
        path, subject = f"$.checks[{index}]", f"check {check.name}"
        check_type = types.get(check.type)
        if check_type is None:
            problems.append(Problem(f"unknown check type {check.type!r} (known: {', '.join(sorted(types))})",
                                    subject, f"{path}.type"))
            continue
        params, found = parse_settings(check_type.params_type, check.params, path, subject, "",
                                       owner=f"a {check_type.name} check")
        if params is not None:
            found = [Problem(message, subject, f"{path}.{field}") for field, message in check_type.problems(params)]
            found += _reference_problems(topology, check_type, params, path, subject)
        problems += found
        if params is not None and not found:
            typed.append(TypedCheck(check, check_type, params))
    return typed, problems


def _reference_problems(topology: Topology, check_type: CheckType, params: Any, path: str, subject: str
                        ) -> list[Problem]:
    problems = []
    for field in check_type.node_fields:
        name = getattr(params, field)
        if name and topology.node_named(name) is None:
            problems.append(Problem(f"{field} names node {name!r}, which is not in the lab", subject, f"{path}.{field}"))
        elif not name and field in ("source", "destination", "node"):
            problems.append(Problem(f"{field} is required", subject, f"{path}.{field}"))
    for field in check_type.interface_fields:
        reference = getattr(params, field)
        node_name, _, port = reference.partition(":")
        node = topology.node_named(node_name)
        if node is None or port not in topology.used_ports(node.id):
            problems.append(Problem(f"{field} must name a linked interface as NODE:PORT (e.g. h1:eth0), not "
                                    f"{reference!r}", subject, f"{path}.{field}"))
    return problems
