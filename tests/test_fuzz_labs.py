"""Fuzzing the way in: whatever a .vtopo file holds, loading, validating, planning and explaining it ends in a
clean Problem or in success, never in another exception. Runs on every `make test` (2,000 examples in CI)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vtopo.lab import plan_of, problems_of, registry
from vtopo.model import io
from vtopo.model.problems import LabError, errors_in
from vtopo.resources import TOPOLOGIES

SHIPPED = {path.name: json.loads(path.read_text()) for path in sorted(Path(TOPOLOGIES).glob("*.vtopo"))}
DEEP = "\x00deep\x00"  # stands for 5,000 nested lists, spliced into the text (json.dumps cannot write them)
EXAMPLES = 2000 if os.environ.get("CI", "").lower() == "true" else 300

HOSTILE_STRINGS = ("garbage/24", "10.0.0.1", "10.0.0.1/33", "fe80::1%eth0\n;id", "eth0", "/etc/shadow", "fat:rw:/root",
                   "json:{}", "a,b=c", "\ud800", "\x00", "line\nbreak", "NaN", "", " ", "builtin", "bridge", "p1",
                   "router", "vm", "host", "macvtap", "0.0.0.0/0", "::/0", "127.0.0.1/8", "x" * 300)
HOSTILE_NUMBERS = (0, -1, 1, 2**63, -(2**63), 10**4000, 1e308, -1e308, 0.5, 65536, float("nan"), float("inf"))

scalars = st.one_of(st.none(), st.booleans(), st.sampled_from(HOSTILE_NUMBERS), st.integers(), st.floats(),
                    st.sampled_from(HOSTILE_STRINGS), st.text(max_size=12))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8) | st.sampled_from(HOSTILE_STRINGS), inner,
                                                 max_size=4)), max_leaves=12)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, path + (index,))
    return found


@st.composite
def mutated_labs(draw: st.DrawFn) -> str:
    doc = json.loads(json.dumps(SHIPPED[draw(st.sampled_from(sorted(SHIPPED)))]))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(doc)))
        if not path:
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(("replace", "delete", "nest")))
        if action == "delete":
            del parent[path[-1]]
        elif action == "nest":
            parent[path[-1]] = DEEP if draw(st.booleans()) else [parent[path[-1]]]
        else:
            parent[path[-1]] = draw(json_values)
    text = json.dumps(doc, ensure_ascii=draw(st.booleans())).replace(json.dumps(DEEP), "[" * 5000 + "]" * 5000)
    if draw(st.integers(0, 9)) == 0:  # a key written twice
        text = text.replace('"name": ', '"name": "twice", "name": ', 1)
    if draw(st.integers(0, 9)) == 0:  # cut short, or a byte changed
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] if draw(st.booleans()) else text[:cut] + draw(st.characters()) + text[cut + 1:]
    return text


def _drive(text: str) -> None:
    try:
        topology = io.loads(text)
        _, problems = registry().check_nodes(topology)
        if errors_in(problems):
            return
        if errors_in(problems_of(topology)):
            return
        plan_of(topology).explain()
    except LabError as error:
        assert error.problems and all(str(p) for p in error.problems)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated_labs())
def test_mutated_shipped_labs_never_crash(text: str) -> None:
    _drive(text)


@settings(max_examples=EXAMPLES // 4, deadline=None, suppress_health_check=list(HealthCheck))
@given(json_values)
def test_random_json_never_crashes(value: Any) -> None:
    _drive(json.dumps(value))
    _drive(json.dumps({"format": "vtopo", "version": 1, "nodes": value}))
    _drive(json.dumps({"format": "vtopo", "version": 2, "lab": value, "nodes": [value], "links": [value]}))
