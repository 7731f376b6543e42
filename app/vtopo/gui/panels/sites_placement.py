"""Placement help in the designer: the split over two sites that `vtopo place` suggests (VM memory balanced, few
links between the sites), shown node by node for the user to accept or not."""
from __future__ import annotations

from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from vtopo.gui.panels.sites_editor import site_choices
from vtopo.kinds.contract import resources_of
from vtopo.model.problems import LabError
from vtopo.model.topology import Topology
from vtopo.sites.place import Placement, suggest


class SitesPlacementDialog(QDialog):
    """Two sites to choose, and the placement suggested for them; accepted, `placement` is what to apply."""

    def __init__(self, parent: QWidget, topology: Topology) -> None:
        super().__init__(parent)
        self.setWindowTitle("Suggest placement over sites")
        self._topology = topology
        self.placement: Placement | None = None
        self._labels = {name: label for label, name in site_choices(topology)}
        self.first, self.second = QComboBox(), QComboBox()
        for combo, chosen in ((self.first, 0), (self.second, 1)):
            for name, label in self._labels.items():
                combo.addItem(label, name)
            combo.setCurrentIndex(chosen)
            combo.currentIndexChanged.connect(self._suggest)
        form = QFormLayout()
        form.addRow("Split between", self.first)
        form.addRow("and", self.second)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Node", "Site", "VM memory"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.accept_button = self.buttons.addButton("Place the nodes", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.summary)
        layout.addWidget(self.table)
        layout.addWidget(self.buttons)
        self.resize(520, 480)
        self._suggest()

    def _suggest(self) -> None:
        from vtopo.compile.resolve import resolve
        from vtopo.lab import registry

        first, second = str(self.first.currentData()), str(self.second.currentData())
        self.placement = None
        self.table.setRowCount(0)
        self.accept_button.setEnabled(False)
        if first == second:
            self.summary.setText("Choose two different sites.")
            return
        try:
            context = resolve(self._topology, registry()).valid().lab
        except LabError as error:
            self.summary.setText(f"The lab has problems to fix first: {error}")
            return
        self.placement = suggest(context, first, second)
        memory = ", ".join(f"{self._labels[name]} {mb:,} MiB" for name, mb in self.placement.memory_mb.items())
        self.summary.setText(f"{self.placement.crossing} link(s) between the two sites, each a tunnel. VM memory: "
                             f"{memory}.")
        rows = sorted(self.placement.sites.items(), key=lambda item: (item[1], self._topology.nodes[item[0]].name))
        self.table.setRowCount(len(rows))
        for row, (node_id, site) in enumerate(rows):
            megabytes = resources_of(context.nodes[node_id])[0]
            for column, text in enumerate((self._topology.nodes[node_id].name, self._labels[site],
                                           f"{megabytes:,} MiB" if megabytes else "")):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        self.accept_button.setEnabled(True)
