"""`vtopo check LAB|FILE`: judge a lab's checks against the deployed lab; a table of pass, fail and why."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from vtopo.cli.common import Command, deployed_for_caller

if TYPE_CHECKING:
    from vtopo.checks.engine import Outcome
    from vtopo.deployed import DeployedLab
    from vtopo.model.topology import Topology


def lab_and_topology(target: str, action: str) -> tuple[DeployedLab, Topology]:
    """The deployed lab and the topology whose checks and experiment apply: the file's when a file is given
    (edited since the deploy, say), else the one saved with the deployed lab. The caller must own the lab to
    `action` it."""
    from vtopo.lab import open_lab

    path = Path(target)
    if path.suffix == ".vtopo" and path.exists():
        topology = open_lab(path).topology
        return deployed_for_caller(topology.name, action), topology
    lab = deployed_for_caller(target, action)
    return lab, lab.context.topology


def cmd_check(args: argparse.Namespace) -> int:
    from vtopo.checks.engine import run_checks
    from vtopo.checks.live import LiveProbe
    from vtopo.checks.spec import typed_checks
    from vtopo.lab import registry
    from vtopo.model.problems import LabError

    lab, topology = lab_and_topology(args.lab, "check")
    checks, problems = typed_checks(topology, registry())
    if problems:
        raise LabError(problems)
    if not checks:
        print(f"lab {topology.name} has no checks", file=sys.stderr)
        return 0
    started = time.monotonic()
    outcomes = run_checks(checks, LiveProbe(lab))
    seconds = time.monotonic() - started
    failed = [o for o in outcomes if not o.passed]
    if args.json:
        print(json.dumps({"lab": topology.name, "passed": not failed, "seconds": round(seconds, 3),
                          "checks": [o.to_dict() for o in outcomes]}, indent=1))
    else:
        print_table(outcomes)
        print(f"{len(outcomes) - len(failed)} of {len(outcomes)} checks pass ({seconds:.1f} s)")
    return 0 if not failed else 1


def print_table(outcomes: list[Outcome]) -> None:
    width = max(len(o.check.check.name) for o in outcomes)
    for outcome in outcomes:
        mark = "pass" if outcome.passed else "FAIL"
        print(f"{mark}  {outcome.check.check.name:<{width}}  {outcome.verdict.why}")
        if not outcome.passed:
            print(f"      {'':<{width}}  expected: {outcome.check.explanation}")


def add_commands(command: Command) -> None:
    sub = command("check", cmd_check, "run a lab's checks against the deployed lab: pass, fail and why; exit 0 only "
                  "when all pass")
    sub.add_argument("lab", help="the lab's name, or its .vtopo file")
    sub.add_argument("--json", action="store_true", help="print the outcomes as JSON, for tools")
