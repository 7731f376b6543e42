"""The live iperf3 panel: pick two nodes, run, watch the chart grow, compare runs from the history.

The panel knows nothing about the main window or the lab model. The host application gives it
the nodes it may measure (`set_targets`), a lab name and a path describer, and listens to
`run_started(source, destination)` / `run_finished()` to highlight the path on the canvas, and
to `history_changed()` to save the history (`save_history(path)`) beside the lab.

The run itself (`vtopo.measure.IperfRun`) is iterated in a worker thread that emits one signal
per interval sample; the chart is only touched on the GUI thread.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from PySide6.QtCharts import (
    QBarCategoryAxis,
    QBarSeries,
    QBarSet,
    QChart,
    QChartView,
    QLineSeries,
    QValueAxis,
)
from PySide6.QtCore import QObject, QPointF, Qt, QThread, Signal, Slot
from PySide6.QtGui import QCloseEvent, QPainter, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from vtopo.measure import Endpoint, InNode, IntervalSample, IperfOptions, IperfRun, MeasureError, RunResult
from vtopo.measure.history import dump_history, history_csv, load_history, save_history


class MeasureTarget(NamedTuple):
    """A node the panel may measure from or to, and the addresses it can be reached at."""

    name: str
    in_node: InNode
    addresses: Sequence[str] = ()


PathDescriber = Callable[[str, str, str], str]
"""(source, destination, address) -> a description of the path, e.g. "h1 - s1 - r1 - h2"."""

RunnerFactory = Callable[..., IperfRun]


def format_rate(bits_per_second: float | None) -> str:
    if bits_per_second is None:
        return "-"
    if bits_per_second >= 1e9:
        return f"{bits_per_second / 1e9:.2f} Gb/s"
    return f"{bits_per_second / 1e6:.1f} Mb/s"


def rate_unit(max_bits_per_second: float) -> tuple[str, float]:
    return ("Gb/s", 1e9) if max_bits_per_second >= 2e9 else ("Mb/s", 1e6)


def impairment_text(result: RunResult) -> str:
    if result.options.protocol == "udp":
        loss = result.lost_percent
        return "-" if loss is None else f"{loss:.2f}% loss"
    retr = result.retransmits
    return "-" if retr is None else f"{retr} retr"


# ------------------------------------------------------------------------------ the worker


class MeasureWorker(QObject):
    """Iterates one run in its thread and reports each sample, then the result or the failure."""

    sample = Signal(object)
    done = Signal(object)
    failed = Signal(str, object)

    def __init__(self, run: IperfRun) -> None:
        super().__init__()
        self.measurement = run

    @Slot()
    def work(self) -> None:
        try:
            for sample in self.measurement:
                self.sample.emit(sample)
        except MeasureError as e:
            self.failed.emit(str(e), self.measurement.result if self.measurement.has_result else None)
            return
        self.done.emit(self.measurement.result)


# ------------------------------------------------------------------------------ the charts


class ThroughputChart(QChartView):
    """Throughput over time (left axis) with retransmits or loss (right axis); or several runs overlaid."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setMinimumHeight(180)
        self._chart = QChart()
        self._chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
        self.setChart(self._chart)
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
            pen = QPen(Qt.GlobalColor.darkRed if direction == "forward" else Qt.GlobalColor.darkMagenta)
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
        """Several runs' throughput (their main direction) on one time axis."""
        self._clear()
        self._chart.setTitle(f"{len(results)} runs compared")
        self._y2.setVisible(False)
        self._x_max = 1.0
        for result, label in zip(results, labels):
            direction = result.options.directions()[0]
            series, points = self._rate_series(result.id, f"{label} {result.source}→{result.destination}")
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

    def series_names(self) -> list[str]:
        return [series.name() for series, _ in self._rates.values()]

    def unit(self) -> str:
        return self._scale[0]


