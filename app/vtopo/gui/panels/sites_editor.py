"""The lab's sites in the designer: each machine the lab may place nodes on, with what ssh uses to reach it
(docs/sites.md). The table is checked as the lab file's sites are, and a site that nodes are placed on cannot go."""
from __future__ import annotations

from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QPushButton, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from vtopo.model.placement import site_problems
from vtopo.model.sites import Site
from vtopo.model.topology import Topology

COLUMNS = (("name", "Name"), ("destination", "SSH destination (user@host)"), ("port", "Port"),
           ("identity", "Identity file"), ("known_hosts", "Known hosts file"), ("address", "Underlay address"))
TIP = ("A site with no SSH destination is this machine: give it only the underlay address the other sites' tunnels "
       "reach it at.")



def site_choices(topology: Topology) -> list[tuple[str, str]]:
    """Each site a node may be placed on, as (label, name): this machine first, then the lab's other sites."""
    return [("this machine", ""), *((f"{name} ({site.destination})", name)
                                    for name, site in topology.sites.items() if not site.local)]


class SitesEditorDialog(QDialog):
    """Accepted, `sites` is the lab's new list of sites."""

    def __init__(self, parent: QWidget, topology: Topology) -> None:
        super().__init__(parent)
        self.setWindowTitle("Sites")
        self._topology = topology
        self.sites: dict[str, Site] = dict(topology.sites)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels([title for _, title in COLUMNS])
        self.table.verticalHeader().hide()
        self.table.setToolTip(TIP)
        for site in topology.sites.values():
            self._add_row(site)
        self.table.itemChanged.connect(self._check)
        self.add_button, self.remove_button = QPushButton("Add site"), QPushButton("Remove site")
        self.add_button.clicked.connect(self._add_site)
        self.remove_button.clicked.connect(self._remove_site)
        self.problems = QLabel()
        self.problems.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        row.addStretch()
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("The machines this lab may place nodes on, each reached over ssh. " + TIP))
        layout.addWidget(self.table)
        layout.addLayout(row)
        layout.addWidget(self.problems)
        layout.addWidget(self.buttons)
        self.resize(820, 320)
        self._check()

    def _add_row(self, site: Site) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        for column, (field, _) in enumerate(COLUMNS):
            value = getattr(site, field)
            self.table.setItem(row, column, QTableWidgetItem(str(value) if value not in ("", None) else ""))

    def _add_site(self) -> None:
        taken = {self._text(row, 0) for row in range(self.table.rowCount())}
        name = next(f"site{number}" for number in range(1, len(taken) + 2) if f"site{number}" not in taken)
        self.table.blockSignals(True)
        self._add_row(Site(name, "root@"))
        self.table.blockSignals(False)
        self.table.setCurrentCell(self.table.rowCount() - 1, 1)
        self._check()

    def _remove_site(self) -> None:
        if (row := self.table.currentRow()) >= 0:
            self.table.removeRow(row)
            self._check()

    def _text(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text().strip() if item is not None else ""

    def _read(self) -> tuple[dict[str, Site], list[str]]:
        sites: dict[str, Site] = {}
        problems = []
        for row in range(self.table.rowCount()):
            values = {field: self._text(row, column) for column, (field, _) in enumerate(COLUMNS)}
            name, port = values.pop("name"), values.pop("port") or "22"
            if not port.isdigit():
                problems.append(f"site {name}: port {port!r} is not a number")
                port = "22"
            if name in sites:
                problems.append(f"site {name}: two sites have this name")
            sites[name] = Site(name, port=int(port), **values)
        return sites, problems

    def _check(self) -> None:
        self.sites, problems = self._read()
        candidate = self._topology.copy()
        candidate.sites = self.sites
        problems += [f"{problem.subject}: {problem.message}" for problem in site_problems(candidate)]
        self.problems.setText("\n".join(problems))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not problems)
