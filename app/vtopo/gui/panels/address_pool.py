"""The lab's address pool in the inspector: a switch that makes new links take their addresses from it, and its IPv4
and IPv6 networks with the prefix of their subnets. Each change is one undo step; a wrong network is tinted red with
the reason and not kept."""
from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QGridLayout, QLineEdit, QSpinBox, QWidget

from vtopo.gui.document.editor import Editor
from vtopo.gui.panels.setting_editors import mark_invalid
from vtopo.gui.style.wheel_guard import guard_wheel
from vtopo.model.addressing import DEFAULT_POOL, PREFIX_LIMITS, AddressPool


class AddressPoolEditor(QWidget):
    def __init__(self, editor: Editor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self.automatic = QCheckBox("Address new links automatically")
        self.automatic.setToolTip("Each new link's router and host ends take the next free address of their LAN, "
                                  "from the pool below; a host with no gateway takes its LAN's router")
        self.automatic.toggled.connect(self._commit)
        self.networks = {version: QLineEdit() for version in (4, 6)}
        self.prefixes = {version: QSpinBox() for version in (4, 6)}
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.automatic, 0, 0, 1, 2)
        for row, version in enumerate((4, 6), 1):
            network, prefix = self.networks[version], self.prefixes[version]
            network.setPlaceholderText(DEFAULT_POOL if version == 4 else "fd00::/48 (none)")
            network.setToolTip(f"The IPv{version} network new links take their subnets from")
            network.editingFinished.connect(self._commit)
            prefix.setRange(1, PREFIX_LIMITS[version])
            prefix.setPrefix("/")
            prefix.setToolTip(f"The prefix of each IPv{version} subnet a new LAN or router link takes")
            prefix.editingFinished.connect(self._commit)
            layout.addWidget(network, row, 0)
            layout.addWidget(prefix, row, 1)
        guard_wheel(self, list(self.prefixes.values()))

    def show_pool(self, pool: AddressPool) -> None:
        for widget in (self.automatic, *self.networks.values(), *self.prefixes.values()):
            widget.blockSignals(True)
        self.automatic.setChecked(not pool.empty)
        for version, (network, prefix) in ((4, (pool.ipv4, pool.ipv4_prefix)), (6, (pool.ipv6, pool.ipv6_prefix))):
            if not self.networks[version].hasFocus():
                self.networks[version].setText(network)
                mark_invalid(self.networks[version], "")
            self.prefixes[version].setValue(prefix)
        for widget in (self.automatic, *self.networks.values(), *self.prefixes.values()):
            widget.blockSignals(False)

    def pool(self) -> AddressPool:
        """The pool the fields say: the default IPv4 network where the switch is on and no network is given."""
        if not self.automatic.isChecked():
            return AddressPool()
        ipv4, ipv6 = (self.networks[version].text().strip() for version in (4, 6))
        return AddressPool(ipv4 or ("" if ipv6 else DEFAULT_POOL), self.prefixes[4].value(), ipv6,
                           self.prefixes[6].value())

    def _commit(self) -> None:
        pool = self.pool()
        problems = dict(pool.problems())
        for version in (4, 6):
            mark_invalid(self.networks[version], problems.get(f"ipv{version}") or
                         problems.get(f"ipv{version}_prefix", ""))
        if not problems:
            self._editor.set_addressing(pool)
