"""Lab ▸ Checkpoints…: the lab's checkpoints (named states of the running lab, kept in the lab as `vtopo checkpoint`
keeps them), and making, restoring and deleting one, and undoing the last restore. The agent reads and restores, in
a worker (vtopo.client.agent_client); what changes the lab (a checkpoint made or deleted, the state a restore replaced, kept
as checkpoint before-restore) is one undo step of the document. The Exercise dock restores the checkpoint a stage
starts from through `restore`."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (QDialog, QHBoxLayout, QLabel, QLineEdit, QListWidget, QPlainTextEdit, QPushButton,
                               QVBoxLayout, QWidget)

from vtopo.gui.document.editor import Editor
from vtopo.gui.panels.deploy import DeployController, DeployLog
from vtopo.gui.workers import Worker
from vtopo.model.checkpoints import UNDO, Checkpoint, keep, named
from vtopo.model.rules import CHECKPOINT_NAME, CHECKPOINT_NAME_RULE

if TYPE_CHECKING:
    from vtopo.checkpoints import Restored

TITLE = "Checkpoints"
NAME_ROLE = Qt.ItemDataRole.UserRole


def _take(lab: str, name: str) -> Checkpoint:
    from vtopo.client.agent_client import AgentClient

    return AgentClient().take_checkpoint(lab, name)


def _restore(lab: str, checkpoint: Checkpoint) -> tuple[Restored, Checkpoint]:
    """Restore `checkpoint`, after reading the state it replaces (the checkpoint UNDO)."""
    from vtopo.client.agent_client import AgentClient

    agent = AgentClient()
    before = agent.take_checkpoint(lab, UNDO)
    return agent.restore(lab, checkpoint), before


class CheckpointsDialog(QDialog):
    """The checkpoints, a name and Make, Restore, Delete and Undo restore, and what the last action said."""

    make_requested = Signal(str)
    restore_requested = Signal(str)
    delete_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.name = QLineEdit()
        self.name.setPlaceholderText("name of a new checkpoint, e.g. ospf-done")
        self.make = QPushButton("&Make")
        self.checkpoints = QListWidget()
        self.restore = QPushButton("&Restore")
        self.delete = QPushButton("&Delete")
        self.undo = QPushButton("&Undo restore")
        self.undo.setToolTip(f"Put back the state the last restore replaced (checkpoint {UNDO})")
        self.said = QPlainTextEdit()
        self.said.setReadOnly(True)
        self.said.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.make.clicked.connect(lambda: self.make_requested.emit(self.name.text().strip()))
        self.name.returnPressed.connect(self.make.click)
        self.restore.clicked.connect(lambda: self.restore_requested.emit(self.selected()))
        self.checkpoints.itemDoubleClicked.connect(lambda _item: self.restore.click())
        self.delete.clicked.connect(lambda: self.delete_requested.emit(self.selected()))
        self.undo.clicked.connect(lambda: self.restore_requested.emit(UNDO))
        self.checkpoints.currentRowChanged.connect(lambda _row: self._enable())
        making = QHBoxLayout()
        making.addWidget(self.name, 1)
        making.addWidget(self.make)
        acting = QHBoxLayout()
        for button in (self.restore, self.delete, self.undo):
            acting.addWidget(button)
        acting.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Named states of the running lab, kept in the lab: routers' configurations, addresses "
                                "and routes, stopped nodes, links down and impaired. Restoring changes only what "
                                "differs."))
        layout.addLayout(making)
        layout.addWidget(self.checkpoints, 1)
        layout.addLayout(acting)
        layout.addWidget(self.said, 1)
        self.resize(720, 520)
        self._running = False
        self._busy = False

    def selected(self) -> str:
        item = self.checkpoints.currentItem()
        return str(item.data(NAME_ROLE)) if item is not None else ""

    def show_checkpoints(self, checkpoints: list[Checkpoint], running: bool, busy: bool) -> None:
        chosen = self.selected()
        self.checkpoints.clear()
        for checkpoint in checkpoints:
            self.checkpoints.addItem(f"{checkpoint.name}   {checkpoint.made}   {len(checkpoint.nodes)} running "
                                     f"node(s), {len(checkpoint.stopped)} stopped, {len(checkpoint.down)} link(s) "
                                     "down")
            self.checkpoints.item(self.checkpoints.count() - 1).setData(NAME_ROLE, checkpoint.name)
            if checkpoint.name == chosen:
                self.checkpoints.setCurrentRow(self.checkpoints.count() - 1)
        self._running, self._busy = running, busy
        self._enable()

    def _enable(self) -> None:
        live = self._running and not self._busy
        has_undo = any(self.checkpoints.item(row).data(NAME_ROLE) == UNDO for row in range(self.checkpoints.count()))
        self.make.setEnabled(live)
        self.restore.setEnabled(live and bool(self.selected()))
        self.delete.setEnabled(not self._busy and bool(self.selected()))
        self.undo.setEnabled(live and has_undo)
        why = "" if self._running else "Deploy the lab first: checkpoints are states of the running lab"
        for button in (self.make, self.restore, self.undo):
            button.setToolTip(why or button.toolTip())


class CheckpointsController(QObject):
    message = Signal(str)
    dialog_opened = Signal(object)  # the CheckpointsDialog, for whoever wants to watch it (tests)
    finished = Signal(str)  # what the last make, restore or delete said

    def __init__(self, editor: Editor, deploy: DeployController, log: DeployLog, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._editor, self._deploy, self._log = editor, deploy, log
        self._parent = parent if isinstance(parent, QWidget) else None
        self._dialog: CheckpointsDialog | None = None
        self._busy = False
        editor.undo_stack.indexChanged.connect(lambda _index: self._refresh())
        editor.topology_replaced.connect(self._refresh)
        deploy.states_changed.connect(self._refresh)

    def open(self) -> None:
        if self._dialog is None:
            self._dialog = dialog = CheckpointsDialog(self._parent)
            dialog.make_requested.connect(self.make)
            dialog.restore_requested.connect(self.restore)
            dialog.delete_requested.connect(self.delete)
        self._refresh()
        self._dialog.show()
        self._dialog.raise_()
        self.dialog_opened.emit(self._dialog)

    def _refresh(self) -> None:
        if self._dialog is not None:
            self._dialog.show_checkpoints(self._editor.topology.checkpoints, bool(self._deploy.deployed_lab),
                                          self._busy)

    def make(self, name: str) -> None:
        if not CHECKPOINT_NAME.fullmatch(name):
            self._say(f"checkpoint {name!r}: {CHECKPOINT_NAME_RULE}")
            return
        lab = self._deploy.deployed_lab
        self._run(lambda: _take(lab, name), lambda checkpoint: self._made(checkpoint), f"keeping checkpoint {name}")

    def _made(self, checkpoint: Checkpoint) -> None:
        self._editor.set_checkpoints(keep(self._editor.topology.checkpoints, checkpoint),
                                     f"Make checkpoint {checkpoint.name}")
        self._say(f"kept checkpoint {checkpoint.name} of lab {self._deploy.deployed_lab}: {len(checkpoint.nodes)} "
                  f"running node(s), {len(checkpoint.stopped)} stopped, {len(checkpoint.down)} link(s) down")

    def restore(self, name: str) -> None:
        """Restore checkpoint `name` of the lab on the running lab (the Exercise dock's too)."""
        lab, checkpoint = self._deploy.deployed_lab, named(self._editor.topology.checkpoints, name)
        if checkpoint is None:
            self._say(f"lab {self._editor.topology.name} has no checkpoint {name}")
        elif not lab:
            self._say(f"deploy the lab first to restore checkpoint {name}")
        else:
            self._run(lambda: _restore(lab, checkpoint), lambda result: self._restored(lab, name, *result),
                      f"restoring checkpoint {name}")

    def _restored(self, lab: str, name: str, restored: Restored, before: Checkpoint) -> None:
        if restored.nodes or restored.links:
            self._editor.set_checkpoints(keep(self._editor.topology.checkpoints, before),
                                         f"Restore checkpoint {name}")
        self._deploy.refresh_status()
        self._say(restored.said(lab, name, False))

    def delete(self, name: str) -> None:
        kept = [checkpoint for checkpoint in self._editor.topology.checkpoints if checkpoint.name != name]
        self._editor.set_checkpoints(kept, f"Delete checkpoint {name}")
        self._say(f"deleted checkpoint {name}")

    def _run(self, job: Callable[[], object], done: Callable[..., None], doing: str) -> None:
        if self._editor.topology.sites:
            self._say(f"lab {self._editor.topology.name} is spread over sites: checkpoints are of labs on one machine "
                      "only")
            return
        self._busy = True
        self._refresh()
        self._log.log(f"{doing} of lab {self._deploy.deployed_lab}")
        worker = Worker(lambda _report: job())
        worker.returned.connect(done)
        worker.errored.connect(lambda error: self._say(f"FAILED: {doing}: {error}"))
        worker.finished.connect(self._idle)
        worker.start(self._deploy.pool)

    def _idle(self) -> None:
        self._busy = False
        self._refresh()

    def _say(self, text: str) -> None:
        self._log.log(text)
        if self._dialog is not None:
            self._dialog.said.setPlainText(text)
        self.message.emit(text.splitlines()[-1] if text else text)
        self.finished.emit(text)
