"""The experiment's chart as a PNG: one panel per test, a bar per pair with its spread between rounds (between runs,
for one round). No Qt."""
from __future__ import annotations

import io
import math

from vtopo.experiment.results import Cell, ExperimentResult


def png_of(result: ExperimentResult) -> bytes:
    """The experiment's chart as a PNG image."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, no Qt
    from matplotlib.figure import Figure

    tests = list(dict.fromkeys(cell.test for cell in result.cells))
    figure = Figure(figsize=(max(4.0, 3.2 * len(tests)), 3.6), layout="constrained")
    for index, test in enumerate(tests, start=1):
        cells = [cell for cell in result.cells if cell.test == test]
        axes = figure.add_subplot(1, len(tests), index)
        means = [cell.mean for cell in cells]
        lows, highs = zip(*(_range(cell, result.rounds) for cell in cells))
        below = [max(0.0, mean - low) for mean, low in zip(means, lows)]  # a mean over unequal rounds may lie
        above = [max(0.0, high - mean) for mean, high in zip(means, highs)]  # outside their means, or round off
        axes.bar([cell.pair for cell in cells], means, yerr=[below, above], capsize=4, color="#3b7dd8")
        axes.set_title(f"{test} ({cells[0].tool})")
        axes.set_ylabel(cells[0].unit)
        axes.tick_params(axis="x", labelrotation=20)
    spread = "the lowest to the highest round mean" if result.rounds > 1 else "min to max"
    figure.suptitle(f"{result.lab}\nmean of {result.rounds} round(s) of {result.repeats} run(s),\nbars from {spread}",
                    fontsize=9)
    image = io.BytesIO()
    figure.savefig(image, dpi=100, format="png")
    return image.getvalue()


def _range(cell: Cell, rounds: int) -> tuple[float, float]:
    """What a bar's whisker spans: the spread between rounds when there are several, else between runs."""
    if rounds > 1:
        finite = [mean for mean in cell.round_means if math.isfinite(mean)]
        return (min(finite), max(finite)) if finite else (cell.mean, cell.mean)
    return cell.minimum, cell.maximum
