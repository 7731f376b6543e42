"""The live iperf3 panel: pick two nodes, run, watch the chart grow, compare runs from the history.

The panel knows nothing about the main window or the lab model. The host application gives it
the nodes it may measure (`set_targets`, or `set_unavailable` with the reason there are none), a lab
name and a path describer, and listens to `run_started(source, destination)` / `run_finished()` to
highlight the path on the canvas, and to `history_changed()` to save the history
(`save_history(path)`) beside the lab.

The run itself (`vtopo.measure.IperfRun`) is iterated by a Worker (vtopo.gui.workers) that yields
each interval sample; the chart is only touched on the GUI thread.
"""
from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QScrollArea, QSplitter, QVBoxLayout, QWidget

from vtopo.gui.measure.bars import MeanBars
from vtopo.gui.measure.chart import ThroughputChart
from vtopo.gui.measure.form import MeasureForm, MeasureTarget, PathDescriber, TargetLike
from vtopo.gui.canvas.labels import format_rate
from vtopo.gui.measure.format import impairment_text
from vtopo.gui.measure.history import HistoryView
from vtopo.gui.style.wheel_guard import guard_wheel
from vtopo.gui.workers import Report, Worker, serial_pool
from vtopo.measure import IntervalSample, IperfRun, MeasureError, RunResult
from vtopo.measure.history import load_history, save_history

RunnerFactory = Callable[..., IperfRun]
"""Makes the run: (source MeasureEndpoint, destination MeasureEndpoint, address, IperfOptions, lab=, path=) -> IperfRun."""


def _iterate(run: IperfRun, report: Report) -> RunResult:
    for sample in run:
        report(sample)
    return run.result


