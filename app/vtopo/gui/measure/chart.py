"""The live throughput chart: one run growing interval by interval, a finished run, or several runs overlaid."""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCharts import QLineSeries, QValueAxis
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QWidget

from vtopo.gui.measure.chart_view import PaletteChartView
from vtopo.gui.measure.format import rate_unit
from vtopo.measure import IntervalSample, RunResult


class ThroughputChart(PaletteChartView):
    """Throughput over time (left axis) with retransmits or loss (right axis); or several runs overlaid."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
        self._x = QValueAxis()
        self._x.setTitleText("time (s)")
        self._x.setLabelFormat("%g")
        self._y = QValueAxis()
        self._y.setLabelFormat("%g")
        self._y2 = QValueAxis()
        self._y2.setLabelFormat("%g")
        self._chart.addAxis(self._x, Qt.AlignmentFlag.AlignBottom)
        self._chart.addAxis(self._y, Qt.AlignmentFlag.AlignLeft)
        self._chart.addAxis(self._y2, Qt.AlignmentFlag.AlignRight)
        self._rates: dict[str, tuple[QLineSeries, list[tuple[float, float]]]] = {}
        self._impairs: dict[str, QLineSeries] = {}
        self._protocol = "tcp"
        self._scale = ("Mb/s", 1e6)
        self._x_max = 1.0
        self._impair_max = 1.0
        self.begin("", "tcp", 10)

    # -- a live run ---------------------------------------------------------------------------

    def _clear(self) -> None:
        self._chart.removeAllSeries()
        self._rates.clear()
        self._impairs.clear()
        self._scale = ("Mb/s", 1e6)
        self._impair_max = 1.0

    def begin(self, title: str, protocol: str, duration_s: float) -> None:
        """Empty the chart for a new run of `duration_s` seconds."""
        self._clear()
        self._chart.legend().show()
        self._protocol = protocol
        self._chart.setTitle(title)
        self._x_max = max(1.0, float(duration_s))
        self._x.setRange(0, self._x_max)
        self._y.setRange(0, 1)
        self._y.setTitleText(self._scale[0])
        self._y2.setTitleText("loss (%)" if protocol == "udp" else "retransmits")
        self._y2.setRange(0, 1)
        self._y2.setVisible(True)

    def _impair_series(self, direction: str) -> QLineSeries:
        if direction not in self._impairs:
            series = QLineSeries()
            what = "loss %" if self._protocol == "udp" else "retransmits"
            series.setName(what if direction == "forward" else f"{what} (reverse)")
            pen = QPen(QColor("#e0524a") if direction == "forward" else QColor("#b45fd6"))
            pen.setStyle(Qt.PenStyle.DashLine)
            pen.setWidthF(1.5)
            series.setPen(pen)
            self._add(series, self._y2)
            self._impairs[direction] = series
        return self._impairs[direction]

    def _add(self, series: QLineSeries, y_axis: QValueAxis) -> None:
        self._chart.addSeries(series)
        series.attachAxis(self._x)
        series.attachAxis(y_axis)

    def _rate_series(self, key: str, name: str) -> tuple[QLineSeries, list[tuple[float, float]]]:
        if key not in self._rates:
            series = QLineSeries()
            series.setName(name)
            series.setPointsVisible(True)
            self._add(series, self._y)
            self._rates[key] = (series, [])
        return self._rates[key]

    def add_sample(self, sample: IntervalSample) -> None:
        """One more interval of the live run (on the GUI thread)."""
        name = "source → destination" if sample.direction == "forward" else "destination → source"
        series, points = self._rate_series(sample.direction, name)
        points.append((sample.end, sample.bits_per_second))
        self._rescale()
        series.append(sample.end, sample.bits_per_second / self._scale[1])
        value = sample.lost_percent if self._protocol == "udp" else sample.retransmits
        if value is not None:
            self._impair_series(sample.direction).append(sample.end, float(value))
            self._impair_max = max(self._impair_max, float(value))
            self._y2.setRange(0, self._impair_max * 1.1)
            self._y2.applyNiceNumbers()
        if sample.end > self._x_max:
            self._x_max = sample.end
            self._x.setRange(0, self._x_max)
            self._x.applyNiceNumbers()

    def _rescale(self) -> None:
        peak = max((bps for _, pts in self._rates.values() for _, bps in pts), default=0.0)
        unit = rate_unit(peak)
        if unit != self._scale:
            self._scale = unit
            self._y.setTitleText(unit[0])
            for series, pts in self._rates.values():
                series.replace([QPointF(x, bps / unit[1]) for x, bps in pts])
        self._y.setRange(0, max(peak / self._scale[1] * 1.1, 1e-3))
        self._y.applyNiceNumbers()

    # -- finished runs ------------------------------------------------------------------------

    def show_result(self, result: RunResult) -> None:
        """One finished run, with the figures the client added at the end."""
        self.begin(f"{result.source} → {result.destination}  {result.options.describe()}", result.options.protocol,
                   result.options.duration_s)
        for sample in result.intervals:
            self.add_sample(sample)

    def show_overlay(self, results: Sequence[RunResult], labels: Sequence[str]) -> None:
        """Several runs' throughput (their main direction) on one time axis. The chart's own legend, which cuts
        long names short, gives way to one beside the chart (`legend_entries`)."""
        self._clear()
        self._chart.legend().hide()
        self._chart.setTitle(f"{len(results)} runs compared")
        self._y2.setVisible(False)
        self._x_max = 1.0
        several_labs = len({result.lab for result in results}) > 1
        for result, label in zip(results, labels):
            direction = result.options.directions()[0]
            lab = f" {result.lab}" if several_labs else ""
            series, points = self._rate_series(result.id, f"{label}{lab} {result.source}→{result.destination}")
            for s in result.samples(direction):
                points.append((s.end, s.bits_per_second))
                self._x_max = max(self._x_max, s.end)
        self._rescale()
        for series, points in self._rates.values():
            series.replace([QPointF(x, bps / self._scale[1]) for x, bps in points])
        self._x.setRange(0, self._x_max)
        self._x.applyNiceNumbers()

    # -- for tests and the host ---------------------------------------------------------------

    def point_count(self) -> int:
        return sum(series.count() for series, _ in self._rates.values())

    def legend_entries(self) -> list[tuple[str, QColor]]:
        """Each run's name and the colour of its line."""
        return [(series.name(), series.color()) for series, _ in self._rates.values()]

    def series_names(self) -> list[str]:
        return [series.name() for series, _ in self._rates.values()]

    def unit(self) -> str:
        return self._scale[0]
