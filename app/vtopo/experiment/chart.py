"""The experiment's chart as a PNG: one panel per test, a bar per pair with its min-max range. No Qt."""
from __future__ import annotations

import io

from vtopo.experiment.results import ExperimentResult


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
        below = [cell.mean - cell.minimum for cell in cells]
        above = [cell.maximum - cell.mean for cell in cells]
        axes.bar([cell.pair for cell in cells], means, yerr=[below, above], capsize=4, color="#3b7dd8")
        axes.set_title(f"{test} ({cells[0].tool})")
        axes.set_ylabel(cells[0].unit)
        axes.tick_params(axis="x", labelrotation=20)
    figure.suptitle(f"{result.lab}: mean of {result.repeats} run(s), bars from min to max", fontsize=10)
    image = io.BytesIO()
    figure.savefig(image, dpi=100, format="png")
    return image.getvalue()
