"""The stem of a new node's default name, from its kind (c1, c2, br1, r1...; model.rules numbers it)."""
from __future__ import annotations

import re
from typing import Any

from vtopo.kinds.contract import NodeKind
from vtopo.model.rules import is_valid_node_name


def stem_for(kind: NodeKind[Any]) -> str:
    """The stem of a kind's default names: its own, or its name cleaned to a valid node name."""
    stem = kind.name_stem or re.sub(r"[^A-Za-z0-9_-]", "", kind.name)
    return stem if stem and is_valid_node_name(stem) else "n"
