"""Default node names: a short stem per kind and the lowest free number (c1, c2, br1, r1...)."""
from __future__ import annotations

import re
from typing import Any, Collection

from vtopo.kinds.contract import NodeKind
from vtopo.model.rules import is_valid_node_name


def stem_for(kind: NodeKind[Any]) -> str:
    """The stem of a kind's default names: its own, or its name cleaned to a valid node name."""
    stem = kind.name_stem or re.sub(r"[^A-Za-z0-9_-]", "", kind.name)
    return stem if stem and is_valid_node_name(stem) else "n"


def unique_name(stem: str, taken: Collection[str]) -> str:
    number = 1
    while f"{stem}{number}" in taken:
        number += 1
    return f"{stem}{number}"


def stem_of_name(name: str) -> str:
    """c12 -> c, lan-a3 -> lan-a, r -> r: the stem a copy of this node is renamed from."""
    stem = name.rstrip("0123456789")
    return stem if stem and is_valid_node_name(stem) else "n"
