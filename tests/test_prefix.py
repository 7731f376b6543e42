"""Default lab prefixes: rarely shared between two lab names, and short enough for every device vtopo names."""
from __future__ import annotations

from itertools import combinations

from vtopo.compile.lab_rules import PREFIX
from vtopo.lab_terms import DEFAULT_PREFIX_LENGTH, MAX_INTERFACE_NAME, default_prefix
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.resources import TOPOLOGIES


def colliding_pairs(names: list[str]) -> int:
    return sum(1 for a, b in combinations(names, 2) if default_prefix(a) == default_prefix(b))


def test_the_names_that_collided_with_three_hex_digits_no_longer_do():
    assert default_prefix("triangle-copy-2509") != default_prefix("routed-triangle")


def test_generated_names_rarely_share_a_prefix():
    copies = [f"triangle-copy-{n}" for n in range(2000)]
    # 2,000 names over 4,096 prefixes gave about 490 colliding pairs; over 36**4 about one is expected.
    assert colliding_pairs(copies) <= 4
    shipped = [path.stem for path in TOPOLOGIES.glob("*.vtopo")]
    assert colliding_pairs(shipped) == 0


def test_prefixes_are_valid_and_leave_room_for_the_longest_device_of_every_shipped_lab():
    for path in sorted(TOPOLOGIES.glob("*.vtopo")):
        topology = open_lab(path).topology
        prefix = default_prefix(topology.name)
        assert PREFIX.fullmatch(prefix) and len(prefix) == DEFAULT_PREFIX_LENGTH
        devices = [name for op in compile_plan(resolve(topology, registry())).ops for name in (getattr(op, "name", ""), getattr(op, "peer", ""))
                   if isinstance(name, str) and name.startswith(f"{prefix}-")]
        assert devices and max(map(len, devices)) <= MAX_INTERFACE_NAME, path.name
