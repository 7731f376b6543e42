"""An experiment's results: the values of each cell with their statistics, the ratios asked for, the host."""
from __future__ import annotations

import csv
import io
import json
import math
import statistics
from dataclasses import asdict, dataclass, field
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


@dataclass(frozen=True)
class Ratio:
    name: str
    cell: str
    versus: str
    value: float
    published: str = ""


@dataclass
class ExperimentResult:
    lab: str
    started_at: str
    host: dict[str, Any]
    repeats: int
    warmup: int
    cells: list[Cell] = field(default_factory=list)
    ratios: list[Ratio] = field(default_factory=list)
    limitations: list[str] = field(default_factory=list)
    """Why this host cannot reproduce what the lab was drawn for (no KVM, no vhost-net, no OVS kernel datapath)."""

    def cell(self, name: str) -> Cell:
        return next(c for c in self.cells if c.name == name)

    @property
    def complete(self) -> bool:
        return all(c.complete for c in self.cells) and all(math.isfinite(r.value) for r in self.ratios)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for cell, raw in zip(self.cells, data["cells"]):
            raw.update(mean=cell.mean, stdev=cell.stdev, min=cell.minimum, max=cell.maximum)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, allow_nan=True)

    def to_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["cell", "pair", "test", "tool", "unit", "runs", "mean", "stdev", "min", "max", "path"])
        for c in self.cells:
            writer.writerow([c.name, c.pair, c.test, c.tool, c.unit, len(c.values), *(f"{v:.6g}" for v in
                             (c.mean, c.stdev, c.minimum, c.maximum)), c.path])
        writer.writerow([])
        writer.writerow(["ratio", "cell", "versus", "value", "published"])
        for r in self.ratios:
            writer.writerow([r.name, r.cell, r.versus, f"{r.value:.4g}", r.published])
        return out.getvalue()

    def table(self) -> str:
        """The results as a plain-text table, cells then ratios, then the host they were measured on."""
        rows: list[tuple[str, ...]] = [("cell", "unit", "runs", "mean", "stdev", "min", "max")]
        rows += [(c.name, c.unit, str(len(c.values)), *(_figure(v) for v in (c.mean, c.stdev, c.minimum, c.maximum)))
                 for c in self.cells]
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths)))
                 for row in rows]
        for ratio in self.ratios:
            published = f"   (published: {ratio.published})" if ratio.published else ""
            lines.append(f"{ratio.name}: {ratio.cell} / {ratio.versus} = {ratio.value:.3f}{published}")
        lines.append("host: " + ", ".join(f"{k} {v}" for k, v in self.host.items()))
        lines += [f"not reproducible here: {limitation}" for limitation in self.limitations]
        return "\n".join(lines)


def _figure(value: float) -> str:
    if not math.isfinite(value):
        return "-"
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.3f}"


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
