"""A node's interfaces in the inspector: port, peer, address, 802.1Q subinterfaces, MAC and state, one row per link
end. Addresses, subinterfaces and MAC are edited in place; each edit is one undo step on the link. An interface set to
take its address by DHCP shows `dhcp` among its addresses, and typing `dhcp` there sets it so. Subinterfaces are
written `vlan 10 = 10.0.10.1/24; vlan 20 = 10.0.20.1/24`; an edit that does not read so is refused, and says why."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

from PySide6.QtCore import QModelIndex, QObject, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QWidget

from vtopo.gui.document.editor import Editor
from vtopo.gui.panels.interface_text import EXAMPLE, parse_subinterfaces, subinterface_text
from vtopo.gui.tables import Index, RowsModel, ShortTable
from vtopo.kinds.leases import Lease
from vtopo.model.topology import Interface

COLUMNS = ("Port", "Peer", "Address", "Subinterfaces", "MAC", "State")
ADDRESS, SUBINTERFACES, MAC = 2, 3, 4
EDITABLE = (ADDRESS, SUBINTERFACES, MAC)
SEPARATOR = "; "  # between the subinterfaces in their cell
DHCP = "dhcp"  # in the address column: the interface takes its address from a DHCP server


def leased(interface: Interface, leases: Sequence[Lease]) -> str:
    """What a DHCP interface leased, after its state: `, leased 10.0.1.100`; "" for none."""
    if not interface.dhcp:
        return ""
    mine = [lease.address for lease in leases if not interface.mac or lease.mac == interface.mac.lower()]
    return f", leased {', '.join(mine)}" if mine else ""


End = tuple[str, str]
"""A link end: the link's id, and "a" or "b"."""


class InterfaceRows(RowsModel):
    """A row per link end of the node, its cells' texts written when Qt asks for them (for the rows in sight). An
    edit is not kept here: `edited` asks for it (row, column, text), and the rows shown next say whether it was
    taken; one refused keeps its cell as it was, with the reason as its tooltip."""

    edited = Signal(int, int, str)
    columns = COLUMNS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ends: list[End] = []
        self._texts: Callable[[End], tuple[str, ...]] = lambda end: ("",) * len(COLUMNS)
        self._written: dict[int, tuple[str, ...]] = {}  # by row, those asked for since the ends were shown
        self._refused: dict[tuple[int, int], str] = {}

    def show_ends(self, ends: list[End], texts: Callable[[End], tuple[str, ...]]) -> None:
        """The ends in place of those shown, each row's texts as `texts` writes them; when the same ends are shown,
        their rows are told to change, so that the current cell stays."""
        self._texts, self._written, self._refused = texts, {}, {}
        if ends != self.ends:
            self.beginResetModel()
            self.ends = ends
            self.endResetModel()
        elif ends:
            self.dataChanged.emit(self.index(0, 0), self.index(len(ends) - 1, len(COLUMNS) - 1))

    def refuse(self, row: int, column: int, error: str) -> None:
        self._refused[row, column] = error
        self.dataChanged.emit(self.index(row, column), self.index(row, column))

    def flags(self, index: Index) -> Qt.ItemFlag:
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        return flags | Qt.ItemFlag.ItemIsEditable if index.column() in EDITABLE else flags

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.ends)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            row = index.row()
            if row not in self._written:
                self._written[row] = self._texts(self.ends[row])
            return self._written[row][index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._refused.get((index.row(), index.column()))
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or index.column() not in EDITABLE:
            return False
        self.edited.emit(index.row(), index.column(), str(value))
        return True


class InterfaceTable(ShortTable):
    def __init__(self, editor: Editor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self.rows = InterfaceRows(self)
        self.setModel(self.rows)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
                             | QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.setToolTip("Double-click an address, subinterface or MAC to change it (addresses: comma-separated, with "
                        f"/prefix, or dhcp for an address from a DHCP server; subinterfaces: {EXAMPLE}; vlan 20 = ...)")
        self.rows.edited.connect(self._edited)
        self.rows.modelReset.connect(self.fit_height)
        self.fit_height()

    def show_node(self, node_id: str, state: str, leases: Sequence[Lease] = ()) -> None:
        """The node's interfaces; `leases`: those the lab's DHCP servers gave this node, each shown with its state on
        the DHCP interface whose MAC it names, or, where vtopo chose the MACs, on each DHCP interface."""
        topology = self._editor.topology
        ends = sorted(((end.port, link.id, side) for link in topology.links_of(node_id)
                       for side, end in (("a", link.a), ("b", link.b)) if end.node == node_id))

        def texts(end: End) -> tuple[str, ...]:
            link = topology.links.get(end[0])
            if link is None:  # removed, and the table not yet shown again
                return ("",) * len(COLUMNS)
            own, peer = (link.a, link.b) if end[1] == "a" else (link.b, link.a)
            peer_node = topology.nodes.get(peer.node)
            return (own.port, f"{peer_node.name if peer_node else peer.node} {peer.port}",
                    ", ".join(([DHCP] if own.interface.dhcp else []) + own.interface.addresses),
                    SEPARATOR.join(map(subinterface_text, own.interface.subinterfaces)), own.interface.mac,
                    state + leased(own.interface, leases))

        self.rows.show_ends([(link_id, side) for _port, link_id, side in ends], texts)

    def _edited(self, row: int, column: int, text: str) -> None:
        link_id, side = self.rows.ends[row]
        link = self._editor.topology.links.get(link_id)
        if link is None:
            return
        end = link.a if side == "a" else link.b
        interface = end.interface
        text = text.strip()
        if column == ADDRESS:
            words = [a.strip() for a in text.split(",") if a.strip()]
            changed = dataclasses.replace(interface, addresses=[a for a in words if a.lower() != DHCP],
                                          dhcp=any(a.lower() == DHCP for a in words))
        elif column == SUBINTERFACES:
            try:
                changed = dataclasses.replace(interface, subinterfaces=parse_subinterfaces(text.split(";")))
            except ValueError as error:
                self.rows.refuse(row, column, f"{end.port}: {error}")
                self._editor.status_message.emit(f"{end.port}: {error}")
                return
        else:
            changed = dataclasses.replace(interface, mac=text)
        if side == "a":
            self._editor.update_link(link_id, a=changed)
        else:
            self._editor.update_link(link_id, b=changed)
