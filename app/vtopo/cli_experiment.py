"""`vtopo experiment LAB|FILE`: run the lab's measurement matrix; table, ratios, CSV, JSON, PNG and history, written
to the user's data directory (vtopo.user_data) unless -o names a folder."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from vtopo import user_data
from vtopo.cli_agent import agent_client
from vtopo.cli_check import lab_and_topology

if TYPE_CHECKING:
    from vtopo.experiment.results import CellRun, ExperimentResult
    from vtopo.measure import RunResult

Command = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]


def _show(step: CellRun) -> None:
    what = "warm-up" if step.warmup else f"run {step.repeat}"
    value = f"{step.value:,.1f} {step.cell.unit}" if step.value == step.value else f"failed: {step.record.error}"
    print(f"[{step.done}/{step.total}] {step.cell.name} {what}: {value}", flush=True)


def write_outputs(result: ExperimentResult, directory: Path) -> list[Path]:
    """LAB.experiment.csv, .json and .png in `directory`, private to the user when they are new."""
    from vtopo.experiment.chart import png_of
    from vtopo.model.io import write_atomically

    user_data.make_directory(directory)
    outputs: dict[str, str | bytes] = {"csv": result.to_csv(), "json": result.to_json(), "png": png_of(result)}
    paths = []
    for extension, content in outputs.items():
        paths.append(directory / f"{user_data.file_stem(result.lab)}.experiment.{extension}")
        write_atomically(paths[-1], content, user_data.PRIVATE_FILE)
    return paths


def cmd_experiment(args: argparse.Namespace) -> int:
    """On a FILE whose lab is not deployed, deploy it for the experiment and destroy it after: one command."""
    from vtopo.deployed import NotDeployed
    from vtopo.host.deployer import Deployer
    from vtopo.kinds.environment import Trust
    from vtopo.lab import open_lab
    from vtopo.model.io import read_text

    path = Path(args.lab)
    try:
        return _experiment(args)
    except NotDeployed:
        if path.suffix != ".vtopo" or not path.exists():
            raise
    topology = open_lab(path).topology
    agent = agent_client()
    print(f"lab {topology.name} is not deployed: deploying it for the experiment, and destroying it after", flush=True)
    if agent is None:
        Deployer().deploy(topology, source=path.resolve())
    else:
        agent.deploy(read_text(path), Trust(), source=str(path.resolve()))
    try:
        return _experiment(args)
    finally:
        if agent is None:
            Deployer().destroy(topology.name)
        else:
            agent.destroy(topology.name)


def _experiment(args: argparse.Namespace) -> int:
    from vtopo.experiment.runner import ExperimentRun
    from vtopo.measure import RunResult, history_path, load_history, save_history

    lab, topology = lab_and_topology(args.lab, "measure")
    if topology.experiment.empty:
        print(f"lab {topology.name} has no experiment", file=sys.stderr)
        return 1
    run = ExperimentRun(lab, topology.experiment, repeats=args.repeat, warmup=args.warmup,
                        seconds=args.seconds)
    print("waiting until every pair answers a ping (a VM does once its guest has booted)", flush=True)
    for silent in run.wait_until_answering():
        print(f"note: pair {silent} does not answer; its cells will be empty", flush=True)
    kept: list[RunResult] = []

    def show(step: CellRun) -> None:
        _show(step)
        if not step.warmup and isinstance(step.record, RunResult):
            kept.append(step.record)

    try:
        result = run.run(show)
    except KeyboardInterrupt:
        run.cancel()
        raise
    print()
    print(result.table())
    for path in write_outputs(result, args.out or user_data.folder(user_data.EXPERIMENTS)):
        print(f"wrote {path}")
    if kept and not args.no_history:
        history = history_path(topology.name)
        save_history(history, [*load_history(history), *kept])
        print(f"added {len(kept)} iperf3 run(s) to {history}")
    return 0 if result.complete else 1


def add_commands(command: Command) -> None:
    sub = command("experiment", cmd_experiment, "run a lab's experiment on the deployed lab: progress, a table of "
                  "mean/stdev/min/max per cell and the ratios, CSV, JSON and PNG")
    sub.add_argument("lab", help="the lab's name, or its .vtopo file")
    sub.add_argument("--repeat", type=int, metavar="N", help="runs per cell (default: the experiment's repeats)")
    sub.add_argument("--warmup", type=int, metavar="N", help="warm-up runs per cell, not kept (default: the "
                     "experiment's)")
    sub.add_argument("--seconds", type=float, metavar="S", help="shorten every iperf3 and request/response run to "
                     "S seconds (a quick run)")
    sub.add_argument("--no-history", action="store_true", help="do not add the iperf3 runs to the lab's history")
    sub.add_argument("-o", "--out", type=Path, metavar="DIR", help="where to write the CSV, JSON and PNG (default: "
                     "your data directory's experiments/: ~/.local/share/vtopo, root's /var/lib/vtopo)")