class MeanBars(QChartView):
    """The mean throughput of the selected runs, side by side."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setMinimumHeight(140)
        self._chart = QChart()
        self._chart.legend().hide()
        self.setChart(self._chart)
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


# ------------------------------------------------------------------------------ the panel

HISTORY_COLUMNS = ("#", "When", "Lab", "Pair", "Path", "Options", "Mean", "Retr / loss", "Status")


class MeasurePanel(QWidget):
    """iperf3 between any two nodes, charted live, with a history of runs to compare."""

    run_started = Signal(str, str)
    """(source node, destination node) when a run begins: the canvas may highlight the path."""
    run_finished = Signal()
    """A run ended (finished, cancelled or failed)."""
    history_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("measurePanel")
        self._targets: dict[str, MeasureTarget] = {}
        self._lab = ""
        self._describe_path: PathDescriber | None = None
        self._history: list[RunResult] = []
        self._thread: QThread | None = None
        self._worker: MeasureWorker | None = None
        self._run: IperfRun | None = None
        self.runner_factory: RunnerFactory = IperfRun
        self._build()
        self._sync_buttons()

    # -- building -----------------------------------------------------------------------------

    def _build(self) -> None:
        self.source_box = QComboBox()
        self.destination_box = QComboBox()
        self.address_box = QComboBox()
        self.address_box.setEditable(True)
        self.address_box.setMinimumContentsLength(14)
        self.destination_box.currentTextChanged.connect(self._fill_addresses)

        self.protocol_box = QComboBox()
        self.protocol_box.addItems(["TCP", "UDP"])
        self.protocol_box.currentTextChanged.connect(self._protocol_changed)
        self.duration_spin = QSpinBox()
        self.duration_spin.setRange(1, 86400)
        self.duration_spin.setValue(10)
        self.duration_spin.setSuffix(" s")
        self.interval_spin = QDoubleSpinBox()
        self.interval_spin.setRange(0.1, 60)
        self.interval_spin.setSingleStep(0.5)
        self.interval_spin.setValue(1.0)
        self.interval_spin.setSuffix(" s")
        self.parallel_spin = QSpinBox()
        self.parallel_spin.setRange(1, 128)
        self.direction_box = QComboBox()
        self.direction_box.addItems(["source → destination", "reverse (-R)", "bidirectional"])
        self.bitrate_edit = QLineEdit()
        self.bitrate_edit.setPlaceholderText("e.g. 100M (UDP default 1M)")
        self.length_edit = QLineEdit()
        self.length_edit.setPlaceholderText("-l, e.g. 128K")
        self.window_edit = QLineEdit()
        self.window_edit.setPlaceholderText("-w, e.g. 4M")
        self.zerocopy_check = QCheckBox("zero-copy (-Z)")

        pair = QFormLayout()
        pair.addRow("Source", self.source_box)
        pair.addRow("Destination", self.destination_box)
        pair.addRow("Address", self.address_box)
        options = QGridLayout()
        cells: list[tuple[str, QWidget]] = [
            ("Protocol", self.protocol_box), ("Duration", self.duration_spin),
            ("Interval", self.interval_spin), ("Streams", self.parallel_spin),
            ("Direction", self.direction_box), ("Bitrate", self.bitrate_edit),
            ("Buffer", self.length_edit), ("Window", self.window_edit),
        ]
        for i, (label, widget) in enumerate(cells):
            options.addWidget(QLabel(label), i // 2, (i % 2) * 2)
            options.addWidget(widget, i // 2, (i % 2) * 2 + 1)
        options.addWidget(self.zerocopy_check, len(cells) // 2, 0, 1, 2)

        self.run_button = QPushButton("Run")
        self.run_button.clicked.connect(self.start_run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_run)
        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)

        self.chart = ThroughputChart()
        self.bars = MeanBars()
        self.bars.hide()
        charts = QWidget()
        charts_layout = QVBoxLayout(charts)
        charts_layout.setContentsMargins(0, 0, 0, 0)
        charts_layout.addWidget(self.chart, 3)
        charts_layout.addWidget(self.bars, 2)
        self._charts = charts

        self.history_table = QTableWidget(0, len(HISTORY_COLUMNS))
        self.history_table.setHorizontalHeaderLabels(list(HISTORY_COLUMNS))
        self.history_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.history_table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.history_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.history_table.verticalHeader().hide()
        self.history_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.history_table.horizontalHeader().setStretchLastSection(True)
        self.history_table.itemSelectionChanged.connect(self._selection_changed)

        self.export_csv_button = QPushButton("Export CSV…")
        self.export_csv_button.clicked.connect(lambda: self._ask_and(self.export_csv, "CSV (*.csv)", ".csv"))
        self.export_json_button = QPushButton("Export JSON…")
        self.export_json_button.clicked.connect(lambda: self._ask_and(self.export_json, "JSON (*.json)", ".json"))
        self.export_png_button = QPushButton("Chart as PNG…")
        self.export_png_button.clicked.connect(lambda: self._ask_and(self.export_chart_png, "PNG (*.png)", ".png"))
        exports = QHBoxLayout()
        for b in (self.export_csv_button, self.export_json_button, self.export_png_button):
            exports.addWidget(b)
        exports.addStretch(1)
        history = QWidget()
        history_layout = QVBoxLayout(history)
        history_layout.setContentsMargins(0, 0, 0, 0)
        history_layout.addWidget(self.history_table)
        history_layout.addLayout(exports)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(charts)
        splitter.addWidget(history)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.addLayout(pair)
        layout.addLayout(options)
        layout.addLayout(buttons)
        layout.addWidget(self.status_label)
        layout.addWidget(splitter, 1)
        self._protocol_changed(self.protocol_box.currentText())

    def _protocol_changed(self, text: str) -> None:
        tcp = text == "TCP"
        self.zerocopy_check.setEnabled(tcp)
        if not tcp:
            self.zerocopy_check.setChecked(False)

    # -- what the host app sets ---------------------------------------------------------------

    def set_targets(
        self,
        targets: Sequence[MeasureTarget | tuple[str, InNode, Sequence[str]]],
        *,
        lab: str = "",
        describe_path: PathDescriber | None = None,
    ) -> None:
        """The nodes that can be measured (e.g. the deployed lab's hosts and routers), keeping the
        current choices when they are still there."""
        self._targets = {t[0]: MeasureTarget(t[0], t[1], tuple(t[2])) for t in targets}
        self._lab = lab
        self._describe_path = describe_path
        for box in (self.source_box, self.destination_box):
            keep = box.currentText()
            box.blockSignals(True)
            box.clear()
            box.addItems(list(self._targets))
            if keep in self._targets:
                box.setCurrentText(keep)
            box.blockSignals(False)
        if self.destination_box.count() > 1 and self.destination_box.currentText() == self.source_box.currentText():
            self.destination_box.setCurrentIndex(1)
        self._fill_addresses(self.destination_box.currentText())
        self._sync_buttons()

    def select_pair(self, source: str, destination: str, address: str | None = None) -> None:
        """Pre-select a pair (e.g. from the canvas' context menu)."""
        self.source_box.setCurrentText(source)
        self.destination_box.setCurrentText(destination)
        if address is not None:
            self.address_box.setCurrentText(address)

    def _fill_addresses(self, destination: str) -> None:
        target = self._targets.get(destination)
        self.address_box.clear()
        if target is not None:
            self.address_box.addItems(list(target.addresses))

    def options(self) -> IperfOptions:
        """The options as the widgets show them."""
        direction = self.direction_box.currentIndex()
        return IperfOptions(
            protocol="udp" if self.protocol_box.currentText() == "UDP" else "tcp",
            duration_s=self.duration_spin.value(),
            interval_s=round(self.interval_spin.value(), 2),
            parallel=self.parallel_spin.value(),
            reverse=direction == 1,
            bidir=direction == 2,
            bitrate=self.bitrate_edit.text().strip() or None,
            length=self.length_edit.text().strip() or None,
            window=self.window_edit.text().strip() or None,
            zerocopy=self.zerocopy_check.isChecked(),
        )

    def set_options(self, options: IperfOptions) -> None:
        self.protocol_box.setCurrentText(options.protocol.upper())
        self.duration_spin.setValue(options.duration_s)
        self.interval_spin.setValue(options.interval_s)
        self.parallel_spin.setValue(options.parallel)
        self.direction_box.setCurrentIndex(2 if options.bidir else 1 if options.reverse else 0)
        self.bitrate_edit.setText(options.bitrate or "")
        self.length_edit.setText(options.length or "")
        self.window_edit.setText(options.window or "")
        self.zerocopy_check.setChecked(options.zerocopy)

    # -- running --------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._thread is not None

    def _sync_buttons(self) -> None:
        self.run_button.setEnabled(not self.running and len(self._targets) >= 1)
        self.cancel_button.setEnabled(self.running)

    def _say(self, text: str, error: bool = False) -> None:
        self.status_label.setText(text)
        self.status_label.setStyleSheet("color: #b00020;" if error else "")

    @Slot()
    def start_run(self) -> bool:
        """Start a run with the current choices; False (and a message) if it cannot start."""
        if self.running:
            return False
        source = self._targets.get(self.source_box.currentText())
        destination = self._targets.get(self.destination_box.currentText())
        address = self.address_box.currentText().strip()
        options = self.options()
        problems = [*options.problems()]
        if source is None or destination is None:
            problems.insert(0, "choose a source and a destination node")
        elif not address:
            problems.insert(0, f"give an address of {destination.name} to measure to")
        if problems:
            self._say("; ".join(problems), error=True)
            return False
        assert source is not None and destination is not None
        path = self._describe_path(source.name, destination.name, address) if self._describe_path else ""
        run = self.runner_factory(
            Endpoint(source.name, source.in_node), Endpoint(destination.name, destination.in_node), address, options,
            lab=self._lab, path=path,
        )
        self.chart.begin(f"{source.name} → {destination.name}  {options.describe()}", options.protocol,
                         options.duration_s)
        self.bars.hide()
        thread = QThread(self)
        worker = MeasureWorker(run)
        worker.moveToThread(thread)
        thread.started.connect(worker.work)
        worker.sample.connect(self._sample)
        worker.done.connect(self._done)
        worker.failed.connect(self._failed)
        worker.done.connect(thread.quit)
        worker.failed.connect(thread.quit)
        thread.finished.connect(self._thread_finished)
        self._thread, self._worker, self._run = thread, worker, run
        self._sync_buttons()
        self._say(f"running {source.name} → {destination.name} ({address}), {options.describe()}…")
        self.run_started.emit(source.name, destination.name)
        thread.start()
        return True

    @Slot()
    def cancel_run(self) -> None:
        if self._run is not None:
            self._run.cancel()  # thread-safe: ends the iperf3 processes; the worker then finishes
            self._say("cancelling…")

    def wait(self, timeout_ms: int = 60_000) -> bool:
        """Block until the current run's thread has ended (for tests and shutdown)."""
        thread = self._thread
        return thread.wait(timeout_ms) if thread is not None else True

    def shutdown(self) -> None:
        """Cancel any run and wait for it; call before the panel goes away."""
        self.cancel_run()
        self.wait()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shutdown()
        super().closeEvent(event)

    def _sample(self, sample: IntervalSample) -> None:
        self.chart.add_sample(sample)
        self._say(f"{sample.end:.0f} s: {format_rate(sample.bits_per_second)}")

    def _done(self, result: RunResult) -> None:
        if result.status == "cancelled":
            self._say("cancelled")
        else:
            self._say(f"{result.source} → {result.destination}: {format_rate(result.mean_bits_per_second)}, "
                      f"{impairment_text(result)}")
        if result.intervals:
            self.chart.show_result(result)  # with what the client knew at the end (e.g. forward retransmits)
        if result.status == "ok" or result.intervals:
            self._history.append(result)
            self._refresh_table(select_last=True)
            self.history_changed.emit()

    def _failed(self, message: str, result: Any) -> None:
        self._say(message, error=True)

    def _thread_finished(self) -> None:
        if self._thread is not None:
            self._thread.deleteLater()
        if self._worker is not None:
            self._worker.deleteLater()
        self._thread = self._worker = None
        self._run = None
        self._sync_buttons()
        self.run_finished.emit()

    # -- history --------------------------------------------------------------------------------

    @property
    def history(self) -> list[RunResult]:
        return list(self._history)

    def set_history(self, results: Sequence[RunResult]) -> None:
        self._history = list(results)
        self._refresh_table()
        self.history_changed.emit()

    def load_history(self, path: str | Path) -> None:
        """Replace the history with the runs saved at `path` (none if the file does not exist).
        Raises ValueError for a file that is not a history."""
        self.set_history(load_history(path))

    def save_history(self, path: str | Path) -> None:
        save_history(path, self._history)

    def _label(self, index: int) -> str:
        return f"#{index + 1}"

    def _refresh_table(self, select_last: bool = False) -> None:
        table = self.history_table
        table.blockSignals(True)
        table.setRowCount(len(self._history))
        for row, r in enumerate(self._history):
            cells = [
                self._label(row), r.started_at.replace("T", " ")[:19], r.lab, f"{r.source} → {r.destination}",
                r.path or r.address, r.options.describe(), format_rate(r.mean_bits_per_second),
                impairment_text(r), r.status,
            ]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, r.id)
                if column == 4:
                    item.setToolTip(f"{r.address}\n{r.path}" if r.path else r.address)
                if column == 8 and r.error:
                    item.setToolTip(r.error)
                table.setItem(row, column, item)
        table.blockSignals(False)
        if select_last and self._history:
            table.clearSelection()
            table.selectRow(len(self._history) - 1)

    def selected_results(self) -> list[RunResult]:
        rows = sorted({index.row() for index in self.history_table.selectionModel().selectedRows()})
        return [self._history[row] for row in rows if row < len(self._history)]

    def select_rows(self, rows: Sequence[int]) -> None:
        table = self.history_table
        table.clearSelection()
        model = table.selectionModel()
        for row in rows:
            model.select(table.model().index(row, 0),
                         model.SelectionFlag.Select | model.SelectionFlag.Rows)

    def _selection_changed(self) -> None:
        if self.running:
            return  # the live run keeps the chart
        chosen = self.selected_results()
        rows = sorted({index.row() for index in self.history_table.selectionModel().selectedRows()})
        labels = [self._label(row) for row in rows]
        if len(chosen) == 1:
            self.chart.show_result(chosen[0])
            self.bars.hide()
        elif len(chosen) >= 2:
            self.chart.show_overlay(chosen, labels)
            self.bars.show_runs(chosen, labels)
            self.bars.show()

    # -- exports ----------------------------------------------------------------------------------

    def _export_set(self) -> list[RunResult]:
        return self.selected_results() if len(self.selected_results()) > 1 else self._history

    def export_csv(self, path: str | Path) -> None:
        """The whole history (or the selected runs, when several are selected) as CSV."""
        Path(path).write_text(history_csv(self._export_set()), encoding="utf-8")

    def export_json(self, path: str | Path) -> None:
        Path(path).write_text(dump_history(self._export_set()), encoding="utf-8")

    def export_chart_png(self, path: str | Path) -> bool:
        return self._charts.grab().save(str(path), "PNG")

    def _ask_and(self, action: Callable[[str], object], filter_text: str, suffix: str) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export", "", filter_text)
        if not path:
            return
        if not path.endswith(suffix):
            path += suffix
        try:
            action(path)
        except OSError as e:
            self._say(f"cannot write {path}: {e.strerror}", error=True)
            return
        self._say(f"wrote {path}")


__all__ = ["MeasurePanel", "MeasureTarget", "ThroughputChart", "MeanBars", "format_rate"]
