"""Lab ▸ Save running configuration: what the running lab's nodes have become (routers' running configurations,
containers' addresses and routes, as `vtopo save` reads them) shown as a diff per node, then written into the lab as
one undo step. The agent reads it (vtopo.saving's), in a worker: in a lab spread over sites, each site's agent reads
its own nodes."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QLabel, QListWidget, QPlainTextEdit, QSplitter, QVBoxLayout,
                               QWidget)

from vtopo.gui.document.editor import Editor
from vtopo.gui.panels.deploy import DeployController, DeployLog
from vtopo.gui.workers import Worker
from vtopo.model.topology import Topology

if TYPE_CHECKING:
    from vtopo.saving import NodeChange, RunningState

TITLE = "Save running configuration"


def _read_running(lab: str) -> RunningState:
    from vtopo.sites.spread_operations import SitesOperator

    return SitesOperator().read_running(lab)


class RunningDiff(QDialog):
    """Each changed node on the left, what saving changes on it on the right; OK writes it all into the lab."""

    def __init__(self, changes: list[NodeChange], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.changes = changes
        self.nodes = QListWidget()
        self.nodes.addItems([change.node for change in changes])
        self.diff = QPlainTextEdit()
        self.diff.setReadOnly(True)
        self.diff.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.nodes.currentRowChanged.connect(lambda row: self.diff.setPlainText(changes[row].diff() if row >= 0 else ""))
        split = QSplitter()
        split.addWidget(self.nodes)
        split.addWidget(self.diff)
        split.setSizes([160, 560])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Write into the lab")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"{len(changes)} node(s) run otherwise than the lab says. Writing it makes the next "
                                "deploy rebuild what runs now (one undo step)."))
        layout.addWidget(split, 1)
        layout.addWidget(buttons)
        self.resize(760, 480)
        self.nodes.setCurrentRow(0)


class SaveRunningController(QObject):
    message = Signal(str)
    dialog_opened = Signal(object)  # the RunningDiff, for whoever wants to watch it (tests)

    def __init__(self, editor: Editor, deploy: DeployController, log: DeployLog, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self._deploy = deploy
        self._log = log
        self._parent = parent if isinstance(parent, QWidget) else None

    def save_running(self) -> None:
        lab = self._deploy.deployed_lab
        if not lab:
            self.message.emit("deploy the lab first: there is nothing running to save")
            return
        self._log.log(f"reading the running state of lab {lab}")
        worker = Worker(lambda _report: _read_running(lab))
        worker.returned.connect(self._review)
        worker.errored.connect(lambda error: self._failed(str(error)))
        worker.start(self._deploy.pool)

    def _review(self, running: RunningState) -> None:
        from vtopo.saving import apply_state

        changed = self._editor.topology.copy()
        changes = apply_state(changed, running.states)
        if not changes:
            self.message.emit("the running lab is as the lab says: nothing to save")
            return
        dialog = RunningDiff(changes, self._parent)
        dialog.accepted.connect(lambda: self._write(changed, changes))
        dialog.setModal(True)
        dialog.show()
        self.dialog_opened.emit(dialog)

    def _write(self, changed: Topology, changes: list[NodeChange]) -> None:
        self._editor.adopt(changed, [change.node for change in changes], TITLE)
        said = f"wrote the running state of {len(changes)} node(s) into the lab"
        self._log.log(said)
        self.message.emit(said)

    def _failed(self, why: str) -> None:
        self._log.log(f"FAILED: could not save the running configuration: {why}")
        self.message.emit(f"could not save the running configuration: {why}")
