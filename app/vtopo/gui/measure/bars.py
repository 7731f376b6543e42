"""The mean throughput of the runs being compared, as bars side by side."""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCharts import QBarCategoryAxis, QBarSeries, QBarSet, QValueAxis
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from vtopo.gui.measure.chart_view import PaletteChartView
from vtopo.gui.measure.format import rate_unit
from vtopo.measure import RunResult


class MeanBars(PaletteChartView):
    """The mean throughput of the selected runs, side by side."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._chart.legend().hide()
        self.values: list[float] = []

    def show_runs(self, results: Sequence[RunResult], labels: Sequence[str]) -> None:
        self._chart.removeAllSeries()
        for axis in self._chart.axes():
            self._chart.removeAxis(axis)
        means = [r.mean_bits_per_second or 0.0 for r in results]
        unit, scale = rate_unit(max(means, default=0.0))
        self.values = [m / scale for m in means]
        bars = QBarSet("mean")
        bars.append(self.values)
        series = QBarSeries()
        series.append(bars)
        series.setLabelsVisible(True)
        series.setLabelsFormat("@value")
        series.setLabelsPrecision(4)
        self._chart.addSeries(series)
        categories = QBarCategoryAxis()
        categories.append(list(labels))
        values = QValueAxis()
        values.setTitleText(unit)
        values.setRange(0, max(self.values, default=1.0) * 1.15 or 1.0)
        values.applyNiceNumbers()
        values.setLabelFormat("%g")
        self._chart.addAxis(categories, Qt.AlignmentFlag.AlignBottom)
        self._chart.addAxis(values, Qt.AlignmentFlag.AlignLeft)
        series.attachAxis(categories)
        series.attachAxis(values)
        self._chart.setTitle(f"mean throughput ({unit})")