MIN_CHART_WIDTH = 320
CHARTS_SHARE = 0.45  # of the room beside the controls, the charts keep at least this much however wide the history

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
        self._lab = ""
        self._describe_path: PathDescriber | None = None
        self._pool = serial_pool(self)
        self._worker: Worker | None = None
        self._run: IperfRun | None = None
        self.runner_factory: RunnerFactory = IperfRun
        self._build()
        self._sync_buttons()

    def _build(self) -> None:
        self.notice = QLabel()
        self.notice.setWordWrap(True)
        self.notice.setFrameShape(QFrame.Shape.StyledPanel)
        self.notice.setMargin(6)
        self.notice.hide()
        self.form = MeasureForm()
        self.run_button = QPushButton("Run")
        self.run_button.clicked.connect(self.start_run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_run)
        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        controls = QWidget()
        controls_layout = QVBoxLayout(controls)
        controls_layout.addWidget(self.notice)
        controls_layout.addLayout(buttons)  # above the form: Run stays in sight in a low dock
        controls_layout.addWidget(self.status_label)
        controls_layout.addWidget(self.form)
        controls_layout.addStretch(1)
        guard_wheel(self.form)
        scroll = QScrollArea()
        scroll.setWidget(controls)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setMinimumWidth(controls.sizeHint().width() + 20)

        self.chart = ThroughputChart()
        self.bars = MeanBars()
        self.bars.hide()
        self.legend = QLabel()  # the runs compared, by name in full and colour
        self.legend.setWordWrap(True)
        self.legend.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.legend.hide()
        charts = QWidget()
        charts_layout = QVBoxLayout(charts)
        charts_layout.setContentsMargins(0, 0, 0, 0)
        side_by_side = QHBoxLayout()
        side_by_side.addWidget(self.chart, 3)
        side_by_side.addWidget(self.bars, 2)
        charts_layout.addLayout(side_by_side, 1)
        charts_layout.addWidget(self.legend)
        self.history_view = HistoryView(charts)
        self.history_view.selection_changed.connect(self._compare)
        self.history_view.message.connect(self.say)
        self.history_view.removed.connect(self.history_changed)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        for widget, stretch in ((scroll, 0), (charts, 3), (self.history_view, 2)):
            splitter.addWidget(widget)
            splitter.setStretchFactor(splitter.count() - 1, stretch)
        splitter.setChildrenCollapsible(False)
        self._splitter = splitter
        self._splitter_moved = False
        splitter.splitterMoved.connect(self._user_moved_splitter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._widen_history()

    def _user_moved_splitter(self) -> None:
        self._splitter_moved = True

    def _widen_history(self) -> None:
        """When the panel is shown, the history gets the width its columns want, as far as the charts keep
        CHARTS_SHARE of the room, until the user moves the splitter. Runs added while it shows never take the charts'
        width: the long columns share what the history has."""
        if self._splitter_moved or not self.isVisible():
            return
        controls, chart, history = self._splitter.sizes()
        charts_least = max(MIN_CHART_WIDTH, round((chart + history) * CHARTS_SHARE))
        wanted = min(self.history_view.wanted_width(), chart + history - charts_least)
        if wanted > history:
            self._splitter.setSizes([controls, chart + history - wanted, wanted])

    # -- what the host app sets ---------------------------------------------------------------

    def set_targets(self, targets: Sequence[TargetLike], *, lab: str = "",
                    describe_path: PathDescriber | None = None) -> None:
        """The nodes that can be measured (e.g. the deployed lab's hosts, routers and VMs), keeping
        the current choices when they are still there."""
        self._lab = lab
        self._describe_path = describe_path
        self.form.set_targets(targets)
        self.notice.hide()
        self._sync_buttons()

    def set_unavailable(self, reason: str) -> None:
        """Nothing can be measured, and why (e.g. "deploy the lab to measure"): Run is disabled."""
        self.set_targets([])
        self.notice.setText(reason)
        self.notice.show()
        self.run_button.setToolTip(reason)

    @property
    def targets(self) -> dict[str, MeasureTarget]:
        return dict(self.form.targets)

    def select_pair(self, source: str, destination: str, address: str | None = None) -> None:
        """Pre-select a pair (e.g. from the canvas' context menu)."""
        self.form.select_pair(source, destination, address)

    # -- running --------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._worker is not None

    def _sync_buttons(self) -> None:
        self.run_button.setEnabled(not self.running and len(self.form.targets) >= 1)
        if self.form.targets:
            self.run_button.setToolTip("Run iperf3 from the source to the destination")
        self.cancel_button.setEnabled(self.running)

    def say(self, text: str, error: bool = False) -> None:
        """Show a line under the buttons (in red for an error)."""
        self.status_label.setText(text)
        self.status_label.setStyleSheet("color: #b00020;" if error else "")

    @Slot()
    def start_run(self) -> bool:
        """Start a run with the current choices; False (and a message) if it cannot start."""
        if self.running:
            return False
        source, destination, address = self.form.source(), self.form.destination(), self.form.address()
        options = self.form.options()
        problems = [*options.problems()]
        if source is None or destination is None:
            problems.insert(0, "choose a source and a destination node")
        elif not address:
            problems.insert(0, f"give an address of {destination.name} to measure to")
        if problems or source is None or destination is None:
            self.say("; ".join(problems), error=True)
            return False
        path = self._describe_path(source.name, destination.name, address) if self._describe_path else ""
        run = self.runner_factory(source.endpoint, destination.endpoint, address, options, lab=self._lab, path=path)
        self.chart.begin(f"{source.name} → {destination.name}  {options.describe()}", options.protocol,
                         options.duration_s)
        self.bars.hide()
        self.legend.hide()
        worker = Worker(lambda report: _iterate(run, report))
        worker.yielded.connect(self._sample)
        worker.returned.connect(self._done)
        worker.errored.connect(self._failed)
        worker.finished.connect(self._worker_finished)
        self._worker, self._run = worker, run
        self._sync_buttons()
        self.say(f"running {source.name} → {destination.name} ({address}), {options.describe()}…")
        self.run_started.emit(source.name, destination.name)
        worker.start(self._pool)
        return True

    @Slot()
    def cancel_run(self) -> None:
        if self._run is not None:
            self._run.cancel()  # thread-safe: ends the iperf3 processes; the worker then finishes
            self.say("cancelling…")

    def wait(self, timeout_ms: int = 60_000) -> bool:
        """Block until the current run has ended (for tests and shutdown)."""
        return self._pool.waitForDone(timeout_ms)

    def shutdown(self) -> None:
        """Cancel any run and wait for it; call before the panel goes away."""
        self.cancel_run()
        self.wait()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shutdown()
        super().closeEvent(event)

    def _sample(self, sample: IntervalSample) -> None:
        self.chart.add_sample(sample)
        self.say(f"{sample.end:.0f} s: {format_rate(sample.bits_per_second)}")

    def _done(self, result: RunResult) -> None:
        if result.status == "cancelled":
            self.say("cancelled")
        else:
            self.say(f"{result.source} → {result.destination}: {format_rate(result.mean_bits_per_second)}, "
                      f"{impairment_text(result)}")
        if result.intervals:
            self.chart.show_result(result)  # with what the client knew at the end (e.g. forward retransmits)
        if result.status == "ok" or result.intervals:
            self.history_view.append(result)
            self.history_changed.emit()

    def _failed(self, error: Exception) -> None:
        self.say(str(error) if isinstance(error, MeasureError) else f"the run failed unexpectedly: {error!r}",
                 error=True)

    def _worker_finished(self) -> None:
        self._worker = None
        self._run = None
        self._sync_buttons()
        self.run_finished.emit()

    # -- history --------------------------------------------------------------------------------

    @property
    def history(self) -> list[RunResult]:
        return self.history_view.history

    def set_history(self, results: Sequence[RunResult]) -> None:
        self.history_view.set_history(results)
        self.history_changed.emit()

    def load_history(self, path: str | Path) -> None:
        """Replace the history with the runs saved at `path` (none if the file does not exist).
        Raises ValueError for a file that is not a history. No history_changed: the file already has it."""
        self.show_history(load_history(path))

    def show_history(self, results: Sequence[RunResult]) -> None:
        """Show these runs, without history_changed: nothing new needs saving."""
        self.history_view.set_history(results)

    def save_history(self, path: str | Path) -> None:
        save_history(path, self.history_view.history)

    def _compare(self, chosen: list[RunResult], labels: list[str]) -> None:
        if self.running:
            return  # the live run keeps the chart
        if len(chosen) == 1:
            self.chart.show_result(chosen[0])
            self.bars.hide()
            self.legend.hide()
        elif len(chosen) >= 2:
            self.chart.show_overlay(chosen, labels)
            self.bars.show_runs(chosen, labels)
            self.bars.show()
            self.legend.setText("&nbsp;&nbsp; ".join(
                f'<span style="color:{colour.name()}">■</span>&nbsp;{html.escape(name)}'
                for name, colour in self.chart.legend_entries()))
            self.legend.show()
