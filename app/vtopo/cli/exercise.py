"""`vtopo stage LAB|FILE [N]`: the stage of an exercise a user is at, with its checks' live state, or a move to
another (restoring the checkpoint a stage starts from); `vtopo checkpoint LAB|FILE ...`: named states of the running
lab kept in its file, made, listed, restored (only what differs changes), deleted, and a restore undone;
`vtopo handout ASSIGNMENT.vtopo [-o DIR]`: the student's copy of an assignment and its printable sheet."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from vtopo.cli.common import Command, agent_client, deployed_for_caller

if TYPE_CHECKING:
    from vtopo.checks.spec import TypedCheck
    from vtopo.model.checkpoints import Checkpoint
    from vtopo.checks.stages import StageState
    from vtopo.deployed import DeployedLab
    from vtopo.model.topology import Topology


def _exercise(target: str) -> tuple[Topology, DeployedLab | None]:
    """The lab's topology (the file's when a file is given) and the deployed lab, when it is deployed and has stages
    (a file without them is not looked for among the deployed labs)."""
    from vtopo.deployed import NotDeployed
    from vtopo.lab import open_lab

    if lab_file(target):
        topology = open_lab(Path(target)).topology
        if not topology.stages:
            return topology, None
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
    start = topology.stages[target - 1].checkpoint if target != current else ""
    if start:
        print(f"stage {target} starts from checkpoint {start}" + ("" if lab else ": deploy the lab to restore it"))
    if start and lab is not None:
        try:  # the running lab is put back as the checkpoint has it
            path, name = _where(args.lab)
            _restore(path, name, _checkpoint_named(topology, start), False)
        except CheckpointError as error:
            print(f"error: {error}", file=sys.stderr)
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


def lab_file(target: str) -> bool:
    path = Path(target)
    return path.suffix == ".vtopo" and path.exists()


def _checkpoint_named(topology: Topology, name: str) -> Checkpoint:
    from vtopo.model.checkpoints import named

    checkpoint = named(topology.checkpoints, name)
    if checkpoint is None:
        kept = ", ".join(kept.name for kept in topology.checkpoints) or "none"
        raise CheckpointError(f"lab {topology.name} has no checkpoint {name} (it has: {kept})")
    return checkpoint


class CheckpointError(Exception):
    """A checkpoint command that cannot be done, in one line."""


def _where(target: str) -> tuple[Path, str]:
    """The lab's file and its name: the file given, or the one the deployed lab named `target` came from."""
    from vtopo.lab import open_lab

    if lab_file(target):
        return Path(target), open_lab(Path(target)).topology.name
    from vtopo.protocol import not_the_owner

    deployed = next((lab for lab in agent_client().status(target) if lab.lab == target), None)
    if deployed is None:
        raise CheckpointError(f"no lab named {target} is deployed: give the lab's .vtopo file, or deploy it first")
    if deployed.owner != os.getuid() and os.getuid() != 0:
        raise CheckpointError(not_the_owner(target, deployed.owner, "keep checkpoints of"))
    if not deployed.source:
        raise CheckpointError(f"lab {target} was not deployed from a file, which keeps its checkpoints: deploy it "
                              "from one")
    return Path(deployed.source), target


def _keep(path: Path, checkpoint: Checkpoint) -> None:
    from vtopo.model import io
    from vtopo.model.checkpoints import keep

    topology = io.load(path)
    topology.checkpoints = keep(topology.checkpoints, checkpoint)
    _write(topology, path)


def _write(topology: Topology, path: Path) -> None:
    from vtopo.model import io

    try:
        io.save(topology, path)
    except OSError as error:
        raise CheckpointError(f"cannot write lab {topology.name}'s checkpoints into {path}: "
                              f"{error.strerror or error}") from None


def _restore(path: Path, lab: str, checkpoint: Checkpoint, explain: bool) -> int:
    """Restore `checkpoint` on the running lab, keeping first the state it replaces as the checkpoint UNDO."""
    from vtopo.model.checkpoints import UNDO

    agent = agent_client()
    before = None if explain else agent.take_checkpoint(lab, UNDO)
    restored = agent.restore(lab, checkpoint, explain)
    if before is not None and (restored.nodes or restored.links):
        _keep(path, before)
    print(restored.said(lab, checkpoint.name, explain))
    if before is not None and (restored.nodes or restored.links):
        print(f"the state before is kept as checkpoint {UNDO}: `vtopo checkpoint {lab} --undo` puts it back")
    return 0


