"""Keeps the Measure panel in step with the window: its targets come from the deployed lab, a run's path shows
on the canvas, and a lab saved to a file keeps its history in the user's data directory.

The panel knows nothing of labs; this controller tells it what to measure. The deployed lab (vtopo.deployed)
is imported lazily (vtopo.gui.deployed_lab), like the executor, so the designer runs where the host layer is not
installed.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDockWidget

from vtopo.gui.document.editor import Editor
from vtopo.gui.document.files import FileController
from vtopo.gui.deployed_lab import LabUnavailable, deployed_lab
from vtopo.gui.host_api import DeployedLab, LabFinder
from vtopo.gui.measure.panel import MeasurePanel
from vtopo.gui.panels.deploy import DeployController
from vtopo.gui.workers import Worker, serial_pool
from vtopo.measure import RunResult, history_path, load_history, save_history

NOT_DEPLOYED = "Deploy the lab to measure: iperf3 runs between the nodes of a deployed lab."


def find_deployed(lab: str) -> tuple[DeployedLab | None, str]:
    """The deployed lab named `lab`, as vtopo.deployed.DeployedLab, or why there is none; a member's runs have their
    commands run by the agent, as the member."""
    try:
        return deployed_lab(lab, "measure"), ""
    except LabUnavailable as error:
        return None, str(error)


class MeasureController(QObject):
    """Fills the panel from the deployed lab, picks pairs for the canvas' menu, highlights paths, keeps history."""

    targets_changed = Signal()

    def __init__(self, editor: Editor, files: FileController, deploy: DeployController, panel: MeasurePanel,
                 dock: QDockWidget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self._files = files
        self._deploy = deploy
        self._panel = panel
        self._dock = dock
        self.find_lab: LabFinder = find_deployed
        self._lab: DeployedLab | None = None  # the lab the targets come from
        self._topology = editor.topology  # to tell "another lab was opened" from "this lab was saved elsewhere"
        self._history_path: Path | None = None
        self._lookups = serial_pool(self)
        self._workers: set[Worker] = set()
        self._asked = self._answered = 0
        self._asked_about = ""
        deploy.busy_changed.connect(self._deploy_busy)
        editor.topology_replaced.connect(self.refresh)
        files.path_changed.connect(self._follow_file)
        panel.run_started.connect(self._show_path)
        panel.run_finished.connect(lambda: editor.scene.highlight_path([], "measure"))
        panel.history_changed.connect(self._save_history)
        self.refresh()

    # ------------------------------------------------------------ what can be measured

    def _deploy_busy(self, busy: bool) -> None:
        if not busy:
            self.refresh()

    def refresh(self) -> None:
        """Ask for the deployed lab again (after a deploy, a destroy, a status read, another lab); the answer
        comes from a pool thread. Only the latest question's answer is shown."""
        self._asked += 1
        self._asked_about = name = self._deploy.deployed_lab
        if name:
            number, find = self._asked, self.find_lab
            worker = Worker(lambda _report: find(name))  # asks the agent and resolves the lab: not on the GUI thread
            worker.returned.connect(lambda answer: self._found(number, *answer))
            worker.finished.connect(lambda: self._workers.discard(worker))
            self._workers.add(worker)
            worker.start(self._lookups)
        else:
            self._found(self._asked, None, NOT_DEPLOYED)

    @property
    def looking_up(self) -> bool:
        return self._answered != self._asked

    def shutdown(self) -> None:
        self._lookups.waitForDone()

    def _found(self, number: int, lab: DeployedLab | None, why: str) -> None:
        if number != self._asked:
            return
        self._answered = number
        name = self._asked_about
        self._lab = lab
        if lab is None:
            self._panel.cancel_run()
            self._panel.set_unavailable(why)
        else:
            self._panel.set_targets(lab.measurable(), lab=name,
                                    describe_path=lambda source, destination, _address: lab.path(source, destination))
        self.targets_changed.emit()

    def can_measure(self, node_id: str) -> bool:
        node = self._editor.topology.nodes.get(node_id)
        return node is not None and node.name in self._panel.targets

    # ------------------------------------------------------------ picking a pair from the canvas

    def between(self, source_id: str, destination_id: str) -> None:
        """Show the panel with this pair chosen, and the address the source reaches the destination at."""
        nodes = self._editor.topology.nodes
        source, destination = nodes[source_id].name, nodes[destination_id].name
        target, address = self._panel.targets.get(destination), None
        if self._lab is not None and target is not None and target.addresses:
            address, _how = self._lab.target_address(source, destination)
        self._panel.select_pair(source, destination, address)
        self.show_panel()

    def from_node(self, node_id: str) -> None:
        self.between(node_id, self._other_than(node_id, self._panel.form.destination_box.currentText()))

    def to_node(self, node_id: str) -> None:
        self.between(self._other_than(node_id, self._panel.form.source_box.currentText()), node_id)

    def _other_than(self, node_id: str, current: str) -> str:
        """The node chosen at the other end, unless it is this one: then the first other measurable node."""
        topology = self._editor.topology
        names = [current] + [name for name in self._panel.targets if name != current]
        for name in names:
            node = topology.node_named(name)
            if node is not None and node.id != node_id:
                return node.id
        return node_id

    def show_panel(self) -> None:
        self._dock.show()
        self._dock.raise_()

    # ------------------------------------------------------------ the path on the canvas

    def _show_path(self, source: str, destination: str) -> None:
        if self._lab is None:
            return
        topology = self._editor.topology
        ends = [node.id for node in (topology.node_named(source), topology.node_named(destination)) if node]
        self._editor.scene.highlight_path([*ends, *self._lab.path_links(source, destination)], "measure")

    # ------------------------------------------------------------ the lab's history

    def _follow_file(self) -> None:
        """Another lab: its saved runs join the table, and the runs of the labs before stay, so that a
        session compares labs side by side (bridge against macvlan). Only a lab's own runs are saved with it."""
        history = history_path(self._editor.topology.name) if self._files.path is not None else None
        same_lab = self._editor.topology is self._topology
        self._topology = self._editor.topology
        if same_lab:  # saved, perhaps elsewhere: the runs so far go with it
            if history != self._history_path:
                self._history_path = history
                if self._own_runs():
                    self._save_history()
            return
        self._history_path = None
        earlier = self._panel.history
        saved: list[RunResult] = []
        if history is not None:
            try:
                saved = load_history(history)
            except (ValueError, OSError) as error:
                self._panel.say(f"{error}; new runs are not saved, so that the file stays as it is", error=True)
                history = None
        known = {run.id for run in earlier}
        self._panel.show_history([*earlier, *(run for run in saved if run.id not in known)])
        self._history_path = history

    def _own_runs(self) -> list[RunResult]:
        return [run for run in self._panel.history if run.lab == self._editor.topology.name]

    def _save_history(self) -> None:
        if self._history_path is None:
            return
        try:
            save_history(self._history_path, self._own_runs())
        except OSError as error:
            self._panel.say(f"cannot save the run history to {self._history_path}: {error.strerror}", error=True)
