"""Running an experiment on a deployed lab: every test on every pair, warm-up first, each run as it ends."""
from __future__ import annotations

import dataclasses
import math
import os
import platform
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any

from vtopo.compile.resolve import resolve
from vtopo.experiment.conditions import not_measurable
from vtopo.experiment.reconvergence import LinkSwitch, ReconvergenceRun
from vtopo.experiment.results import Cell, CellRun, ExperimentResult, Ratio
from vtopo.experiment.spec import UNITS, options_of
from vtopo.deployed import DeployedLab
from vtopo.kinds.registry import installed_kinds
from vtopo.model.problems import Severity
from vtopo.measure import IperfRun, MeasureError, PingRun, RRRun, check_reachable
from vtopo.measure.base import MeasureRun
from vtopo.model.expectations import Experiment, cell_name
from vtopo.model.measurements import Comparison, Pair, Test


ANSWER_WITHIN_S = 90.0  # a VM under TCG takes tens of seconds to boot


def host_facts(lab: DeployedLab) -> dict[str, Any]:
    """What the figures depend on: the kernel, the CPU, how VMs run, vhost-net and the OVS datapath."""
    cpu = next((line.split(":", 1)[1].strip() for line in _cpuinfo() if line.startswith("model name")),
               platform.processor() or "unknown")
    facts = lab.context.facts
    return {"kernel": platform.release(), "cpu": f"{cpu} ×{os.cpu_count()}",
            "vm acceleration": facts.accel.upper(), "vhost-net": "yes" if facts.vhost_net else "no",
            "ovs datapath": facts.ovs_datapath}


def limitations(lab: DeployedLab) -> list[str]:
    """Why this host cannot give the figures the lab was drawn for: the compiler's warnings about it (no KVM, no
    vhost-net) and what each kind says the host keeps it from being (OVS without its kernel datapath)."""
    context = lab.context
    found = [problem.message for problem in resolve(context.topology, installed_kinds(), context.facts).problems
             if problem.severity is Severity.WARNING]
    found += [limit for node in context.nodes.values() for limit in node.kind.limitations(node)]
    return list(dict.fromkeys(found))


