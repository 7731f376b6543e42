"""The Exercise dock: the stage a student is at, its instructions rendered from Markdown (images only from the lab's
folder), each of its checks with the state the Checks dock's last run found, and Previous / Next stage, Next only
once the stage's checks pass. The teacher's hidden checks are not shown."""
from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QUrl, Signal
from PySide6.QtGui import QBrush, QImage, QTextDocument
from PySide6.QtWidgets import (QHBoxLayout, QHeaderView, QLabel, QPushButton, QTextBrowser, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from vtopo.checks.stages import checks_of, current_stage, record_stage
from vtopo.gui.document.editor import Editor
from vtopo.gui.panels.checks import FAIL, PASS, ChecksController
from vtopo.interop.handout import image_in_folder
from vtopo.model.problems import LabError
from vtopo.model.topology import Topology


class Instructions(QTextBrowser):
    """Markdown shown as rich text; an image loads only from a file inside the lab's folder (`folder_of()`, asked
    as the image loads), and links open nothing."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.folder_of: Callable[[], Path | None] = lambda: None
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)

    def loadResource(self, kind: int, name: QUrl | str) -> object:
        folder = self.folder_of()
        if kind != QTextDocument.ResourceType.ImageResource.value or folder is None:
            return None
        path = image_in_folder(name.toString() if isinstance(name, QUrl) else name, folder)
        return QImage(str(path)) if path is not None else None


class ExercisePanel(QWidget):
    previous_requested = Signal()
    next_requested = Signal()
    check_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.instructions = Instructions()
        self.checks = QTreeWidget()
        self.checks.setRootIsDecorated(False)
        self.checks.setHeaderLabels(["Check", "Result"])
        self.checks.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.previous_button = QPushButton("Previous")
        self.check_button = QPushButton("Check")
        self.next_button = QPushButton("Next stage")
        self.previous_button.clicked.connect(self.previous_requested)
        self.check_button.clicked.connect(self.check_requested)
        self.next_button.clicked.connect(self.next_requested)
        buttons = QHBoxLayout()
        for button in (self.previous_button, self.check_button, self.next_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.instructions, 3)
        layout.addWidget(self.checks, 2)
        layout.addWidget(self.summary)
        layout.addLayout(buttons)

    def rows(self) -> list[tuple[str, str]]:
        items = (self.checks.topLevelItem(i) for i in range(self.checks.topLevelItemCount()))
        return [(item.text(0), item.text(1)) for item in items if item is not None]


class ExerciseController(QObject):
    """Shows the current stage of the editor's lab, its checks' state from the Checks dock's runner, and moves
    between stages (recorded as the CLI's `vtopo stage` records them). Moving to a stage that starts from a
    checkpoint asks for it to be restored (`checkpoint_reached`, which Lab ▸ Checkpoints answers)."""

    checkpoint_reached = Signal(str)

    def __init__(self, editor: Editor, panel: ExercisePanel, checks: ChecksController,
                 folder_of: Callable[[], Path | None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.editor, self.panel, self.checks = editor, panel, checks
        self.number = 1  # the stage shown, from which Previous and Next move
        panel.instructions.folder_of = folder_of
        panel.previous_requested.connect(lambda: self.move(-1))
        panel.next_requested.connect(lambda: self.move(1))
        panel.check_requested.connect(checks.run_all)
        checks.finished.connect(self.show_stage)
        checks.listed.connect(self.show_stage)
        editor.topology_replaced.connect(self.show_stage)
        self.show_stage()

    @property
    def topology(self) -> Topology:
        return self.editor.topology

    def _visible_checks(self, number: int) -> list[str]:
        try:
            typed = self.checks.typed()
        except LabError:
            typed = []
        return [check.check.name for check in checks_of(self.topology.stages[number - 1], typed)]

    def show_stage(self) -> None:
        panel, stages = self.panel, self.topology.stages
        if not stages:
            panel.title.setText("This lab has no stages.")
            panel.instructions.clear()
            panel.checks.clear()
            panel.summary.clear()
            for button in (panel.previous_button, panel.check_button, panel.next_button):
                button.setEnabled(False)
            return
        number = self.number = current_stage(self.topology)
        stage = stages[number - 1]
        panel.title.setText(f"<b>Stage {number} of {len(stages)}: {html.escape(stage.title)}</b>")
        panel.instructions.setMarkdown(stage.instructions)
        panel.checks.clear()
        outcomes = self.checks.outcomes
        names = self._visible_checks(number)
        for name in names:
            outcome = outcomes.get(name)
            item = QTreeWidgetItem([name, "…" if outcome is None else "pass" if outcome.passed else "FAIL"])
            if outcome is not None:
                item.setForeground(1, QBrush(PASS if outcome.passed else FAIL))
                item.setToolTip(0, outcome.verdict.why)
            panel.checks.addTopLevelItem(item)
        complete = all(name in outcomes and outcomes[name].passed for name in names)
        start = f"It starts from checkpoint {stage.checkpoint}, restored when you move here. " if stage.checkpoint \
            else ""
        panel.summary.setText(start + ("Stage complete: go on to the next one." if complete and number < len(stages)
                                       else "The last stage is complete." if complete else
                                       "Check the stage once your changes are in: the next stage opens when its "
                                       "checks pass."))
        panel.previous_button.setEnabled(number > 1)
        panel.check_button.setEnabled(bool(names))
        panel.next_button.setEnabled(complete and number < len(stages))

    def move(self, step: int) -> None:
        try:
            record_stage(self.topology, self.number + step)
        except OSError as error:
            self.editor.status_message.emit(f"cannot keep the stage you are at in {error.filename}: "
                                            f"{error.strerror}")
        self.show_stage()
        if checkpoint := self.topology.stages[self.number - 1].checkpoint:
            self.checkpoint_reached.emit(checkpoint)
