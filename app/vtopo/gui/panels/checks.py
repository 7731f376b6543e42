"""The Checks dock: run the lab's checks against the deployed lab, pass or fail with why, the pair or path lit
on the canvas; and "expect reachable / unreachable" added from the canvas as undoable edits."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QHeaderView, QLabel, QPushButton, QStyle, QTreeWidget, QTreeWidgetItem, QVBoxLayout,
                               QWidget)

from vtopo.checks.engine import Outcome, run_checks
from vtopo.checks.spec import TypedCheck, typed_checks
from vtopo.compile.analysis import path_between
from vtopo.gui.document.commands import SetFieldsCommand
from vtopo.gui.deployed_lab import LabUnavailable, deployed_lab
from vtopo.gui.document.editor import Editor
from vtopo.gui.workers import Report, Worker, serial_pool
from vtopo.kinds.check_types import Probe
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model.expectations import Check
from vtopo.model.problems import LabError
from vtopo.model.topology import Topology
from vtopo.reports import counted

PASS, FAIL = QColor("#2e9e44"), QColor("#d03c3c")
NAME_ROLE = Qt.ItemDataRole.UserRole


def live_probe(topology: Topology) -> Probe:
    """The deployed lab's probe (LabUnavailable when there is none)."""
    from vtopo.checks.live import LiveProbe

    return LiveProbe(deployed_lab(topology.name, "check"))


