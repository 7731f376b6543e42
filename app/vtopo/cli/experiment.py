"""`vtopo experiment LAB|FILE`: run the lab's measurement matrix, in rounds on a lab deployed afresh for each; table,
ratios with their spread between rounds, CSV, JSON, PNG and history, written to the user's data directory
(vtopo.user_data) unless -o names a folder."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from vtopo import user_data
from vtopo.cli.common import Command, agent_client, deployed_for_caller

if TYPE_CHECKING:
    from vtopo.client.agent_client import AgentClient
    from vtopo.experiment.results import CellRun, ExperimentResult
    from vtopo.measure import RunResult
    from vtopo.model.topology import Topology


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


class LabHost:
    """Deploys and destroys a lab file for an experiment, through the agent, as the caller."""

    def __init__(self, agent: AgentClient, path: Path, topology: Topology) -> None:
        self.agent, self.path, self.topology = agent, path, topology

    @property
    def name(self) -> str:
        return self.topology.name

    def deployed(self) -> bool:
        return any(summary.lab == self.name for summary in self.agent.status())

    def deploy(self) -> list[str]:
        """Deploy the file; the deploy's notices (what this host gives the lab instead of what it asks)."""
        from vtopo.lab_terms import Trust
        from vtopo.model.lab_text import read_text

        return self.agent.deploy(read_text(self.path), Trust(), source=str(self.path.resolve())).notices

    def destroy(self) -> None:
        self.agent.destroy(self.name)


def cmd_experiment(args: argparse.Namespace) -> int:
    """On a FILE whose lab is not deployed, deploy it for each round and destroy it after: one command. A deployed
    lab is measured as it is, in one round."""
    from vtopo.experiment.results import merged
    from vtopo.lab import open_lab

    path = Path(args.lab)
    source: Path | None = path
    if path.suffix == ".vtopo" and path.exists():
        topology = open_lab(path).topology
    else:
        lab = deployed_for_caller(args.lab, "measure")
        topology, source = lab.context.topology, Path(lab.source) if lab.source else None
    if topology.experiment.empty:
        print(f"lab {topology.name} has no experiment", file=sys.stderr)
        return 1
    host = LabHost(agent_client(), path, topology) if source == path else None
    fresh = host is not None and not host.deployed()
    if args.rounds > 1 and not fresh:
        print(f"error: --rounds {args.rounds} deploys lab {topology.name} afresh for each round, but it is deployed "
              f"now: destroy it first (`vtopo destroy {topology.name}`), or measure it as it is without --rounds",
              file=sys.stderr)
        return 1
    rounds: list[ExperimentResult] = []
    kept: list[RunResult] = []
    if host is not None and fresh:
        print(f"lab {topology.name} is not deployed: deploying it for each of {args.rounds} round(s), and "
              "destroying it after", flush=True)
        for number in range(1, args.rounds + 1):
            print(f"round {number} of {args.rounds}: deploying lab {topology.name}", flush=True)
            for notice in host.deploy():
                print(f"note: {notice}", flush=True)
            try:
                rounds.append(_round(args, topology, kept))
            finally:
                host.destroy()
    else:
        rounds.append(_round(args, topology, kept))
    result = merged(rounds)
    print()
    print(result.table())
    for written in write_outputs(result, args.out or user_data.folder(user_data.EXPERIMENTS)):
        print(f"wrote {written}")
    _add_to_history(topology.name, kept, args.no_history)
    return 0 if result.complete else 1


def _round(args: argparse.Namespace, topology: Topology, kept: list[RunResult]) -> ExperimentResult:
    """One round of the experiment on the deployed lab; its iperf3 runs go to `kept`."""
    from vtopo.experiment.runner import ExperimentRun
    from vtopo.measure import RunResult

    run = ExperimentRun(deployed_for_caller(topology.name, "measure"), topology.experiment, repeats=args.repeat,
                        warmup=args.warmup, seconds=args.seconds, links=agent_client())
    print("waiting until every pair answers a ping (a VM does once its guest has booted)", flush=True)
    for silent in run.wait_until_answering():
        print(f"note: pair {silent} does not answer; its cells will be empty", flush=True)

    def show(step: CellRun) -> None:
        print(step.line(), flush=True)
        if not step.warmup and isinstance(step.record, RunResult):
            kept.append(step.record)

    try:
        return run.run(show)
    except KeyboardInterrupt:
        run.cancel()
        raise


def _add_to_history(lab: str, kept: list[RunResult], skip: bool) -> None:
    from vtopo.measure import history_path, load_history, save_history

    if not kept or skip:
        return
    history = history_path(lab)
    save_history(history, [*load_history(history), *kept])
    print(f"added {len(kept)} iperf3 run(s) to {history}")


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def add_commands(command: Command) -> None:
    sub = command("experiment", cmd_experiment, "run a lab's experiment: progress, a table of mean/stdev/min/max per "
                  "cell and the ratios with their spread between rounds, CSV, JSON and PNG")
    sub.add_argument("lab", help="the lab's name, or its .vtopo file (deployed for the experiment if it is not, and "
                     "destroyed after)")
    sub.add_argument("--rounds", type=_positive, default=1, metavar="N", help="deploy the lab file afresh N times and "
                     "run the experiment on each; a ratio whose rounds fall on both sides of 1.0 is reported as no "
                     "difference measurable here (default: 1)")
    sub.add_argument("--repeat", type=int, metavar="N", help="runs per cell in each round (default: the experiment's "
                     "repeats)")
    sub.add_argument("--warmup", type=int, metavar="N", help="warm-up runs per cell, not kept (default: the "
                     "experiment's)")
    sub.add_argument("--seconds", type=float, metavar="S", help="shorten every iperf3 and request/response run to "
                     "S seconds (a quick run)")
    sub.add_argument("--no-history", action="store_true", help="do not add the iperf3 runs to the lab's history")
    sub.add_argument("-o", "--out", type=Path, metavar="DIR", help="where to write the CSV, JSON and PNG (default: "
                     "your data directory's experiments/: ~/.local/share/vtopo)")
