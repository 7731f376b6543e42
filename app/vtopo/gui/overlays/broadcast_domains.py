"""The broadcast-domain view: each L2 domain's links in a colour of its own, and a legend naming its subnets and
members. The domains come with each analysis of the lab (computed off the GUI thread)."""
from __future__ import annotations

import html

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import QDockWidget, QLabel

from vtopo.compile.broadcast_domains import Domain
from vtopo.gui.document.check_process import AnalysisReply
from vtopo.gui.canvas.scene import TopologyScene

DOMAIN_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
STRIPED = "<p>A trunk is in the domain of each VLAN it carries: it is striped in their colours.</p>"
OFF = "View ▸ Broadcast domains colours each L2 broadcast domain; routers are the borders between them."


def domain_color(domain: Domain) -> QColor:
    return QColor(DOMAIN_COLORS[(domain.number - 1) % len(DOMAIN_COLORS)])


class DomainView(QObject):
    def __init__(self, scene: TopologyScene, dock: QDockWidget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._scene = scene
        self._dock = dock
        self.legend = QLabel(OFF, wordWrap=True, textFormat=Qt.TextFormat.RichText,
                             alignment=Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        dock.setWidget(self.legend)
        self.toggle = QAction("&Broadcast domains", self, checkable=True)
        self.toggle.toggled.connect(self._toggled)
        self._analysis: AnalysisReply | None = None

    def show_analysis(self, analysis: AnalysisReply) -> None:
        self._analysis = analysis
        if self.toggle.isChecked():
            self._apply()

    def _toggled(self, on: bool) -> None:
        self._apply()
        if on:
            self._dock.show()
            self._dock.raise_()

    def _apply(self) -> None:
        on = self.toggle.isChecked()
        domains = self._analysis.domains() if on and self._analysis is not None else []
        tints: dict[str, list[QColor]] = {}
        for domain in domains:
            for link in domain.link_ids:
                tints.setdefault(link, []).append(domain_color(domain))  # a trunk: a colour per VLAN it carries
        for link_id, item in self._scene.links.items():
            item.set_tints(tuple(tints.get(link_id, ())))
        self.legend.setText(self._legend(domains) if on else OFF)

    @staticmethod
    def _legend(domains: list[Domain]) -> str:
        if not domains:
            return "No broadcast domain: the lab has no valid interfaces yet (see Problems)."
        with_vlans = any(domain.vlans for domain in domains)
        rows = []
        for domain in domains:
            subnets = ", ".join(map(str, domain.subnets)) or "no subnet"
            members = ", ".join(m.name for m in domain.members)
            via = f" via {', '.join(domain.switches)}" if domain.switches else ""
            vlan = f"<td>{html.escape(domain.vlan_names)}</td>" if with_vlans else ""
            rows.append(f"<tr><td><span style='color:{domain_color(domain).name()}'>■■</span> "
                        f"<b>domain {domain.number}</b></td>{vlan}<td>{html.escape(subnets)}</td>"
                        f"<td>{html.escape(members)}{html.escape(via)}</td></tr>")
        vlan_head = "<th align='left'>VLAN</th>" if with_vlans else ""
        return (f"<table cellspacing='6'><tr><th align='left'>Domain</th>{vlan_head}<th align='left'>Subnets</th>"
                "<th align='left'>Members</th></tr>" + "".join(rows) + "</table>" + (STRIPED if with_vlans else ""))