class ChecksPanel(QWidget):
    run_requested = Signal()
    check_selected = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run_button = QPushButton("Run checks")
        self.run_button.clicked.connect(self.run_requested)
        self.summary = QLabel("Deploy the lab, then run its checks.")
        self.summary.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setRootIsDecorated(False)
        self.tree.setHeaderLabels(["Check", "Result", "Why"])
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setWordWrap(True)
        self.tree.currentItemChanged.connect(self._current_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.run_button)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree)

    def _current_changed(self, item: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        if item is not None:
            self.check_selected.emit(item.data(0, NAME_ROLE))

    def show_checks(self, checks: list[TypedCheck]) -> None:
        self.tree.clear()
        for check in checks:
            item = QTreeWidgetItem([check.check.name, "…", check.explanation])
            item.setData(0, NAME_ROLE, check.check.name)
            item.setToolTip(2, check.explanation)
            self.tree.addTopLevelItem(item)

    def row(self, name: str) -> QTreeWidgetItem:
        rows = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return next(item for item in rows if item is not None and item.data(0, NAME_ROLE) == name)

    def show_outcome(self, outcome: Outcome) -> None:
        item = self.row(outcome.check.check.name)
        passed = outcome.passed
        item.setText(1, "pass" if passed else "FAIL")
        item.setForeground(1, QBrush(PASS if passed else FAIL))
        icon = QStyle.StandardPixmap.SP_DialogApplyButton if passed else QStyle.StandardPixmap.SP_MessageBoxCritical
        item.setIcon(0, self.style().standardIcon(icon))
        item.setText(2, outcome.verdict.why if passed else f"{outcome.verdict.why}\nExpected: "
                     f"{outcome.check.explanation}")
        item.setToolTip(2, item.text(2))

    def show_summary(self, text: str) -> None:
        self.summary.setText(text)


@dataclass(frozen=True)
class Results:
    outcomes: list[Outcome]
    subjects: dict[str, list[str]]
    """Each check's name -> the ids of the nodes it names and of the nodes and links on its pair's path."""


def subjects_of(topology: Topology, checks: list[TypedCheck]) -> dict[str, list[str]]:
    """The canvas items each check is about: its nodes and, for a pair, the nodes and links of the path between
    them."""
    context = None
    subjects: dict[str, list[str]] = {}
    for check in checks:
        nodes = [node.id for n in check.nodes() if (node := topology.node_named(n))]
        path: list[str] = []
        if len(nodes) >= 2:
            context = context or resolve(topology, registry()).valid().lab
            try:
                path = [item for end in path_between(context, nodes[0], nodes[1]) for item in (end.node.id, end.link.id)]
            except LabError:
                path = []
        subjects[check.check.name] = list(dict.fromkeys([*nodes, *path]))
    return subjects


def verdicts_of(results: Results) -> dict[str, QColor]:
    """Every node and link a check ran over, green when all its checks pass, red when one fails."""
    verdicts: dict[str, QColor] = {}
    for outcome in results.outcomes:
        for subject in results.subjects.get(outcome.check.check.name, []):
            if not outcome.passed or subject not in verdicts:
                verdicts[subject] = PASS if outcome.passed else FAIL
    return verdicts


class ChecksController(QObject):
    """Runs the checks off the GUI thread, marks every check's nodes and path on the canvas with its result, and
    lights the selected check's."""

    finished = Signal()
    listed = Signal()  # the checks were listed anew, without results

    def __init__(self, editor: Editor, panel: ChecksPanel, probe_for: Callable[[Topology], Probe] = live_probe,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.editor, self.panel, self.probe_for = editor, panel, probe_for
        self._pool = serial_pool(self)
        self._worker: Worker | None = None
        self._checks: dict[str, TypedCheck] = {}
        self._subjects: dict[str, list[str]] = {}
        self.outcomes: dict[str, Outcome] = {}
        self.lab_running = False  # whether the lab is deployed, for what the summary asks of the user
        panel.run_requested.connect(self.run_all)
        panel.check_selected.connect(self.highlight)
        self._watched = editor.topology
        self._watched.events.checks_changed.connect(self._checks_changed)
        editor.topology_replaced.connect(self._topology_replaced)
        self._list()

    def _topology_replaced(self) -> None:
        self._watched.events.checks_changed.disconnect(self._checks_changed)
        self._watched = self.editor.topology
        self._watched.events.checks_changed.connect(self._checks_changed)
        self._list()

    def _checks_changed(self, _topology: Topology) -> None:
        self._list()

    def typed(self) -> list[TypedCheck]:
        checks, problems = typed_checks(self.editor.topology, self.editor.registry)
        if problems:
            raise LabError(problems)
        return checks

    def _list(self) -> None:
        try:
            checks = self.typed()
        except LabError as error:
            self.panel.show_summary(str(error.problems[0]))
            return
        self._checks = {c.check.name: c for c in checks}
        self._subjects = {}
        self.outcomes = {}
        self.editor.scene.mark_verdicts({})
        self.panel.show_checks(checks)
        then = "The lab runs: run them." if self.lab_running else "Deploy the lab, then run them."
        self.panel.show_summary(f"{counted(len(checks), 'check')}. {then}" if checks else
                                "This lab has no checks: select two nodes and right-click to expect them reachable.")
        self.listed.emit()

    def run_all(self) -> None:
        self._list()
        if not self._checks:
            return
        self.panel.run_button.setEnabled(False)
        self.panel.show_summary("Running…")
        topology, checks, probe_for = self.editor.topology.copy(), list(self._checks.values()), self.probe_for

        def job(report: Report) -> Results | str:
            try:
                outcomes = run_checks(checks, probe_for(topology), report)
            except LabUnavailable as error:
                return str(error)
            return Results(outcomes, subjects_of(topology, checks))

        worker = Worker(job)
        worker.yielded.connect(self.panel.show_outcome)
        worker.returned.connect(self._finished)
        worker.errored.connect(lambda error: self._finished(f"the checks could not run: {error}"))
        self._worker = worker  # kept until its signals are delivered
        worker.start(self._pool)

    def _finished(self, result: Results | str) -> None:
        self.panel.run_button.setEnabled(True)
        if isinstance(result, str):
            self.panel.show_summary(result)
            return
        outcomes = result.outcomes
        self.outcomes = {o.check.check.name: o for o in outcomes}
        self._subjects = result.subjects
        self.editor.scene.mark_verdicts(verdicts_of(result))
        failed = [o for o in outcomes if not o.passed]
        self.panel.show_summary(f"All {len(outcomes)} checks pass." if not failed else
                                f"{len(failed)} of {len(outcomes)} checks fail.")
        if failed:
            self.panel.tree.setCurrentItem(self.panel.row(failed[0].check.check.name))
        self.finished.emit()

    def forget_results(self, running: bool) -> None:
        """The lab changed under the results (a node stopped, a link went down, the lab was deployed or destroyed):
        they no longer say what is true, so neither the canvas nor the panel shows them. `running`: whether the lab
        is deployed now."""
        self.lab_running, had_results = running, bool(self.outcomes)
        self._list()
        if had_results and running:
            self.panel.show_summary("The running lab changed since the checks ran: run them again.")
        self.editor.scene.highlight_path([], "checks")

    def highlight(self, name: str) -> None:
        """Light the check's nodes and, for a pair, the nodes and links of the path between them."""
        if name not in self._subjects and name in self._checks:
            self._subjects.update(subjects_of(self.editor.topology, [self._checks[name]]))
        self.editor.scene.highlight_path(self._subjects.get(name, []), "checks")

    def expect(self, source_id: str, destination_id: str, reachable: bool) -> None:
        topology = self.editor.topology
        source, destination = topology.nodes[source_id].name, topology.nodes[destination_id].name
        name = f"{source} {'reaches' if reachable else 'cannot reach'} {destination}"
        if any(check.name == name for check in topology.checks):
            self.editor.status_message.emit(f"the lab already expects that: {name}")
            return
        check = Check(name, "reach", {"source": source, "destination": destination, "expect": reachable})
        self.editor.undo_stack.push(SetFieldsCommand(f"Add check {name}", topology.update_checks,
                                                     {"checks": topology.checks}, {"checks": [*topology.checks, check]}))

    def shutdown(self) -> None:
        self._pool.waitForDone()
