"""An experiment's results: the values of each cell with their statistics, the ratios asked for, the host.

An experiment runs in rounds, each on a lab deployed afresh. A ratio is trusted as far as it holds from round to
round: one whose rounds fall on both sides of 1.0 is no difference measurable here, whatever its mean says."""
from __future__ import annotations

import csv
import io
import json
import math
import statistics
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from vtopo.measure.record import RunRecord


@dataclass
class Cell:
    name: str  # PAIR/TEST
    pair: str
    test: str
    tool: str
    unit: str
    path: str = ""
    values: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    round_means: list[float] = field(default_factory=list)
    """The mean of each round's runs (NaN for a round that gave none), in the order the rounds ran."""

    @property
    def complete(self) -> bool:
        return bool(self.values) and all(math.isfinite(v) for v in self.values)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values) if self.values else math.nan

    @property
    def stdev(self) -> float:
        return statistics.stdev(self.values) if len(self.values) > 1 else 0.0 if self.values else math.nan

    @property
    def minimum(self) -> float:
        return min(self.values) if self.values else math.nan

    @property
    def maximum(self) -> float:
        return max(self.values) if self.values else math.nan

    def end_round(self, first_value: int) -> None:
        """Close a round whose runs are the values from index `first_value` on."""
        runs = self.values[first_value:]
        self.round_means.append(statistics.fmean(runs) if runs else math.nan)


@dataclass(frozen=True)
class Ratio:
    name: str
    cell: str
    versus: str
    value: float
    published: str = ""
    rounds: list[float] = field(default_factory=list)
    """The ratio of each round's means."""
    not_measurable: str = ""
    """Why this host cannot make the difference the comparison is about (then there is no value)."""

    @property
    def low(self) -> float:
        return min((v for v in self.rounds if math.isfinite(v)), default=math.nan)

    @property
    def high(self) -> float:
        return max((v for v in self.rounds if math.isfinite(v)), default=math.nan)

    @property
    def measured_rounds(self) -> int:
        return sum(1 for v in self.rounds if math.isfinite(v))

    @property
    def no_difference(self) -> bool:
        """The rounds disagree on which side is larger: the spread between them covers 1.0."""
        return self.measured_rounds > 1 and self.low <= 1.0 <= self.high

    @property
    def complete(self) -> bool:
        return bool(self.not_measurable) or math.isfinite(self.value)

    def verdict(self) -> str:
        """What the ratio says, in the words a table, the designer and the reference page share."""
        if self.not_measurable:
            return f"not measurable here: {self.not_measurable}"
        if not math.isfinite(self.value):
            return "no value: a cell of it has no runs"
        spread = f"{self.low:.3f}–{self.high:.3f} over {self.measured_rounds} rounds"
        if self.no_difference:
            return f"no difference measurable here ({spread})"
        if self.measured_rounds < 2:
            return f"{self.value:.3f} (one round: how far it holds is not measured)"
        return f"{self.value:.3f} ({spread})"


