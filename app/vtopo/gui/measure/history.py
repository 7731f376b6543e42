"""The history of runs as a table: select one to see it again, several to compare them, export them."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, datetime
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from vtopo.gui.canvas.labels import format_rate
from vtopo.gui.measure.format import impairment_text
from vtopo.measure import RunResult
from vtopo.measure.history import dump_history, history_csv

HISTORY_COLUMNS = ("#", "When", "Lab", "Pair", "Path", "Options", "Mean", "Retr / loss", "Status")
PATH_COLUMN = HISTORY_COLUMNS.index("Path")
STATUS_COLUMN = HISTORY_COLUMNS.index("Status")
WHEN_COLUMN = HISTORY_COLUMNS.index("When")
SHARING_COLUMNS = {HISTORY_COLUMNS.index(name) for name in ("When", "Lab", "Pair", "Path")}
"""Long texts: these share what the short columns leave and are elided; the short ones always show whole."""
READABLE_CHARACTERS = 9
"""A shared column never shows fewer characters than this (or than its text has): below that, the table scrolls."""


def when(started_at: str, today: date | None = None) -> str:
    """A run's start as the table shows it: the time alone for a run of today, with its date otherwise."""
    try:
        started = datetime.fromisoformat(started_at)
    except ValueError:
        return started_at
    if started.date() == (today or datetime.now(started.tzinfo).date()):
        return started.strftime("%H:%M:%S")
    return started.strftime("%Y-%m-%d %H:%M")


