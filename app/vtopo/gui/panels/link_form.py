"""The link part of the inspector: each end's interface (name, MAC, MTU, addresses, 802.1Q subinterfaces, DHCP) and
the impairment."""
from __future__ import annotations

from typing import Callable

from PySide6.QtWidgets import (QCheckBox, QDoubleSpinBox, QFormLayout, QGroupBox, QLineEdit, QSpinBox, QVBoxLayout,
                               QWidget)

from vtopo.gui.document.editor import Editor
from vtopo.gui.panels.interface_text import (EXAMPLE, address_error, parse_subinterfaces, subinterface_text,
                                             subinterfaces_error)
from vtopo.gui.panels.port_vlans import PortVlansRow, parsed_port
from vtopo.gui.panels.setting_editors import LinesEdit, mark_invalid
from vtopo.lab_terms import MAX_INTERFACE_NAME
from vtopo.model.rules import INTERFACE_NAME, MAC_ADDRESS
from vtopo.model.topology import Impairment, Interface


class EndEditor(QGroupBox):
    """One end of a link: its interface, and at a switch that keeps VLANs the port's VLANs."""

    def __init__(self, on_commit: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vlans = PortVlansRow()
        self.name = QLineEdit()
        self.name.setPlaceholderText("the port name")
        self.mac = QLineEdit()
        self.mac.setPlaceholderText("chosen by vtopo")
        self.mtu = QSpinBox()
        self.mtu.setRange(0, 65535)
        self.mtu.setSpecialValueText("default")
        self.mtu.setKeyboardTracking(False)
        self.addresses = LinesEdit()
        self.addresses.setPlaceholderText("one per line, e.g. 10.0.0.1/24")
        self.subinterfaces = LinesEdit()
        self.subinterfaces.setPlaceholderText(f"802.1Q, one a line, e.g. {EXAMPLE}")
        self.dhcp = QCheckBox("address from a DHCP server")
        self.dhcp.setToolTip("The node runs a DHCP client on this interface (containers and routers)")
        form = QFormLayout(self)
        form.addRow("Interface", self.name)
        form.addRow("MAC", self.mac)
        form.addRow("MTU", self.mtu)
        form.addRow("Addresses", self.addresses)
        form.addRow("Subinterfaces", self.subinterfaces)
        form.addRow("DHCP", self.dhcp)
        form.addRow("VLANs", self.vlans)
        self._form = form
        self.name.textEdited.connect(lambda: mark_invalid(self.name, self.name_error()))
        self.mac.textEdited.connect(lambda: mark_invalid(self.mac, self.mac_error()))
        self.addresses.textChanged.connect(lambda: mark_invalid(self.addresses, address_error(self.addresses.lines())))
        self.name.editingFinished.connect(on_commit)
        self.mac.editingFinished.connect(on_commit)
        self.mtu.valueChanged.connect(on_commit)
        self.subinterfaces.textChanged.connect(lambda: mark_invalid(self.subinterfaces, self.subinterfaces_error()))
        self.addresses.editing_finished.connect(on_commit)
        self.subinterfaces.editing_finished.connect(on_commit)
        self.dhcp.toggled.connect(on_commit)

    def name_error(self) -> str:
        name = self.name.text().strip()
        if not name or (INTERFACE_NAME.fullmatch(name) and len(name) <= MAX_INTERFACE_NAME):
            return ""
        return f"up to {MAX_INTERFACE_NAME} letters, digits, '.', '-' or '_'"

    def mac_error(self) -> str:
        mac = self.mac.text().strip()
        return "" if not mac or MAC_ADDRESS.fullmatch(mac) else "write a MAC as six hex pairs, e.g. 02:00:00:00:00:01"

    def subinterfaces_error(self) -> str:
        return subinterfaces_error(self.subinterfaces.lines())

    def error(self) -> str:
        return (self.name_error() or self.mac_error() or address_error(self.addresses.lines())
                or self.subinterfaces_error())

    def show_end(self, title: str, interface: Interface, vlans: dict[str, str] | None, port: str,
                 takes_addresses: bool) -> None:
        """The end's interface; `vlans`: its switch's VLANs setting (None where the node keeps no VLANs);
        `takes_addresses`: whether the node's port holds addresses (a switch's port does not: no box)."""
        self.setTitle(title)
        self._form.setRowVisible(self.addresses, takes_addresses)
        self._form.setRowVisible(self.subinterfaces, takes_addresses)
        self._form.setRowVisible(self.dhcp, takes_addresses)
        self._form.setRowVisible(self.vlans, vlans is not None)
        if vlans is not None:
            self.vlans.show_vlans(parsed_port(vlans.get(port)), bool(set(vlans) - {port}))
        widgets = (self.name, self.mac, self.mtu, self.addresses, self.subinterfaces, self.dhcp)
        for widget in widgets:
            widget.blockSignals(True)
        if not self.name.hasFocus():
            self.name.setText(interface.name)
        if not self.mac.hasFocus():
            self.mac.setText(interface.mac)
        self.mtu.setValue(interface.mtu)
        self.dhcp.setChecked(interface.dhcp)
        if not self.addresses.hasFocus():
            self.addresses.setPlainText("\n".join(interface.addresses))
        if not self.subinterfaces.hasFocus():
            self.subinterfaces.setPlainText("\n".join(map(subinterface_text, interface.subinterfaces)))
        for widget in widgets:
            widget.blockSignals(False)
        for widget, error in ((self.name, self.name_error()), (self.mac, self.mac_error()),
                              (self.addresses, address_error(self.addresses.lines())),
                              (self.subinterfaces, self.subinterfaces_error())):
            mark_invalid(widget, error)

    def interface(self) -> Interface:
        return Interface(self.name.text().strip(), self.mac.text().strip().lower(), self.mtu.value(),
                         self.addresses.lines(), parse_subinterfaces(self.subinterfaces.lines()), self.dhcp.isChecked())


class LinkForm(QWidget):
    def __init__(self, editor: Editor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self.link_id = ""
        self.first = EndEditor(self._commit)  # the ends in a stable order, whichever way the link was drawn
        self.second = EndEditor(self._commit)
        self._sides = ("a", "b")  # which end of the link each shows
        self.first.vlans.changed.connect(lambda: self._commit_vlans(0))
        self.second.vlans.changed.connect(lambda: self._commit_vlans(1))
        self.impairment = QGroupBox("Impairment (netem/tbf, both directions)")
        self.delay, self.jitter, self.loss, self.rate = (QDoubleSpinBox() for _ in range(4))
        form = QFormLayout(self.impairment)
        for spin, label, suffix, maximum in ((self.delay, "Delay", " ms", 60_000), (self.jitter, "Jitter", " ms", 60_000),
                                             (self.loss, "Loss", " %", 100), (self.rate, "Rate", " Mbit/s", 100_000)):
            spin.setRange(0, maximum)
            spin.setSuffix(suffix)
            spin.setSpecialValueText("off")
            spin.setKeyboardTracking(False)
            spin.valueChanged.connect(self._commit)
            form.addRow(label, spin)
        layout = QVBoxLayout(self)
        layout.addWidget(self.first)
        layout.addWidget(self.second)
        layout.addWidget(self.impairment)
        layout.addStretch(1)
        self._showing = False

    def show_link(self, link_id: str) -> None:
        topology = self._editor.topology
        link = topology.links[link_id]
        self.link_id = link_id
        self._showing = True
        try:
            ends = sorted((("a", link.a, self._takes_addresses(link.a.node)),
                           ("b", link.b, self._takes_addresses(link.b.node))),
                          key=lambda side: (not side[2], topology.nodes[side[1].node].name, side[1].port))
            self._sides = (ends[0][0], ends[1][0])
            for end_editor, (_side, end, takes_addresses) in zip((self.first, self.second), ends):
                node = topology.nodes[end.node]
                end_editor.show_end(f"{node.name} : {end.port}", end.interface, self._editor.vlans_of(node), end.port,
                                    takes_addresses)
            for spin, value in ((self.delay, link.impairment.delay_ms), (self.jitter, link.impairment.jitter_ms),
                                (self.loss, link.impairment.loss_pct), (self.rate, link.impairment.rate_mbit)):
                spin.setValue(value)
        finally:
            self._showing = False

    def _commit(self) -> None:
        if self._showing or self.link_id not in self._editor.topology.links:
            return
        impairment = Impairment(self.delay.value(), self.jitter.value(), self.loss.value(), self.rate.value())
        ends = {side: None if end_editor.error() else end_editor.interface()
                for side, end_editor in zip(self._sides, (self.first, self.second))}
        self._editor.update_link(self.link_id, a=ends["a"], b=ends["b"], impairment=impairment)

    def _takes_addresses(self, node_id: str) -> bool:
        kind = self._editor.registry.get(self._editor.topology.nodes[node_id].kind)
        return kind is None or kind.ports_take_addresses

    def _commit_vlans(self, shown: int) -> None:
        """The VLANs of the end the `shown`th editor shows, into its switch's setting."""
        link = self._editor.topology.links.get(self.link_id)
        if self._showing or link is None:
            return
        end = link.a if self._sides[shown] == "a" else link.b
        self._editor.set_port_vlans(end.node, end.port, (self.first, self.second)[shown].vlans.port_vlans())
