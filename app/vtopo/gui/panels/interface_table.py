"""A node's interfaces in the inspector: port, peer, address, 802.1Q subinterfaces, MAC and state, one row per link
end. Addresses, subinterfaces and MAC are edited in place; each edit is one undo step on the link. An interface set to
take its address by DHCP shows `dhcp` among its addresses, and typing `dhcp` there sets it so. Subinterfaces are
written `vlan 10 = 10.0.10.1/24; vlan 20 = 10.0.20.1/24`; an edit that does not read so is refused, and says why."""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

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


@dataclasses.dataclass(frozen=True)
class InterfaceRow:
    """One link end of the node: the texts of its cells, and which end it is (the link's id, "a" or "b")."""

    texts: tuple[str, ...]
    end: tuple[str, str]


class InterfaceRows(RowsModel):
    """The rows the table shows. An edit is not kept here: `edited` asks for it (row, column, text), and the rows
    shown next say whether it was taken; one refused keeps its cell as it was, with the reason as its tooltip."""

    edited = Signal(int, int, str)
    columns = COLUMNS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[InterfaceRow] = []
        self._refused: dict[tuple[int, int], str] = {}

    def show_rows(self, rows: list[InterfaceRow]) -> None:
        """The rows in place of those shown: changed where the same ends are shown, so that the current cell stays."""
        if [row.end for row in rows] != [row.end for row in self.rows]:
            self.beginResetModel()
            self.rows, self._refused = rows, {}
            self.endResetModel()
            return
        changed = sorted({index for index, (old, new) in enumerate(zip(self.rows, rows)) if old != new}
                         | {row for row, _ in self._refused})
        self.rows, self._refused = rows, {}
        if changed:
            self.dataChanged.emit(self.index(changed[0], 0), self.index(changed[-1], len(COLUMNS) - 1))

    def refuse(self, row: int, column: int, error: str) -> None:
        self._refused[row, column] = error
        self.dataChanged.emit(self.index(row, column), self.index(row, column))

    def flags(self, index: Index) -> Qt.ItemFlag:
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        return flags | Qt.ItemFlag.ItemIsEditable if index.column() in EDITABLE else flags

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return self.rows[index.row()].texts[index.column()]
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
        rows = []
        for link in topology.links_of(node_id):
            for side, own, peer in (("a", link.a, link.b), ("b", link.b, link.a)):
                if own.node == node_id:
                    peer_node = topology.nodes.get(peer.node)
                    rows.append(InterfaceRow((own.port, f"{peer_node.name if peer_node else peer.node} {peer.port}",
                                              ", ".join(([DHCP] if own.interface.dhcp else []) + own.interface.addresses),
                                              SEPARATOR.join(map(subinterface_text, own.interface.subinterfaces)),
                                              own.interface.mac, state + leased(own.interface, leases)),
                                             (link.id, side)))
        rows.sort(key=lambda row: row.texts[0])
        self.rows.show_rows(rows)

    def _edited(self, row: int, column: int, text: str) -> None:
        link_id, side = self.rows.rows[row].end
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