class HistoryView(QWidget):
    """The runs, oldest first. It holds the list; the panel decides when it grows and where it is saved."""

    selection_changed = Signal(list, list)
    """(the selected runs, their labels such as "#2") whenever the selection changes."""
    message = Signal(str, bool)
    """(text, is an error) about an export."""
    removed = Signal()
    """Runs were removed from the history by the user."""

    def __init__(self, chart: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._chart = chart  # what "Chart as PNG" grabs
        self._history: list[RunResult] = []
        self.table = QTableWidget(0, len(HISTORY_COLUMNS))
        self.table.setHorizontalHeaderLabels(list(HISTORY_COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self._fit_columns()
        self.table.itemSelectionChanged.connect(self._selection_changed)

        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Remove the selected runs from the history (Delete)")
        self.remove_button.setEnabled(False)
        self.remove_button.clicked.connect(self.delete_selected)
        remove_shortcut = QShortcut(QKeySequence.StandardKey.Delete, self.table)
        remove_shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
        remove_shortcut.activated.connect(self.delete_selected)

        self.export_csv_button = QPushButton("Export CSV…")
        self.export_csv_button.clicked.connect(lambda: self._ask_and(self.export_csv, "CSV (*.csv)", ".csv"))
        self.export_json_button = QPushButton("Export JSON…")
        self.export_json_button.clicked.connect(lambda: self._ask_and(self.export_json, "JSON (*.json)", ".json"))
        self.export_png_button = QPushButton("Chart as PNG…")
        self.export_png_button.clicked.connect(lambda: self._ask_and(self.export_chart_png, "PNG (*.png)", ".png"))
        exports = QHBoxLayout()
        for button in (self.remove_button, self.export_csv_button, self.export_json_button, self.export_png_button):
            exports.addWidget(button)
        exports.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(exports)

    def _fit_columns(self) -> None:
        """Each short column shows whole, the long ones share the rest (elided in the middle, whole in their
        tooltips), the Path column taking what is left over. A long column keeps READABLE_CHARACTERS: when the panel
        is too narrow even for that, the table scrolls sideways rather than show "…" alone."""
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setWordWrap(False)
        self.table.viewport().installEventFilter(self)

    def content_widths(self) -> list[int]:
        """What each column needs to show its header and cells whole."""
        header = self.table.horizontalHeader()
        return [max(header.sectionSizeFromContents(column).width(), self.table.sizeHintForColumn(column))
                for column in range(len(HISTORY_COLUMNS))]

    def wanted_width(self) -> int:
        """The table's width with every column whole."""
        return sum(self.content_widths()) + self._frame_width()

    def _frame_width(self) -> int:
        return 2 * self.table.frameWidth() + self.table.verticalScrollBar().sizeHint().width()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self._share_width()
        return super().eventFilter(watched, event)

    def readable_widths(self) -> list[int]:
        """The least each column shows: a short one whole, a long one READABLE_CHARACTERS of its text."""
        readable = self.table.fontMetrics().horizontalAdvance("m" * READABLE_CHARACTERS)
        return [min(width, readable) if column in SHARING_COLUMNS else width
                for column, width in enumerate(self.content_widths())]

    def _share_width(self) -> None:
        wanted, least = self.content_widths(), self.readable_widths()
        short = sum(width for column, width in enumerate(wanted) if column not in SHARING_COLUMNS)
        room = self.table.viewport().width()
        long = sum(wanted[column] for column in SHARING_COLUMNS)
        spare = room - short - long
        header = self.table.horizontalHeader()
        header.setMinimumSectionSize(1)
        for column, width in enumerate(wanted):
            if column in SHARING_COLUMNS and spare < 0:
                width = max(least[column], (room - short) * width // max(1, long))
            elif column == PATH_COLUMN:
                width += spare
            header.resizeSection(column, width)

    # -- the runs -------------------------------------------------------------------------------

    @property
    def history(self) -> list[RunResult]:
        return list(self._history)

    def set_history(self, results: Sequence[RunResult]) -> None:
        self._history = list(results)
        self._refresh()

    def append(self, result: RunResult) -> None:
        """One more run, selected so that the chart shows it."""
        self._history.append(result)
        self._refresh()
        self.table.clearSelection()
        self.table.selectRow(len(self._history) - 1)

    @staticmethod
    def label(row: int) -> str:
        return f"#{row + 1}"

    def _refresh(self) -> None:
        table = self.table
        table.blockSignals(True)
        table.setRowCount(len(self._history))
        for row, r in enumerate(self._history):
            cells = [
                self.label(row), when(r.started_at), r.lab, f"{r.source} → {r.destination}",
                r.path or r.address, r.options.describe(), format_rate(r.mean_bits_per_second),
                impairment_text(r), r.status,
            ]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, r.id)
                item.setToolTip(text)  # the whole text of an elided cell
                if column == WHEN_COLUMN:
                    item.setToolTip(r.started_at.replace("T", " ").replace("+00:00", " UTC"))
                if column == PATH_COLUMN:
                    item.setToolTip(f"{r.address}\n{r.path}" if r.path else r.address)
                if column == STATUS_COLUMN and r.error:
                    item.setToolTip(r.error)
                table.setItem(row, column, item)
        table.blockSignals(False)
        self._share_width()

    # -- selection ------------------------------------------------------------------------------

    def selected_rows(self) -> list[int]:
        rows = {index.row() for index in self.table.selectionModel().selectedRows()}
        return sorted(row for row in rows if row < len(self._history))

    def selected_results(self) -> list[RunResult]:
        return [self._history[row] for row in self.selected_rows()]

    def select_rows(self, rows: Sequence[int]) -> None:
        table = self.table
        table.clearSelection()
        model = table.selectionModel()
        for row in rows:
            model.select(table.model().index(row, 0), model.SelectionFlag.Select | model.SelectionFlag.Rows)

    def delete_selected(self) -> None:
        rows = set(self.selected_rows())
        if not rows:
            return
        self._history = [run for row, run in enumerate(self._history) if row not in rows]
        self._refresh()
        self.table.clearSelection()
        self._selection_changed()
        self.removed.emit()

    def _selection_changed(self) -> None:
        rows = self.selected_rows()
        self.remove_button.setEnabled(bool(rows))
        self.selection_changed.emit([self._history[row] for row in rows], [self.label(row) for row in rows])

    # -- exports ----------------------------------------------------------------------------------

    def _export_set(self) -> list[RunResult]:
        selected = self.selected_results()
        return selected if len(selected) > 1 else self._history

    def export_csv(self, path: str | Path) -> None:
        """The whole history (or the selected runs, when several are selected) as CSV."""
        Path(path).write_text(history_csv(self._export_set()), encoding="utf-8")

    def export_json(self, path: str | Path) -> None:
        Path(path).write_text(dump_history(self._export_set()), encoding="utf-8")

    def export_chart_png(self, path: str | Path) -> bool:
        return self._chart.grab().save(str(path), "PNG")

    def _ask_and(self, action: Callable[[str], object], filter_text: str, suffix: str) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export", "", filter_text)
        if not path:
            return
        if not path.endswith(suffix):
            path += suffix
        try:
            action(path)
        except OSError as e:
            self.message.emit(f"cannot write {path}: {e.strerror}", True)
            return
        self.message.emit(f"wrote {path}", False)
