""""Run experiment" in the Measure dock: the lab's matrix run off the GUI thread, each iperf3 run added to the
history table and the comparison bars as it ends, the ratios shown at the end."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QPushButton

from vtopo.experiment.results import CellRun, ExperimentResult
from vtopo.gui.deployed_lab import LabUnavailable, deployed_lab
from vtopo.gui.document.editor import Editor
from vtopo.gui.measure.panel import MeasurePanel
from vtopo.gui.workers import Report, Worker, serial_pool
from vtopo.measure import MeasureError, RunResult
from vtopo.model.topology import Topology


class Runnable(Protocol):
    result: ExperimentResult

    def wait_until_answering(self) -> list[str]: ...

    def steps(self) -> Iterator[CellRun]: ...

    def cancel(self) -> None: ...


def live_experiment(topology: Topology) -> Runnable:
    """The experiment on the deployed lab (LabUnavailable when there is none)."""
    from vtopo.experiment.runner import ExperimentRun
    from vtopo.gui.panels.operate_panel import lab_operator

    return ExperimentRun(deployed_lab(topology.name, "measure"), topology.experiment, links=lab_operator())


class ExperimentController(QObject):
    finished = Signal()

    def __init__(self, editor: Editor, panel: MeasurePanel, start: Callable[[Topology], Runnable] = live_experiment,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.editor, self.panel, self.start = editor, panel, start
        self.button = QPushButton("Run experiment")
        self.button.setToolTip("Run the lab's experiment: every test on every pair, filling the table and the bars")
        self.button.clicked.connect(self.run)
        panel.buttons.insertWidget(2, self.button)
        self._pool = serial_pool(self)
        self._worker: Worker | None = None
        self._running: Runnable | None = None
        self._kept: list[RunResult] = []
        self._labels: list[str] = []
        self.result: ExperimentResult | None = None

    def run(self) -> None:
        topology = self.editor.topology
        if topology.experiment.empty:
            self.panel.say("This lab has no experiment: its file names none.", error=True)
            return
        self.button.setEnabled(False)
        self._kept, self._labels = [], []
        self.panel.say("Starting the experiment…")
        copy, start = topology.copy(), self.start

        def job(report: Report) -> ExperimentResult | str:
            try:
                self._running = experiment = start(copy)  # so that shutdown can cancel it
                experiment.wait_until_answering()
                for step in experiment.steps():
                    report(step)
            except (LabUnavailable, MeasureError, ValueError) as error:
                return str(error)
            return experiment.result

        worker = Worker(job)
        worker.yielded.connect(self._step)
        worker.returned.connect(self._finished)
        worker.errored.connect(lambda error: self._finished(f"the experiment failed: {error}"))
        self._worker = worker  # kept until its signals are delivered
        worker.start(self._pool)

    def _step(self, step: CellRun) -> None:
        self.panel.say(step.line())
        if step.warmup or not isinstance(step.record, RunResult):
            return
        self._kept.append(step.record)
        self._labels.append(f"{step.cell.name} #{step.repeat}")
        self.panel.history_view.append(step.record)
        self.panel.history_changed.emit()
        self.panel.bars.show_runs(self._kept, self._labels)
        self.panel.bars.show()

    def _finished(self, outcome: ExperimentResult | str) -> None:
        self.button.setEnabled(True)
        self._running = None
        if isinstance(outcome, str):
            self.panel.say(outcome, error=True)
        else:
            self.result = outcome
            ratios = "; ".join(f"{r.name}: {r.verdict()}" + (f" (published {r.published})" if r.published else "")
                               for r in outcome.ratios)
            self.panel.say(f"Experiment done. {ratios}" if ratios else "Experiment done.")
        self.finished.emit()

    def shutdown(self) -> None:
        if self._running is not None:
            self._running.cancel()
        self._pool.waitForDone()
