"""The problems dock: every error and warning of the lab; clicking one selects its node or link.

A lab of thousands of nodes can have a thousand problems, and each edit a new list. The list is a model that a
table view asks only for the rows it shows, one line each (a tree view would ask about every row to lay them out),
so taking a new list costs the GUI thread nothing in proportion to it. The current problem is shown whole below."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QStyle, QTableView, QVBoxLayout, QWidget

from vtopo.gui.document.check_process import ListedProblems
from vtopo.gui.tables import Index, RowsModel
from vtopo.model.problems import Severity

SUBJECT_ID_ROLE = Qt.ItemDataRole.UserRole
SIZED_ROWS = 100
"""How many rows the "Where" column is sized to fit (Qt's default reads a thousand)."""


class ProblemsModel(RowsModel):
    """Problems, errors first: where (the node or link), and the message."""

    columns = ("Where", "Problem")

    def __init__(self, icons: dict[Severity, QIcon]) -> None:
        super().__init__()
        self._icons = icons
        self.listed = ListedProblems([], [], [], [], [])

    def set_problems(self, listed: ListedProblems) -> None:
        self.beginResetModel()
        self.listed = listed
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.listed.texts)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row, listed = index.row(), self.listed
        if role == Qt.ItemDataRole.DisplayRole:
            return listed.subjects[row] if index.column() == 0 else listed.messages[row]
        if role == Qt.ItemDataRole.DecorationRole and index.column() == 0:
            return self._icons[Severity(listed.severities[row])]
        if role == Qt.ItemDataRole.ToolTipRole:
            return listed.texts[row]
        if role == SUBJECT_ID_ROLE:
            return listed.subject_ids[row]
        return None


class ProblemsPanel(QWidget):
    subject_activated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel("Checking…")
        style = self.style()
        self.model = ProblemsModel({Severity.ERROR: style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical),
                                    Severity.WARNING: style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)})
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        columns = self.table.horizontalHeader()
        columns.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        columns.setResizeContentsPrecision(SIZED_ROWS)
        columns.setStretchLastSection(True)
        columns.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft)
        self.table.clicked.connect(self._clicked)
        self.table.activated.connect(self._clicked)
        self.table.selectionModel().currentChanged.connect(self._show_current)
        self.current = QLabel()
        self.current.setWordWrap(True)
        self.current.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.table)
        layout.addWidget(self.current)
    def show_problems(self, problems: ListedProblems) -> None:
        if problems != self.model.listed:  # an edit mostly leaves the list as it was: keep the rows then
            self.model.set_problems(problems)
            self.current.clear()
        errors = problems.error_count
        warnings = len(problems.texts) - errors
        if not problems.texts:
            self.summary.setText("No problems: the lab compiles.")
        else:
            self.summary.setText(f"{errors} error(s), {warnings} warning(s)")

    def show_busy(self) -> None:
        self.summary.setText("Checking…")

    def _show_current(self, index: QModelIndex) -> None:
        self.current.setText(str(index.data(Qt.ItemDataRole.ToolTipRole) or "") if index.isValid() else "")

    def _clicked(self, index: QModelIndex) -> None:
        subject_id = index.data(SUBJECT_ID_ROLE)
        if subject_id:
            self.subject_activated.emit(subject_id)