def _cpuinfo() -> list[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            return info.read().splitlines()
    except OSError:
        return []


def value_of(tool: str, record: Any) -> float:
    """The one figure a run contributes to its cell, NaN when the run gave none."""
    if record.status != "ok":
        return math.nan
    if tool == "iperf":
        rate = record.mean_bits_per_second
        return rate / 1e6 if rate is not None else math.nan
    if tool == "ping":
        return record.rtt_avg_ms if record.rtt_avg_ms is not None else math.nan
    if tool == "reconvergence":
        return record.seconds if record.seconds is not None else math.nan
    return float(record.transactions_per_second) or math.nan


def shortened(test: Test, seconds: float | None) -> dict[str, Any]:
    """The test's options with its duration capped at `seconds` (a quick run in CI)."""
    options = dict(test.options)
    if seconds is not None and test.tool in ("iperf", "rr"):
        options["duration_s"] = int(seconds) if test.tool == "iperf" else float(seconds)
    elif seconds is not None and test.tool == "ping":
        options["count"] = min(int(options.get("count", 10)), max(2, int(seconds * 5)))
    return options


class ExperimentRun:
    def __init__(self, lab: DeployedLab, experiment: Experiment, *, repeats: int | None = None,
                 warmup: int | None = None, seconds: float | None = None, links: LinkSwitch | None = None) -> None:
        """`links` takes the lab's links down and up, for a reconvergence test."""
        self.lab = lab
        self.links = links
        self.experiment = dataclasses.replace(experiment, repeats=repeats or experiment.repeats,
                                              warmup=experiment.warmup if warmup is None else warmup)
        self.seconds = seconds
        self.result = ExperimentResult(lab=lab.context.topology.name,
                                       started_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                       host=host_facts(lab), repeats=self.experiment.repeats,
                                       warmup=self.experiment.warmup, limitations=limitations(lab))
        self._current: MeasureRun[Any, Any, Any] | None = None
        self._cancelled = False

    def _measure(self, pair: Pair, test: Test) -> MeasureRun[Any, Any, Any]:
        options, problems = options_of(test.tool, shortened(test, self.seconds))
        if problems:
            raise ValueError(f"test {test.name}: {problems[0][1]}")
        source, destination = self.lab.endpoint(pair.source), self.lab.endpoint(pair.destination)
        address = self.lab.target_address(pair.source, pair.destination)[0]
        lab, path = self.result.lab, self.lab.path(pair.source, pair.destination)
        if test.tool == "iperf":
            return IperfRun(source, destination, address, options, lab=lab, path=path)
        if test.tool == "ping":
            return PingRun(source, destination, address, options, lab=lab, path=path)
        if test.tool == "reconvergence":
            if self.links is None:
                raise ValueError(f"test {test.name} takes a link down, which this experiment run cannot do")
            return ReconvergenceRun(source, destination, address, options, links=self.links, lab=lab, path=path)
        return RRRun(source, destination, address, options, lab=lab, path=path)

    def wait_until_answering(self, seconds: float = ANSWER_WITHIN_S) -> list[str]:
        """Wait until every pair's destination answers a ping from its source (a VM answers only once its guest has
        booted); returns the pairs that never answered, whose cells will then say why they are empty."""
        waiting = {pair.name: pair for pair in self.experiment.pairs}
        deadline = time.monotonic() + seconds
        while waiting and not self._cancelled:
            for name, pair in list(waiting.items()):
                address = self.lab.target_address(pair.source, pair.destination)[0]
                try:
                    check_reachable(self.lab.endpoint(pair.source), address, destination=pair.destination)
                    del waiting[name]
                except MeasureError:
                    pass
            if time.monotonic() > deadline:
                break
            if waiting:
                time.sleep(0.5)
        return sorted(waiting)

    def steps(self) -> Iterator[CellRun]:
        """Run the matrix, yielding each run as it ends; the result fills in as it goes."""
        per_cell = self.experiment.warmup + self.experiment.repeats
        total, done = per_cell * len(self.experiment.cells()), 0
        for pair, test in self.experiment.cells():
            cell = Cell(cell_name(pair, test), pair.name, test.name, test.tool, UNITS[test.tool],
                        self.lab.path(pair.source, pair.destination))
            self.result.cells.append(cell)
            for index in range(per_cell):
                if self._cancelled:
                    return
                self._current = self._measure(pair, test)
                try:
                    record = self._current.run()
                except MeasureError as error:  # one failed run leaves its cell short, not the table empty
                    if not self._current.has_result:
                        raise
                    record = self._current.result
                    record.error = record.error or str(error)
                value = value_of(test.tool, record)
                warmup = index < self.experiment.warmup
                if not warmup:
                    (cell.values.append(value) if math.isfinite(value) else
                     cell.errors.append(record.error or "the run gave no figure"))
                done += 1
                yield CellRun(cell, index - self.experiment.warmup + 1, warmup, value, record, done, total)
            cell.end_round(0)
        self.result.ratios = [self._ratio(comparison) for comparison in self.experiment.comparisons]

    def _ratio(self, comparison: Comparison) -> Ratio:
        """The comparison's ratio in this round, or why this host cannot make the difference it is about."""
        pairs = {pair.name: pair for pair in self.experiment.pairs}
        cell, versus = self.result.cell(comparison.cell), self.result.cell(comparison.versus)
        why = not_measurable(self.lab, pairs[cell.pair], pairs[versus.pair])
        value = math.nan if why or not versus.mean else cell.mean / versus.mean
        return Ratio(comparison.name, cell.name, versus.name, value, comparison.published, [value], why)

    def run(self, on_step: Callable[[CellRun], None] | None = None) -> ExperimentResult:
        for step in self.steps():
            if on_step is not None:
                on_step(step)
        return self.result

    def cancel(self) -> None:
        self._cancelled = True
        if self._current is not None:
            self._current.cancel()
