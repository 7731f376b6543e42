"""The compiler's output: ops in dependency order, with their teardown and a readable script."""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Any

from vtopo.model.problems import Problem
from vtopo.model.rules import lab_tag
from vtopo.ops import Op, comment, script_of


@dataclass(frozen=True)
class Step:
    index: int
    op: Op
    deps: tuple[int, ...]


@dataclass
class Plan:
    lab_name: str
    prefix: str
    run_dir: str
    steps: list[Step]
    warnings: list[Problem] = field(default_factory=list)
    notes: str = ""

    @property
    def ops(self) -> list[Op]:
        return [step.op for step in self.steps]

    def teardown(self, applied: int | None = None) -> list[Op]:
        """Inverses of the first `applied` ops (all by default), newest first."""
        ops = self.ops if applied is None else self.ops[:applied]
        return [inverse for op in reversed(ops) if (inverse := op.inverse()) is not None]

    def to_json(self) -> dict[str, Any]:
        return {
            "lab": self.lab_name,
            "prefix": self.prefix,
            "run_dir": self.run_dir,
            "warnings": [str(w) for w in self.warnings],
            "steps": [{"index": s.index, "deps": list(s.deps), "owner": s.op.owner, **s.op.to_json()} for s in self.steps],
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n"

    def explain(self, owners: set[str] | None = None) -> str:
        """The plan as a commented shell script: each op applied on a ScriptHost. `owners` limits it to some nodes and
        links."""
        lines = ["#!/bin/sh",
                 f"# vtopo plan for lab {comment(repr(self.lab_name))}: every object below is named {self.prefix}-*",
                 "set -e", f"LAB_TAG={shlex.quote(lab_tag(self.prefix))}  # the tag on every object the lab makes"]
        if self.notes:
            lines += ["#"] + [f"# {comment(line)}".rstrip() for line in self.notes.splitlines()]
        for warning in self.warnings:
            lines.append(f"# {comment(str(warning))}")
        current_owner = None
        for step in self.steps:
            if owners is not None and step.op.owner not in owners:
                continue
            if step.op.owner != current_owner:
                current_owner = step.op.owner
                lines += ["", f"# ---- {comment(current_owner)}"]
            after = f" (after {', '.join(str(d) for d in step.deps)})" if step.deps else ""
            lines.append(f"# [{step.index}] {comment(step.op.summary())}{after}")
            lines.extend(script_of(step.op))
        teardown = self.teardown()
        lines += ["", "# ---- to tear it all down again (vtopo destroy does this):"]
        lines += [f"#   {comment(command)}" for op in teardown for command in script_of(op)]
        return "\n".join(lines) + "\n"
