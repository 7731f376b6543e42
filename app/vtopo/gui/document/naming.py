"""Default node names: a short stem per kind and the lowest free number (c1, c2, br1, r1...)."""
from __future__ import annotations

import re
from typing import Collection

NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")

STEMS = {"container": "c", "bridge": "br", "router": "r", "vm": "vm", "ovs": "ovs", "host": "host",
         "macvlan": "mvl", "macvtap": "mvt"}


def stem_for(kind_name: str) -> str:
    """The stem of a kind's default names; a plugin kind gets its own name, cleaned to a valid node name."""
    stem = STEMS.get(kind_name) or re.sub(r"[^A-Za-z0-9_-]", "", kind_name)
    return stem if stem and NODE_NAME.fullmatch(stem) else "n"


def unique_name(stem: str, taken: Collection[str]) -> str:
    number = 1
    while f"{stem}{number}" in taken:
        number += 1
    return f"{stem}{number}"


def stem_of_name(name: str) -> str:
    """c12 -> c, lan-a3 -> lan-a, r -> r: the stem a copy of this node is renamed from."""
    stem = name.rstrip("0123456789")
    return stem if stem and NODE_NAME.fullmatch(stem) else "n"


def is_valid_name(name: str) -> bool:
    return NODE_NAME.fullmatch(name) is not None
