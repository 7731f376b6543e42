""""Run experiment" in the Measure dock fills the history table and the comparison bars run by run."""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Callable

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from vtopo.experiment.results import Cell, CellRun, ExperimentResult, Ratio
from vtopo.gui.main_window import MainWindow
from vtopo.measure import IperfOptions, RunResult, history_path, load_history
from vtopo.measure.results import DirectionTotals, Totals
from vtopo.model.topology import Topology
from vtopo.resources import TOPOLOGIES


class RecordedExperiment:
    """Replays an experiment whose runs were measured before: the dock's side of a run, without a deployed lab."""

    def __init__(self, topology: Topology) -> None:
        self.experiment = topology.experiment
        self.result = ExperimentResult(topology.name, "2026-01-01T00:00:00+00:00", {"kernel": "test"}, 2, 0)

    def steps(self) -> Iterator[CellRun]:
        rates = {"veth+bridge": 10e9, "macvlan bridge": 12e9}
        cells = [(pair, test) for pair, test in self.experiment.cells() if pair.name in rates and test.tool == "iperf"]
        for done, (pair, test) in enumerate(cells, start=1):
            cell = Cell(f"{pair.name}/{test.name}", pair.name, test.name, "iperf", "Mbit/s")
            self.result.cells.append(cell)
            rate = rates[pair.name]
            record = RunResult(source=pair.source, destination=pair.destination, address="10.0.30.2",
                               options=IperfOptions(duration_s=1), lab="macvlan-vs-veth",
                               forward=DirectionTotals(Totals(int(rate / 8), 1.0, rate), Totals(int(rate / 8), 1.0, rate)))
            cell.values.append(rate / 1e6)
            yield CellRun(cell, 1, False, rate / 1e6, record, done, len(cells))
        self.result.ratios = [Ratio("macvlan bridge vs veth+bridge", "macvlan bridge/tcp", "veth+bridge/tcp", 1.2,
                                    "94.033 / 94.016 Mb/s = 1.000")]

    def wait_until_answering(self) -> list[str]:
        return []

    def cancel(self) -> None:
        pass


def test_run_experiment_fills_the_table_and_bars_as_it_goes(make_window: Callable[..., MainWindow],
                                                             qtbot: QtBot, tmp_path: Path) -> None:
    lab = tmp_path / "macvlan-vs-veth.vtopo"
    shutil.copy(TOPOLOGIES / "macvlan-vs-veth.vtopo", lab)
    window = make_window(lab)
    window.experiment.start = RecordedExperiment
    window.measure_dock.show()
    window.measure_dock.raise_()
    with qtbot.waitSignal(window.experiment.finished, timeout=10000):
        qtbot.mouseClick(window.experiment.button, Qt.MouseButton.LeftButton)
    panel = window.measure_panel
    assert len(panel.history) == 2 and [r.source for r in panel.history] == ["v1", "m1"]
    assert panel.bars.isVisible() and [round(v) for v in panel.bars.values] == [10, 12]
    assert ("macvlan bridge vs veth+bridge: 1.200 (one round: how far it holds is not measured) (published 94.033 / "
            "94.016 Mb/s = 1.000)") in panel.status_label.text()
    assert len(load_history(history_path("macvlan-vs-veth"))) == 2, "the runs are saved in the lab's history"


def test_a_lab_without_an_experiment_says_so(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window("l2-vs-l3")
    qtbot.mouseClick(window.experiment.button, Qt.MouseButton.LeftButton)
    assert "no experiment" in window.measure_panel.status_label.text()
