"""A node's interfaces in the inspector: port, peer, address, 802.1Q subinterfaces, MAC and state, one row per link
end. Addresses, subinterfaces and MAC are edited in place; each edit is one undo step on the link. An interface set to
take its address by DHCP shows `dhcp` among its addresses, and typing `dhcp` there sets it so. Subinterfaces are
written `vlan 10 = 10.0.10.1/24; vlan 20 = 10.0.20.1/24`; an edit that does not read so is refused, and says why."""
from __future__ import annotations

import dataclasses
from typing import Sequence

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from vtopo.gui.document.editor import Editor
from vtopo.gui.panels.interface_text import EXAMPLE, parse_subinterfaces, subinterface_text
from vtopo.kinds.leases import Lease
from vtopo.model.topology import Interface

COLUMNS = ("Port", "Peer", "Address", "Subinterfaces", "MAC", "State")
ADDRESS, SUBINTERFACES, MAC = 2, 3, 4
EDITABLE = (ADDRESS, SUBINTERFACES, MAC)
SEPARATOR = "; "  # between the subinterfaces in their cell
END = Qt.ItemDataRole.UserRole
DHCP = "dhcp"  # in the address column: the interface takes its address from a DHCP server


def leased(interface: Interface, leases: Sequence[Lease]) -> str:
    """What a DHCP interface leased, after its state: `, leased 10.0.1.100`; "" for none."""
    if not interface.dhcp:
        return ""
    mine = [lease.address for lease in leases if not interface.mac or lease.mac == interface.mac.lower()]
    return f", leased {', '.join(mine)}" if mine else ""


class InterfaceTable(QTableWidget):
    def __init__(self, editor: Editor, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self._editor = editor
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.verticalHeader().hide()
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        self.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
                             | QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.setToolTip("Double-click an address, subinterface or MAC to change it (addresses: comma-separated, with "
                        f"/prefix, or dhcp for an address from a DHCP server; subinterfaces: {EXAMPLE}; vlan 20 = ...)")
        self.itemChanged.connect(self._edited)

    def show_node(self, node_id: str, state: str, leases: Sequence[Lease] = ()) -> None:
        """The node's interfaces; `leases`: those the lab's DHCP servers gave this node, each shown with its state on
        the DHCP interface whose MAC it names, or, where vtopo chose the MACs, on each DHCP interface."""
        topology = self._editor.topology
        rows = []
        for link in topology.links_of(node_id):
            for side, own, peer in (("a", link.a, link.b), ("b", link.b, link.a)):
                if own.node == node_id:
                    peer_node = topology.nodes.get(peer.node)
                    rows.append((own.port, f"{peer_node.name if peer_node else peer.node} {peer.port}",
                                 ", ".join(([DHCP] if own.interface.dhcp else []) + own.interface.addresses),
                                 SEPARATOR.join(map(subinterface_text, own.interface.subinterfaces)),
                                 own.interface.mac, state + leased(own.interface, leases), (link.id, side)))
        rows.sort(key=lambda row: row[0])
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)  # the columns are fitted once, when full:
        self.blockSignals(True)  # fitted at each cell, the inspector of a bridge of 1,000 ports took 100 s to show
        self.setRowCount(len(rows))
        for index, (*texts, end) in enumerate(rows):
            for column, text in enumerate(texts):
                cell = QTableWidgetItem(str(text))
                if column not in EDITABLE:
                    cell.setFlags(cell.flags() & ~Qt.ItemFlag.ItemIsEditable)
                cell.setData(END, end)
                self.setItem(index, column, cell)
        self.blockSignals(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self._fit_height()

    def _fit_height(self) -> None:
        """As tall as its rows, in its font (presentation mode's, larger, too)."""
        self.resizeRowsToContents()
        header = self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth()
        self.setFixedHeight(header + sum(self.rowHeight(row) for row in range(self.rowCount())) + 4)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_height()

    def _edited(self, cell: QTableWidgetItem) -> None:
        link_id, side = cell.data(END)
        link = self._editor.topology.links.get(link_id)
        if link is None:
            return
        end = link.a if side == "a" else link.b
        interface = end.interface
        text = cell.text().strip()
        if cell.column() == ADDRESS:
            words = [a.strip() for a in text.split(",") if a.strip()]
            changed = dataclasses.replace(interface, addresses=[a for a in words if a.lower() != DHCP],
                                          dhcp=any(a.lower() == DHCP for a in words))
        elif cell.column() == SUBINTERFACES:
            try:
                changed = dataclasses.replace(interface, subinterfaces=parse_subinterfaces(text.split(";")))
            except ValueError as error:
                self._refuse(cell, SEPARATOR.join(map(subinterface_text, interface.subinterfaces)),
                             f"{end.port}: {error}")
                return
        else:
            changed = dataclasses.replace(interface, mac=text)
        if side == "a":
            self._editor.update_link(link_id, a=changed)
        else:
            self._editor.update_link(link_id, b=changed)

    def _refuse(self, cell: QTableWidgetItem, kept: str, error: str) -> None:
        """Put back what the cell held, and say why the edit was refused there and in the status bar."""
        self.blockSignals(True)
        cell.setText(kept)
        cell.setToolTip(error)
        self.blockSignals(False)
        self._editor.status_message.emit(error)
