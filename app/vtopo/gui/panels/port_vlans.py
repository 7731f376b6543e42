"""A switch port's VLANs as a student sets them on a real switch: not set, access (one VLAN) or trunk (VLANs tagged,
an optional native VLAN), for the link's end; the rules its controls and the inspector's VLANs table share."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLineEdit, QSpinBox, QWidget

from vtopo.gui.panels.setting_editors import mark_invalid
from vtopo.kinds.contract import PortVlans
from vtopo.kinds.vlans import HIGHEST_VLAN, LOWEST_VLAN, parse_port

MODES = {"": "not set", "access": "access", "trunk": "trunk"}
NOT_SET = {True: "not set: VLAN 1 untagged", False: "not set: passes every frame as it comes"}
"""What an unlisted port does: once the switch lists a port (True), an access port in VLAN 1; before, no VLANs."""
MODE_HELP = ("access: the port is in one VLAN, its frames untagged; trunk: it carries several VLANs, their frames "
             "tagged (802.1Q)")
VLANS_HELP = "access: the VLAN (10); trunk: the VLANs it carries tagged (10,20)"
NATIVE_HELP = "A trunk's native VLAN: the one its untagged frames belong to (none: it drops them)"
PLACEHOLDERS = {"": "", "access": "VLAN, e.g. 10", "trunk": "VLANs, e.g. 10,20"}


@dataclass(frozen=True)
class PortChoice:
    """A port's VLANs as its controls hold them: the mode ("" not set), the VLANs as typed, the native VLAN (0:
    none)."""

    mode: str = ""
    vlans: str = ""
    native: int = 0

    @classmethod
    def of(cls, vlans: PortVlans | None) -> PortChoice:
        if vlans is None:
            return cls()
        if not vlans.trunk:
            return cls("access", str(vlans.untagged))
        return cls("trunk", ",".join(map(str, vlans.tagged)), vlans.untagged or 0)

    def error(self) -> str:
        if not self.mode:
            return ""
        try:
            numbers = self._numbers()
        except ValueError:
            return "write VLAN numbers, e.g. 10 (access) or 10,20 (trunk)"
        if not numbers:
            return "an access port is in one VLAN, e.g. 10" if self.mode == "access" else "a trunk carries VLANs: 10,20"
        if self.mode == "access" and len(numbers) > 1:
            return "an access port is in one VLAN: make it a trunk to carry several"
        outside = [n for n in numbers if not LOWEST_VLAN <= n <= HIGHEST_VLAN]
        if outside:
            return f"VLAN {outside[0]} is outside {LOWEST_VLAN}-{HIGHEST_VLAN} (0 means no VLAN, 4095 is reserved)"
        return ""

    def port_vlans(self) -> PortVlans | None:
        """The VLANs set (None: not set); only when error() is empty."""
        if not self.mode:
            return None
        numbers = self._numbers()
        if self.mode == "access":
            return PortVlans(numbers[0])
        native = self.native or None
        return PortVlans(native, tuple(sorted(set(numbers) - {native})))

    def _numbers(self) -> list[int]:
        return [int(part) for part in self.vlans.replace(" ", "").split(",") if part]


def mode_box(not_set: str, parent: QWidget | None = None) -> QComboBox:
    """The choice of a port's mode, `not_set` naming what an unset port does."""
    box = QComboBox(parent)
    for mode, text in MODES.items():
        box.addItem(text, mode)
    box.setItemText(0, not_set)
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(len("access"))  # its list shows what "not set" means in full
    box.setToolTip(MODE_HELP)
    return box


def native_box(parent: QWidget | None = None) -> QSpinBox:
    box = QSpinBox(parent)
    box.setRange(0, HIGHEST_VLAN)
    box.setSpecialValueText("none")
    box.setKeyboardTracking(False)
    box.setToolTip(NATIVE_HELP)
    return box


class PortVlansRow(QWidget):
    """Mode, VLANs and native VLAN of one port. `changed` fires when the user is done changing them (mode chosen,
    VLANs typed and Enter or focus out, native VLAN set) and they are valid."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mode = mode_box(NOT_SET[False])
        self.vlans = QLineEdit()
        self.vlans.setToolTip(VLANS_HELP)
        self.native = native_box()
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
            choice = PortChoice.of(vlans)
            self.mode.setItemText(0, NOT_SET[others_listed])
            self.mode.setCurrentIndex(self.mode.findData(choice.mode))
            if not self.vlans.hasFocus():
                self.vlans.setText(choice.vlans)
            self.native.setValue(choice.native)
            self._enable()
            mark_invalid(self.vlans, self.error())
        finally:
            self._showing = False

    def choice(self) -> PortChoice:
        return PortChoice(str(self.mode.currentData()), self.vlans.text(), self.native.value())

    def port_vlans(self) -> PortVlans | None:
        """The VLANs set (None: not set); only when error() is empty."""
        return self.choice().port_vlans()

    def error(self) -> str:
        return self.choice().error()

    def _enable(self) -> None:
        mode = self.mode.currentData()
        self.vlans.setEnabled(bool(mode))
        self.native.setEnabled(mode == "trunk")
        self.vlans.setPlaceholderText(PLACEHOLDERS[mode])

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
