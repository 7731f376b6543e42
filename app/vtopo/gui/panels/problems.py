"""The problems dock: every error and warning of the lab; clicking one selects its node or link."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHeaderView, QLabel, QStyle, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from vtopo.gui.document.analysis import Analysis
from vtopo.model.problems import Problem, Severity

SUBJECT_ID_ROLE = Qt.ItemDataRole.UserRole


class ProblemsPanel(QWidget):
    subject_activated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel("Checking…")
        self.tree = QTreeWidget()
        self.tree.setRootIsDecorated(False)
        self.tree.setHeaderLabels(["Where", "Problem"])
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setWordWrap(True)
        self.tree.itemClicked.connect(self._clicked)
        self.tree.itemActivated.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree)
        self._listed: list[Problem] = []

    def show_analysis(self, analysis: Analysis) -> None:
        if analysis.problems != self._listed:  # an edit mostly leaves the list as it was: keep the rows then
            self._list(analysis.problems)
        errors = len(analysis.errors)
        warnings = len(analysis.problems) - errors
        if not analysis.problems:
            self.summary.setText("No problems: the lab compiles.")
        else:
            self.summary.setText(f"{errors} error(s), {warnings} warning(s)")

    def _list(self, problems: list[Problem]) -> None:
        self._listed = list(problems)
        style = self.style()
        icons = {Severity.ERROR: style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical),
                 Severity.WARNING: style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)}
        items = []
        for problem in sorted(problems, key=lambda p: p.severity is not Severity.ERROR):
            item = QTreeWidgetItem([problem.subject or "lab", problem.message])
            item.setIcon(0, icons[problem.severity])
            item.setToolTip(1, str(problem))
            item.setData(0, SUBJECT_ID_ROLE, problem.subject_id)
            items.append(item)
        self.tree.clear()
        self.tree.addTopLevelItems(items)  # at once: the first column sizes itself to its contents once

    def show_busy(self) -> None:
        self.summary.setText("Checking…")

    def _clicked(self, item: QTreeWidgetItem) -> None:
        subject_id = item.data(0, SUBJECT_ID_ROLE)
        if subject_id:
            self.subject_activated.emit(subject_id)
