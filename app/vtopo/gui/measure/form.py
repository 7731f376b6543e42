"""The measure panel's form: which pair of nodes, which address, and the iperf3 options."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from vtopo.measure import MeasureEndpoint, IperfOptions


class MeasureTarget(NamedTuple):
    """A node the panel may measure from or to (as DeployedLab.measurable() gives it), and the addresses it
    can be reached at."""

    endpoint: MeasureEndpoint
    addresses: Sequence[str] = ()

    @property
    def name(self) -> str:
        return self.endpoint.name


PathDescriber = Callable[[str, str, str], str]
"""(source, destination, address) -> a description of the path, e.g. "h1 - s1 - r1 - h2"."""

TargetLike = MeasureTarget | tuple[MeasureEndpoint, Sequence[str]]


class MeasureForm(QWidget):
    """The pair, the address and the options; it knows the targets, not how a run is made."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.targets: dict[str, MeasureTarget] = {}
        self.source_box = QComboBox()
        self.destination_box = QComboBox()
        self.address_box = QComboBox()
        self.address_box.setEditable(True)
        self.address_box.setMinimumContentsLength(14)
        self.destination_box.currentTextChanged.connect(self._fill_addresses)

        self.protocol_box = QComboBox()
        self.protocol_box.addItems(["TCP", "UDP"])
        self.protocol_box.currentTextChanged.connect(self._protocol_changed)
        self.duration_spin = QSpinBox()
        self.duration_spin.setRange(1, 86400)
        self.duration_spin.setValue(10)
        self.duration_spin.setSuffix(" s")
        self.interval_spin = QDoubleSpinBox()
        self.interval_spin.setRange(0.1, 60)
        self.interval_spin.setSingleStep(0.5)
        self.interval_spin.setValue(1.0)
        self.interval_spin.setSuffix(" s")
        self.parallel_spin = QSpinBox()
        self.parallel_spin.setRange(1, 128)
        self.direction_box = QComboBox()
        self.direction_box.addItems(["source → destination", "reverse (-R)", "bidirectional"])
        self.bitrate_edit = QLineEdit()
        self.bitrate_edit.setPlaceholderText("e.g. 100M (UDP default 1M)")
        self.length_edit = QLineEdit()
        self.length_edit.setPlaceholderText("-l, e.g. 128K")
        self.window_edit = QLineEdit()
        self.window_edit.setPlaceholderText("-w, e.g. 4M")
        self.zerocopy_check = QCheckBox("zero-copy (-Z)")
        self._lay_out()
        self._protocol_changed(self.protocol_box.currentText())

    def _lay_out(self) -> None:
        pair = QFormLayout()
        pair.addRow("Source", self.source_box)
        pair.addRow("Destination", self.destination_box)
        pair.addRow("Address", self.address_box)
        options = QGridLayout()
        cells: list[tuple[str, QWidget]] = [
            ("Protocol", self.protocol_box), ("Duration", self.duration_spin),
            ("Interval", self.interval_spin), ("Streams", self.parallel_spin),
            ("Direction", self.direction_box), ("Bitrate", self.bitrate_edit),
            ("Buffer", self.length_edit), ("Window", self.window_edit),
        ]
        for i, (label, widget) in enumerate(cells):
            options.addWidget(QLabel(label), i // 2, (i % 2) * 2)
            options.addWidget(widget, i // 2, (i % 2) * 2 + 1)
        options.addWidget(self.zerocopy_check, len(cells) // 2, 0, 1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(pair)
        layout.addLayout(options)

    def _protocol_changed(self, text: str) -> None:
        tcp = text == "TCP"
        self.zerocopy_check.setEnabled(tcp)
        if not tcp:
            self.zerocopy_check.setChecked(False)

    # -- the pair -------------------------------------------------------------------------------

    def set_targets(self, targets: Sequence[TargetLike]) -> None:
        """The nodes that can be measured, keeping the current choices when they are still there."""
        self.targets = {endpoint.name: MeasureTarget(endpoint, tuple(addresses)) for endpoint, addresses in targets}
        for box in (self.source_box, self.destination_box):
            keep = box.currentText()
            box.blockSignals(True)
            box.clear()
            box.addItems(list(self.targets))
            if keep in self.targets:
                box.setCurrentText(keep)
            box.blockSignals(False)
        if self.destination_box.count() > 1 and self.destination_box.currentText() == self.source_box.currentText():
            self.destination_box.setCurrentIndex(1)
        self._fill_addresses(self.destination_box.currentText())

    def select_pair(self, source: str, destination: str, address: str | None = None) -> None:
        self.source_box.setCurrentText(source)
        self.destination_box.setCurrentText(destination)
        if address is not None:
            self.address_box.setCurrentText(address)

    def _fill_addresses(self, destination: str) -> None:
        target = self.targets.get(destination)
        self.address_box.clear()
        if target is not None:
            self.address_box.addItems(list(target.addresses))

    def source(self) -> MeasureTarget | None:
        return self.targets.get(self.source_box.currentText())

    def destination(self) -> MeasureTarget | None:
        return self.targets.get(self.destination_box.currentText())

    def address(self) -> str:
        return self.address_box.currentText().strip()

    # -- the options ------------------------------------------------------------------------------

    def options(self) -> IperfOptions:
        """The options as the widgets show them."""
        direction = self.direction_box.currentIndex()
        return IperfOptions(
            protocol="udp" if self.protocol_box.currentText() == "UDP" else "tcp",
            duration_s=self.duration_spin.value(),
            interval_s=round(self.interval_spin.value(), 2),
            parallel=self.parallel_spin.value(),
            reverse=direction == 1,
            bidir=direction == 2,
            bitrate=self.bitrate_edit.text().strip() or None,
            length=self.length_edit.text().strip() or None,
            window=self.window_edit.text().strip() or None,
            zerocopy=self.zerocopy_check.isChecked(),
        )
