"""The core stays ignorant of the built-in kinds: whatever it needs to know about a kind is on the kind's contract."""
from __future__ import annotations

import ast
from importlib.metadata import entry_points
from pathlib import Path

import vtopo
from vtopo.kinds.registry import ENTRY_POINT_GROUP

CORE = Path(vtopo.__file__).parent


def builtin_kind_names() -> set[str]:
    return {entry.name for entry in entry_points(group=ENTRY_POINT_GROUP) if entry.value.startswith("vtopo_kinds")}


def enum_member_values(tree: ast.Module) -> set[int]:
    """ids of the string constants that are an Enum member's value: the kernel's own words ("bridge" as a link type
    or a macvlan mode), named once in vtopo.ops."""
    values = set()
    for cls in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        if any(isinstance(base, ast.Name) and base.id.endswith("Enum") for base in cls.bases):
            values |= {id(stmt.value) for stmt in cls.body if isinstance(stmt, ast.Assign)}
    return values


TRANSLATORS = "interop"
"""The one room that names built-in kinds: it writes other tools' labs as vtopo labs, which name their kinds as a lab
file does (a containerlab `bridge` becomes a vtopo `bridge`), and reads them back out."""


def test_the_core_names_no_builtin_kind():
    names = builtin_kind_names()
    assert {"bridge", "router", "vm"} <= names
    found = []
    for path in sorted(CORE.rglob("*.py")):
        if path.relative_to(CORE).parts[0] == TRANSLATORS:
            continue
        tree = ast.parse(path.read_text(), str(path))
        allowed = enum_member_values(tree)
        found += [f"{path.relative_to(CORE)}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and node.value in names and id(node) not in allowed]
    assert not found, "the core names built-in kinds; put what it needs on the NodeKind contract:\n" + "\n".join(found)
