"""The explain dock: the compiled plan as a commented shell script, for the whole lab or the selection.
It writes the script only while it is shown: the plan of a 2,000-node lab is 30,000 lines."""
from __future__ import annotations

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from vtopo.gui.document.analysis import Analysis
from vtopo.model.topology import Topology

WHOLE_LAB, SELECTION = 0, 1


def owners_for(topology: Topology, node_ids: list[str]) -> set[str]:
    """The plan owners of some nodes: the nodes themselves and every link that touches them."""
    names = {topology.nodes[i].name for i in node_ids if i in topology.nodes}
    owners = {f"node {name}" for name in names}
    owners |= {f"link {topology.describe_link(link)}" for link in topology.links.values()
               if link.a.node in node_ids or link.b.node in node_ids}
    return owners


class ExplainPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scope = QComboBox()
        self.scope.addItems(["Whole lab", "Selected nodes"])
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        top = QHBoxLayout()
        top.addWidget(QLabel("Explain:"))
        top.addWidget(self.scope, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.text)
        self._analysis: Analysis | None = None
        self._topology: Topology | None = None
        self._selected: list[str] = []
        self._shown = True
        self._outdated = False
        self.scope.currentIndexChanged.connect(self._render)

    def show_analysis(self, analysis: Analysis, topology: Topology) -> None:
        self._analysis, self._topology = analysis, topology
        self._render()

    def set_selected_nodes(self, node_ids: list[str]) -> None:
        self._selected = node_ids
        if self.scope.currentIndex() == SELECTION:
            self._render()

    def set_shown(self, shown: bool) -> None:
        """Whether its dock is on screen (a dock behind another one's tab is not)."""
        self._shown = shown
        if shown and self._outdated:
            self._render()

    def _render(self) -> None:
        self._outdated = not self._shown
        if self._outdated:
            return
        analysis, topology = self._analysis, self._topology
        if analysis is None or topology is None:
            self.text.setPlainText("Compiling…")
            return
        if analysis.plan is None:
            lines = ["# The lab has errors, so it does not compile yet:", "#"]
            lines += [f"#   {problem}" for problem in analysis.errors]
            self.text.setPlainText("\n".join(lines))
            return
        owners = None
        if self.scope.currentIndex() == SELECTION:
            if not self._selected:
                self.text.setPlainText("# Select one or more nodes to see only their part of the plan.")
                return
            owners = owners_for(topology, self._selected)
        scroll = self.text.verticalScrollBar().value()
        self.text.setPlainText(analysis.explanation if owners is None else analysis.plan.explain(owners))
        self.text.verticalScrollBar().setValue(scroll)
