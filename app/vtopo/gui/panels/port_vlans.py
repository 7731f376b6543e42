"""A switch port's VLANs as a student sets them on a real switch: not set, access (one VLAN) or trunk (VLANs tagged,
an optional native VLAN), for the inspector's VLANs table and the link's end."""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QLabel, QLineEdit, QSpinBox, QWidget

from vtopo.gui.panels.setting_editors import FieldEditor, mark_invalid
from vtopo.gui.style.wheel_guard import guard_wheel
from vtopo.kinds.contract import PortVlans
from vtopo.kinds.settings import SettingField
from vtopo.kinds.vlans import HIGHEST_VLAN, LOWEST_VLAN, parse_port

MODES = {"": "not set", "access": "access", "trunk": "trunk"}
NOT_SET = {True: "not set: VLAN 1 untagged", False: "not set: passes every frame as it comes"}
"""What an unlisted port does: once the switch lists a port (True), an access port in VLAN 1; before, no VLANs."""


class PortVlansRow(QWidget):
    """Mode, VLANs and native VLAN of one port. `changed` fires when the user is done changing them (mode chosen,
    VLANs typed and Enter or focus out, native VLAN set) and they are valid."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mode = QComboBox()
        for mode, text in MODES.items():
            self.mode.addItem(text, mode)
        self.mode.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.mode.setMinimumContentsLength(len("access"))  # its list shows what "not set" means in full
        self.mode.setToolTip("access: the port is in one VLAN, its frames untagged; trunk: it carries several VLANs, "
                             "their frames tagged (802.1Q)")
        self.vlans = QLineEdit()
        self.vlans.setToolTip("access: the VLAN (10); trunk: the VLANs it carries tagged (10,20)")
        self.native = QSpinBox()
        self.native.setRange(0, HIGHEST_VLAN)
        self.native.setSpecialValueText("none")
        self.native.setKeyboardTracking(False)
        self.native.setToolTip("A trunk's native VLAN: the one its untagged frames belong to (none: it drops them)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.mode)
        layout.addWidget(self.vlans, 1)
        layout.addWidget(self.native)
        self._showing = False
        self.mode.activated.connect(self._mode_chosen)
        self.vlans.textEdited.connect(lambda: mark_invalid(self.vlans, self.error()))
        self.vlans.editingFinished.connect(self._done)
        self.native.valueChanged.connect(self._done)

    def show_vlans(self, vlans: PortVlans | None, others_listed: bool) -> None:
        """Show a port's VLANs (None: not set); `others_listed`: whether the switch lists other ports, which makes
        this one, not set, an access port in VLAN 1."""
        self._showing = True
        try:
            self.mode.setItemText(0, NOT_SET[others_listed])
            mode = "" if vlans is None else "trunk" if vlans.trunk else "access"
            self.mode.setCurrentIndex(self.mode.findData(mode))
            if not self.vlans.hasFocus():
                numbers = (vlans.tagged if vlans.trunk else (vlans.untagged,)) if vlans is not None else ()
                self.vlans.setText(",".join(map(str, numbers)))
            self.native.setValue((vlans.untagged or 0) if vlans is not None and vlans.trunk else 0)
            self._enable()
            mark_invalid(self.vlans, self.error())
        finally:
            self._showing = False

    def port_vlans(self) -> PortVlans | None:
        """The VLANs set (None: not set); only when error() is empty."""
        mode = self.mode.currentData()
        if not mode:
            return None
        numbers = self._numbers()
        if mode == "access":
            return PortVlans(numbers[0])
        native = self.native.value() or None
        return PortVlans(native, tuple(sorted(set(numbers) - {native})))

    def error(self) -> str:
        mode = self.mode.currentData()
        if not mode:
            return ""
        try:
            numbers = self._numbers()
        except ValueError:
            return "write VLAN numbers, e.g. 10 (access) or 10,20 (trunk)"
        if not numbers:
            return "an access port is in one VLAN, e.g. 10" if mode == "access" else "a trunk carries VLANs: 10,20"
        if mode == "access" and len(numbers) > 1:
            return "an access port is in one VLAN: make it a trunk to carry several"
        outside = [n for n in numbers if not LOWEST_VLAN <= n <= HIGHEST_VLAN]
        if outside:
            return f"VLAN {outside[0]} is outside {LOWEST_VLAN}-{HIGHEST_VLAN} (0 means no VLAN, 4095 is reserved)"
        return ""

    def _numbers(self) -> list[int]:
        return [int(part) for part in self.vlans.text().replace(" ", "").split(",") if part]

    def _enable(self) -> None:
        mode = self.mode.currentData()
        self.vlans.setEnabled(bool(mode))
        self.native.setEnabled(mode == "trunk")
        self.vlans.setPlaceholderText({"": "", "access": "VLAN, e.g. 10", "trunk": "VLANs, e.g. 10,20"}[mode])

    def _mode_chosen(self) -> None:
        self._enable()
        if self.mode.currentData() and not self.vlans.text().strip():
            self.vlans.setFocus()  # the VLANs come next; committed when typed
            return
        self._done()

    def _done(self) -> None:
        if self._showing:
            return
        error = self.error()
        mark_invalid(self.vlans, error)
        if not error:
            self.changed.emit()


class PortVlansTable(QWidget):
    """A switch's VLANs, a row per port: its linked ports, and any other port its setting lists."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: dict[str, PortVlansRow] = {}
        self._labels: list[QLabel] = []
        self._unreadable: dict[str, str] = {}  # ports whose text the controls cannot show: kept as written
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._head = QLabel("port: mode, VLANs, native VLAN")
        self._grid.addWidget(self._head, 0, 0, 1, 2)
        self._empty = QLabel("no port linked yet")
        self._grid.addWidget(self._empty, 1, 0, 1, 2)

    def show_ports(self, ports: list[str], vlans: dict[str, str]) -> None:
        """One row per port (rebuilt only when the ports change, so a field being typed in keeps its focus)."""
        ports = sorted({*ports, *vlans}, key=natural_order)
        if ports != list(self.rows):
            self._rebuild(ports)
        self._unreadable = {}
        for port, row in self.rows.items():
            parsed = parsed_port(vlans.get(port))
            if parsed is None and port in vlans:
                self._unreadable[port] = vlans[port]
            row.show_vlans(parsed, bool(set(vlans) - {port}))

    def _rebuild(self, ports: list[str]) -> None:
        for widget in [*self._labels, *self.rows.values()]:
            widget.deleteLater()
        self.rows, self._labels = {}, []
        for index, port in enumerate(ports):
            row = PortVlansRow()
            row.changed.connect(self.changed)
            self._labels.append(QLabel(port))
            self._grid.addWidget(self._labels[-1], index + 1, 0)
            self._grid.addWidget(row, index + 1, 1)
            self.rows[port] = row
        self._empty.setVisible(not ports)
        self._head.setVisible(bool(ports))
        guard_wheel(self, [widget for row in self.rows.values() for widget in (row.mode, row.native)])

    def value(self) -> dict[str, str]:
        """The VLANs setting: each port set, and as written each one whose text the controls could not show."""
        value = {}
        for port, row in self.rows.items():
            vlans = row.port_vlans()
            if vlans is not None:
                value[port] = str(vlans)
            elif port in self._unreadable:
                value[port] = self._unreadable[port]
        return value

    def error(self) -> str:
        return next((f"{port}: {error}" for port, row in self.rows.items() if (error := row.error())), "")


def parsed_port(text: str | None) -> PortVlans | None:
    """A port's VLANs as the setting writes them; None for none, or for a text the controls cannot show (the
    Problems panel names it)."""
    if text is None:
        return None
    try:
        return parse_port(text)[0]
    except ValueError:
        return None


def natural_order(port: str) -> tuple[str, int]:
    """p2 before p10."""
    stem = port.rstrip("0123456789")
    return stem, int(port[len(stem):] or 0)


class PortVlansEditor(FieldEditor):
    """A switch kind's VLANs setting, as a table of its ports; `linked_ports` names the shown node's linked ports."""

    widget: PortVlansTable

    def __init__(self, field: SettingField) -> None:
        super().__init__(field, PortVlansTable())
        self.widget.setToolTip("")  # each control has its own; the setting's help is on its label
        self.linked_ports: Callable[[], list[str]] = list
        self.widget.changed.connect(self._commit)

    def value(self) -> dict[str, str]:
        return self.widget.value()

    def error(self) -> str:
        return self.widget.error()

    def _show(self, value: Any) -> None:
        self.widget.show_ports(self.linked_ports(), value if isinstance(value, dict) else {})
