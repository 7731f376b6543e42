"""`vtopo stage LAB|FILE [N]`: the stage of an exercise a user is at, with its checks' live state, or a move to
another; `vtopo handout ASSIGNMENT.vtopo [-o DIR]`: the student's copy of an assignment and its printable sheet."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from vtopo.cli.common import Command, deployed_for_caller

if TYPE_CHECKING:
    from vtopo.checks.spec import TypedCheck
    from vtopo.checks.stages import StageState
    from vtopo.deployed import DeployedLab
    from vtopo.model.topology import Topology


def _exercise(target: str) -> tuple[Topology, DeployedLab | None]:
    """The lab's topology (the file's when a file is given) and the deployed lab, when it is deployed."""
    from vtopo.deployed import NotDeployed
    from vtopo.lab import open_lab

    path = Path(target)
    if path.suffix == ".vtopo" and path.exists():
        topology = open_lab(path).topology
        try:
            return topology, deployed_for_caller(topology.name, "check")
        except NotDeployed:
            return topology, None
    lab = deployed_for_caller(target, "check")
    return lab.context.topology, lab


def _judged(topology: Topology, number: int, checks: list[TypedCheck], lab: DeployedLab) -> StageState:
    from vtopo.checks.engine import run_checks
    from vtopo.checks.live import LiveProbe
    from vtopo.checks.stages import StageState, checks_of

    stage = topology.stages[number - 1]
    return StageState(number, stage, run_checks(checks_of(stage, checks), LiveProbe(lab)))


def _show(topology: Topology, number: int, checks: list[TypedCheck], state: StageState | None) -> None:
    from vtopo.checks.stages import checks_of

    stage = topology.stages[number - 1]
    print(f"stage {number} of {len(topology.stages)}: {stage.title}")
    if stage.instructions:
        print(f"\n{stage.instructions.strip()}\n")
    if state is None:
        for check in checks_of(stage, checks):
            print(f"  ?     {check.check.name}  {check.explanation}")
        print("the lab is not deployed: deploy it to see its checks' state")
        return
    for outcome in state.outcomes:
        mark = "pass" if outcome.passed else "FAIL"
        print(f"  {mark}  {outcome.check.check.name}  {outcome.verdict.why}")
    print(f"stage {number} is {'complete' if state.complete else 'not complete'}")


def cmd_stage(args: argparse.Namespace) -> int:
    from vtopo.checks.spec import typed_checks
    from vtopo.checks.stages import current_stage, passed_on_the_way, record_stage
    from vtopo.lab import registry
    from vtopo.model.problems import LabError

    topology, lab = _exercise(args.lab)
    if not topology.stages:
        print(f"lab {topology.name} has no stages", file=sys.stderr)
        return 1
    checks, problems = typed_checks(topology, registry())
    if problems:
        raise LabError(problems)
    current = current_stage(topology)
    target = current if args.number is None else args.number
    if not 1 <= target <= len(topology.stages):
        print(f"lab {topology.name} has stages 1 to {len(topology.stages)}, not {target}", file=sys.stderr)
        return 1
    if not args.force:
        for number in passed_on_the_way(current, target):
            if lab is None:
                print(f"lab {topology.name} is not deployed, so stage {number} cannot be checked: deploy it, or "
                      "move with --force", file=sys.stderr)
                return 1
            state = _judged(topology, number, checks, lab)
            if not state.complete:
                print(f"stage {number} ({state.stage.title}) is not complete: {', '.join(state.failing)} fail; "
                      "pass them first, or move with --force", file=sys.stderr)
                return 1
    if target != current:
        try:
            record_stage(topology, target)
        except OSError as error:
            print(f"cannot keep the stage you are at in {error.filename}: {error.strerror}; set VTOPO_DATA_DIR to a "
                  "folder of yours", file=sys.stderr)
            return 1
    _show(topology, target, checks, None if lab is None else _judged(topology, target, checks, lab))
    return 0


def cmd_handout(args: argparse.Namespace) -> int:
    from vtopo import user_data
    from vtopo.interop.handout import write_handout
    from vtopo.lab import open_lab

    assignment = Path(args.assignment)
    topology = open_lab(assignment).topology
    directory = Path(args.output) if args.output else user_data.folder(user_data.HANDOUTS) / \
        user_data.file_stem(topology.name)
    try:
        copy_path, sheet_path = write_handout(assignment, topology, directory)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    hidden = sum(check.hidden for check in topology.checks)
    print(f"the student's copy: {copy_path} ({len(topology.stages)} stages, {hidden} hidden checks left out)")
    print(f"the printable sheet: {sheet_path}")
    return 0


def add_commands(command: Command) -> None:
    sub = command("stage", cmd_stage, "show the stage of an exercise you are at, with its checks' live state, or "
                  "move to stage N (only past complete stages, unless --force)")
    sub.add_argument("lab", help="the lab's name, or its .vtopo file")
    sub.add_argument("number", nargs="?", type=int, help="the stage to move to, from 1")
    sub.add_argument("--force", action="store_true", help="move on even past stages whose checks fail")

    sub = command("handout", cmd_handout, "write the student's copy of an assignment (without hidden checks and "
                  "solutions) and a printable HTML sheet with its diagram and stages")
    sub.add_argument("assignment", help="the assignment's .vtopo file")
    sub.add_argument("-o", "--output", help="the folder to write NAME.vtopo and NAME.html into (default: "
                     "handouts/NAME in your vtopo data folder)")
