"""The leases a deployed DHCP server handed out, in the inspector under its node: address, client node and MAC, from
the lab's status as the designer last read it."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QGroupBox, QHeaderView, QLabel, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from vtopo.kinds.leases import Lease

COLUMNS = ("Address", "Client", "MAC")


class LeasesBox(QGroupBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("DHCP leases", parent)
        self.none_yet = QLabel("none yet: no client has asked for an address")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        layout = QVBoxLayout(self)
        layout.addWidget(self.none_yet)
        layout.addWidget(self.table)

    def show_leases(self, leases: list[Lease] | None) -> None:
        """The server's leases; None hides the box (the node serves no DHCP, or the lab is not deployed)."""
        self.setVisible(leases is not None)
        leases = leases or []
        self.none_yet.setVisible(not leases)
        self.table.setVisible(bool(leases))
        self.table.setRowCount(len(leases))
        for row, lease in enumerate(leases):
            for column, text in enumerate((lease.address, lease.client, lease.mac)):
                cell = QTableWidgetItem(text)
                cell.setFlags(cell.flags() & ~Qt.ItemFlag.ItemIsEditable)
                self.table.setItem(row, column, cell)
        self.table.resizeRowsToContents()
        header = self.table.horizontalHeader().sizeHint().height() + 2 * self.table.frameWidth()
        self.table.setFixedHeight(header + sum(self.table.rowHeight(row) for row in range(len(leases))) + 4)

    def rows(self) -> list[list[str]]:
        """What the table lists, row by row."""
        return [[item.text() if (item := self.table.item(row, column)) else "" for column in range(len(COLUMNS))]
                for row in range(self.table.rowCount())]