def cmd_checkpoint(args: argparse.Namespace) -> int:
    from vtopo.model import io
    from vtopo.model.checkpoints import UNDO
    from vtopo.model.rules import CHECKPOINT_NAME, CHECKPOINT_NAME_RULE

    actions = [bool(args.name), args.list, bool(args.restore), bool(args.delete), args.undo]
    if sum(actions) != 1:
        args.parser.error("give a NAME to make a checkpoint, or one of --list, --restore NAME, --delete NAME, --undo")
    if args.explain and not (args.restore or args.undo):
        args.parser.error("--explain goes with --restore NAME or --undo")
    name = args.name or args.restore or args.delete or (UNDO if args.undo else "")
    if name and not CHECKPOINT_NAME.fullmatch(name):
        print(f"error: checkpoint {name!r}: {CHECKPOINT_NAME_RULE}", file=sys.stderr)
        return 1
    try:
        path, lab = _where(args.lab)
        topology = io.load(path)
        if topology.sites and not (args.list or args.delete):
            raise CheckpointError(f"lab {lab} is spread over sites: checkpoints are of labs on one machine only")
        if args.list:
            _list(topology)
        elif args.name:
            checkpoint = agent_client().take_checkpoint(lab, name)
            _keep(path, checkpoint)
            print(f"kept checkpoint {name} of lab {lab} in {path}: {len(checkpoint.nodes)} running node(s), "
                  f"{len(checkpoint.stopped)} stopped, {len(checkpoint.down)} link(s) down")
        elif args.delete:
            _checkpoint_named(topology, name)
            topology.checkpoints = [kept for kept in topology.checkpoints if kept.name != name]
            _write(topology, path)
            print(f"deleted checkpoint {name} of lab {lab} from {path}")
        else:
            if args.undo and not any(kept.name == UNDO for kept in topology.checkpoints):
                raise CheckpointError(f"lab {lab} has no restore to undo: a restore keeps the state it replaces as "
                                      f"checkpoint {UNDO}")
            return _restore(path, lab, _checkpoint_named(topology, name), args.explain)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def _list(topology: Topology) -> None:
    if not topology.checkpoints:
        print(f"lab {topology.name} has no checkpoints")
    for checkpoint in topology.checkpoints:
        print(f"{checkpoint.name:<24} {checkpoint.made:<21} {len(checkpoint.nodes)} running node(s), "
              f"{len(checkpoint.stopped)} stopped, {len(checkpoint.down)} link(s) down")


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
                  "move to stage N (only past complete stages, unless --force; a stage that starts from a checkpoint "
                  "restores it on the running lab)")
    sub.add_argument("lab", help="the lab's name, or its .vtopo file")
    sub.add_argument("number", nargs="?", type=int, help="the stage to move to, from 1")
    sub.add_argument("--force", action="store_true", help="move on even past stages whose checks fail")

    sub = command("checkpoint", cmd_checkpoint, "keep named states of a running lab in its file, and put one back: "
                  "vtopo checkpoint LAB NAME keeps each router's running configuration, the nodes' addresses and "
                  "routes, which nodes are stopped and which links are down or impaired; --restore NAME changes "
                  "only what differs (a router whose configuration differs restarts its daemons with the "
                  "checkpoint's, the others run on) and keeps the state it replaces as checkpoint before-restore, "
                  "which --undo puts back")
    sub.set_defaults(parser=sub)
    sub.add_argument("lab", help="the running lab's name, or its .vtopo file (which keeps the checkpoints)")
    sub.add_argument("name", nargs="?", help="make (or replace) the checkpoint of this name from the running lab")
    sub.add_argument("--list", action="store_true", help="list the lab's checkpoints")
    sub.add_argument("--restore", metavar="NAME", help="put the running lab back as checkpoint NAME has it")
    sub.add_argument("--delete", metavar="NAME", help="delete checkpoint NAME from the lab's file")
    sub.add_argument("--undo", action="store_true", help="undo the last restore (restore checkpoint before-restore)")
    sub.add_argument("--explain", action="store_true", help="with --restore or --undo: say what would change, and "
                     "change nothing")

    sub = command("handout", cmd_handout, "write the student's copy of an assignment (without hidden checks and "
                  "solutions) and a printable HTML sheet with its diagram and stages")
    sub.add_argument("assignment", help="the assignment's .vtopo file")
    sub.add_argument("-o", "--output", help="the folder to write NAME.vtopo and NAME.html into (default: "
                     "handouts/NAME in your vtopo data folder)")
