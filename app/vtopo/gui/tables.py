"""Tables as the designer shows them: a model of rows under named columns, and a table in a scrolling form that is as
tall as its rows up to a few and scrolls past them, so that Qt lays out and paints only the rows in sight of a node
of a thousand ports (its rows are of one height, its columns fit the rows in sight: none is measured over every
row)."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QHeaderView, QTableView, QWidget

ROWS_SHOWN = 12
Index = QModelIndex | QPersistentModelIndex
"""What a model's methods are given to name a cell."""


class RowsModel(QAbstractTableModel):
    """A flat table of rows: a column for each of `columns`, whose names head them."""

    columns: tuple[str, ...] = ()

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation is Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section]
        return None


class ShortTable(QTableView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.verticalHeader().hide()
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.horizontalHeader().setResizeContentsPrecision(0)

    def fit_height(self) -> None:
        """As tall as its rows, up to ROWS_SHOWN, in its font (presentation mode's, larger, too)."""
        model = self.model()
        rows = min(model.rowCount() if model is not None else 0, ROWS_SHOWN)
        header = self.horizontalHeader().sizeHint().height()
        self.setFixedHeight(header + rows * self.verticalHeader().defaultSectionSize() + 2 * self.frameWidth())

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.fit_height()
