"""The packet list: a bounded table of decoded packets and the display filter in front of it."""
from __future__ import annotations

from collections import deque

from PySide6.QtCore import QModelIndex, QObject, QSortFilterProxyModel, Qt

from vtopo.capture import PacketSummary, RawPacket
from vtopo.gui.tables import Index, RowsModel

ROWS = 5_000
COLUMNS = ("No.", "Time", "Source MAC", "Destination MAC", "VLAN", "Source IP", "Destination IP", "Protocol",
           "TTL", "Length", "Info")
MAC_COLUMNS = (COLUMNS.index("Source MAC"), COLUMNS.index("Destination MAC"))


class PacketTable(RowsModel):
    """The latest ROWS packets; older rows leave as new ones come (the full capture is in its file)."""

    columns = COLUMNS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: deque[tuple[PacketSummary, RawPacket, str]] = deque()
        self.start_s = 0.0

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if role != Qt.ItemDataRole.DisplayRole or not index.isValid():
            return None
        p = self.rows[index.row()][0]
        values = (p.number, f"{p.time_s - self.start_s:.6f}", p.src_mac, p.dst_mac, " ".join(map(str, p.vlans)),
                  p.src_ip, p.dst_ip, p.protocol, "" if p.ttl is None else p.ttl, p.length, p.info)
        return str(values[index.column()])

    def add(self, batch: list[tuple[PacketSummary, RawPacket]]) -> None:
        if not batch:
            return
        if not self.rows and not self.start_s:
            self.start_s = batch[0][0].time_s
        batch = batch[-ROWS:]
        overflow = len(self.rows) + len(batch) - ROWS
        if overflow > 0:
            self.beginRemoveRows(QModelIndex(), 0, overflow - 1)
            for _ in range(overflow):
                self.rows.popleft()
            self.endRemoveRows()
        first = len(self.rows)
        self.beginInsertRows(QModelIndex(), first, first + len(batch) - 1)
        self.rows.extend((summary, raw, _searchable(summary)) for summary, raw in batch)
        self.endInsertRows()

    def clear(self) -> None:
        self.beginResetModel()
        self.rows.clear()
        self.endResetModel()

    def packet(self, row: int) -> tuple[PacketSummary, RawPacket]:
        summary, raw, _ = self.rows[row]
        return summary, raw

    def searchable(self, row: int) -> str:
        return self.rows[row][2]


class DisplayFilter(QSortFilterProxyModel):
    """Shows the rows that contain every word typed (protocol, address or info), case-insensitively."""

    def __init__(self, table: PacketTable) -> None:
        super().__init__(table)
        self.table = table
        self.setSourceModel(table)
        self.words: list[str] = []

    def set_text(self, text: str) -> None:
        self.beginFilterChange()
        self.words = text.lower().split()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        haystack = self.table.searchable(source_row)
        return all(word in haystack for word in self.words)


def _searchable(p: PacketSummary) -> str:
    return " ".join((p.protocol, p.src_mac, p.dst_mac, p.tags, p.src_ip, p.dst_ip, p.info, f"ttl {p.ttl}")).lower()
