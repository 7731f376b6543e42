"""Fuzzing the way in: whatever a .vtopo file holds, loading, validating, planning and explaining it ends in a
clean Problem or in success, never in another exception. Runs on every `make test` (2,000 examples in CI)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model import io
from vtopo.model.problems import LabError, errors_in
from vtopo.resources import TOPOLOGIES

from tests.fuzzing import EXAMPLES, json_values, mutated_text, with_numbers_in_strings

SHIPPED = {path.name: json.loads(path.read_text()) for path in sorted(Path(TOPOLOGIES).glob("*.vtopo"))}


@st.composite
def mutated_labs(draw: st.DrawFn) -> str:
    return mutated_text(draw, SHIPPED[draw(st.sampled_from(sorted(SHIPPED)))], twice="name")


def _drive(text: str) -> None:
    try:
        topology = io.loads(text)
        _, problems = registry().check_nodes(topology)
        if errors_in(problems):
            return
        if errors_in(resolve(topology, registry()).problems):
            return
        compile_plan(resolve(topology, registry())).explain()
    except LabError as error:
        assert error.problems and all(str(p) for p in error.problems)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated_labs())
def test_mutated_shipped_labs_never_crash(text: str) -> None:
    _drive(text)


@st.composite
def labs_with_numbers_in_strings(draw: st.DrawFn) -> str:
    return with_numbers_in_strings(draw, SHIPPED[draw(st.sampled_from(sorted(SHIPPED)))])


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(labs_with_numbers_in_strings())
def test_numbers_inside_strings_never_crash(text: str) -> None:
    _drive(text)


@settings(max_examples=EXAMPLES // 4, deadline=None, suppress_health_check=list(HealthCheck))
@given(json_values)
def test_random_json_never_crashes(value: Any) -> None:
    _drive(json.dumps(value))
    _drive(json.dumps({"format": "vtopo", "version": 1, "nodes": value}))
    _drive(json.dumps({"format": "vtopo", "version": 2, "lab": value, "nodes": [value], "links": [value]}))