@dataclass
class ExperimentResult:
    lab: str
    started_at: str
    host: dict[str, Any]
    repeats: int
    warmup: int
    rounds: int = 1
    cells: list[Cell] = field(default_factory=list)
    ratios: list[Ratio] = field(default_factory=list)
    limitations: list[str] = field(default_factory=list)
    """Why this host cannot reproduce what the lab was drawn for (no KVM, no vhost-net, no OVS kernel datapath)."""

    def cell(self, name: str) -> Cell:
        return next(c for c in self.cells if c.name == name)

    @property
    def complete(self) -> bool:
        return all(c.complete for c in self.cells) and all(r.complete for r in self.ratios)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for cell, raw in zip(self.cells, data["cells"]):
            raw.update(mean=cell.mean, stdev=cell.stdev, min=cell.minimum, max=cell.maximum)
        for ratio, raw in zip(self.ratios, data["ratios"]):
            raw.update(low=ratio.low, high=ratio.high, no_difference=ratio.no_difference, verdict=ratio.verdict())
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, allow_nan=True)

    def to_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["cell", "pair", "test", "tool", "unit", "runs", "mean", "stdev", "min", "max", "round means",
                         "path"])
        for c in self.cells:
            writer.writerow([c.name, c.pair, c.test, c.tool, c.unit, len(c.values), *(f"{v:.6g}" for v in
                             (c.mean, c.stdev, c.minimum, c.maximum)), " ".join(f"{v:.6g}" for v in c.round_means),
                             c.path])
        writer.writerow([])
        writer.writerow(["ratio", "cell", "versus", "value", "rounds", "verdict", "published"])
        for r in self.ratios:
            writer.writerow([r.name, r.cell, r.versus, f"{r.value:.4g}", " ".join(f"{v:.4g}" for v in r.rounds),
                             r.verdict(), r.published])
        return out.getvalue()

    def table(self) -> str:
        """The results as a plain-text table, cells then ratios, then the host they were measured on. With more
        than one round, each cell shows the lowest and highest of its round means."""
        rounds = self.rounds > 1
        rows: list[tuple[str, ...]] = [("cell", "unit", "runs", "mean", "stdev", "min", "max",
                                        *(("round means",) if rounds else ()))]
        rows += [(c.name, c.unit, str(len(c.values)), *(figure(v) for v in (c.mean, c.stdev, c.minimum, c.maximum)),
                  *((spread(c.round_means),) if rounds else ())) for c in self.cells]
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths)))
                 for row in rows]
        for ratio in self.ratios:
            published = f"   (published: {ratio.published})" if ratio.published else ""
            lines.append(f"{ratio.name}: {ratio.cell} / {ratio.versus} = {ratio.verdict()}{published}")
        lines.append("host: " + ", ".join(f"{k} {v}" for k, v in self.host.items()))
        lines += [f"not reproducible here: {limitation}" for limitation in self.limitations]
        return "\n".join(lines)


def merged(rounds: list[ExperimentResult]) -> ExperimentResult:
    """One result of several rounds of the same experiment: each cell's runs and round means, each ratio's rounds
    (a comparison this host cannot make in one round it cannot make at all)."""
    first = rounds[0]
    cells = [replace(cell, values=[v for r in rounds for v in r.cell(cell.name).values],
                                 errors=[e for r in rounds for e in r.cell(cell.name).errors],
                                 round_means=[m for r in rounds for m in r.cell(cell.name).round_means])
             for cell in first.cells]
    by_name = {cell.name: cell for cell in cells}
    ratios = []
    for ratio in first.ratios:
        same = [next(other for other in r.ratios if other.name == ratio.name) for r in rounds]
        why = next((other.not_measurable for other in same if other.not_measurable), "")
        over = by_name[ratio.versus].mean
        value = math.nan if why or not over else by_name[ratio.cell].mean / over
        ratios.append(replace(ratio, value=value, rounds=[v for other in same for v in other.rounds],
                              not_measurable=why))
    return replace(first, rounds=len(rounds), cells=cells, ratios=ratios,
                   limitations=list(dict.fromkeys(x for r in rounds for x in r.limitations)))


def figure(value: float) -> str:
    """A figure as tables show it: 1,234.5, 12.3 or 0.123; a dash for none."""
    if not math.isfinite(value):
        return "-"
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.3f}"


def spread(values: list[float]) -> str:
    """The lowest and highest of `values` ("400.0–510.0"), those that are figures."""
    finite = [v for v in values if math.isfinite(v)]
    return f"{figure(min(finite))}–{figure(max(finite))}" if finite else "-"


@dataclass(frozen=True)
class CellRun:
    """One run ended: which cell, which repeat (0 for warm-up), its value, and the record it came from."""

    cell: Cell
    repeat: int
    warmup: bool
    value: float
    record: RunRecord
    done: int
    total: int

    def line(self) -> str:
        """The run as progress shows it: "[3/12] tap/tcp run 2: 612.3 Mbit/s", or why it gave no figure."""
        what = "warm-up" if self.warmup else f"run {self.repeat}"
        value = (f"{figure(self.value)} {self.cell.unit}" if math.isfinite(self.value) else
                 f"failed: {self.record.error or 'the run gave no figure'}")
        return f"[{self.done}/{self.total}] {self.cell.name} {what}: {value}"
