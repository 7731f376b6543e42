"""The explain dock: the compiled plan as a commented shell script, for the whole lab or the selection.
It writes the script only while it is shown: the plan of a 2,000-node lab is 60,000 lines, of which it changes only
the lines an edit changed (see line_changes). The designer's checker, which holds the plan, writes the script of the
selection when asked (`explanation_wanted`, answered by `show_explanation`)."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from vtopo.gui.document.check_process import AnalysisReply, ExplanationReply
from vtopo.gui.document.line_diff import LineChange, line_changes
from vtopo.gui.panels.line_changes import apply_changes
from vtopo.gui.workers import Worker, serial_pool
from vtopo.model.topology import Topology

WHOLE_LAB, SELECTION = 0, 1
SET_AT_ONCE_CHARS = 100_000  # a text this short is set whole (3 ms); a longer one changes by its changed lines


def owners_for(topology: Topology, node_ids: list[str]) -> set[str]:
    """The plan owners of some nodes: the nodes themselves and every link that touches them."""
    names = {topology.nodes[i].name for i in node_ids if i in topology.nodes}
    owners = {f"node {name}" for name in names}
    owners |= {f"link {topology.describe_link(link)}" for link in topology.links.values()
               if link.a.node in node_ids or link.b.node in node_ids}
    return owners


class ExplainPanel(QWidget):
    explanation_wanted = Signal(object)
    """The script of these owners (a set of plan owners: nodes and links) in the latest analysis is wanted."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scope = QComboBox()
        self.scope.addItems(["Whole lab", "Selected nodes"])
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setUndoRedoEnabled(False)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        top = QHBoxLayout()
        top.addWidget(QLabel("Explain:"))
        top.addWidget(self.scope, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.text)
        self._analysis: AnalysisReply | None = None
        self._topology: Topology | None = None
        self._text = ""  # what the document shows
        self._explained: int | None = None  # the analysis whose whole script it is, if it is one
        self._asked = 0  # the number of the latest text asked for; an older one's changes are dropped
        self._diffs = serial_pool(self)
        self._selected: list[str] = []
        self._owners: frozenset[str] = frozenset()  # whose script the selection scope waits for
        self._shown = True
        self._outdated = False
        self.scope.currentIndexChanged.connect(self._render)

    @property
    def showing(self) -> str:
        """The text the dock shows, without asking the document for it (60,000 lines: 10 ms and more)."""
        return self._text

    def show_analysis(self, analysis: AnalysisReply, topology: Topology) -> None:
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
            self._show("Compiling…")
            return
        if not analysis.compiled:
            lines = ["# The lab has errors, so it does not compile yet:", "#"]
            lines += [f"#   {problem}" for problem in analysis.errors()]
            self._show("\n".join(lines))
            return
        owners = None
        if self.scope.currentIndex() == SELECTION:
            if not self._selected:
                self._show("# Select one or more nodes to see only their part of the plan.")
                return
            owners = owners_for(topology, self._selected)
        if owners is None:
            self._show(analysis.explanation, analysis)
            return
        self._owners = frozenset(owners)
        self.explanation_wanted.emit(owners)

    def show_explanation(self, reply: ExplanationReply) -> None:
        """The checker's script of some owners: shown if it is the selection's, in the scope of the selection."""
        analysis = self._analysis
        if (self._shown and self.scope.currentIndex() == SELECTION and reply.owners == self._owners
                and analysis is not None and reply.generation == analysis.generation):
            self._show(reply.text)

    def _show(self, text: str, explained: AnalysisReply | None = None) -> None:
        """Show `text`, the whole script of `explained` when given: by the lines the checker found changed since the
        script shown, when it is the one they change; at once when it is short; else by the lines a worker finds."""
        self._asked += 1
        generation = explained.generation if explained is not None else None
        if text == self._text:
            self._explained = generation
            return
        if (explained is not None and self._explained is not None and self._explained == explained.changed_from
                and (changes := explained.changes()) is not None):
            apply_changes(self.text.document(), changes)
            self._text, self._explained = text, generation
            return
        if len(text) < SET_AT_ONCE_CHARS and len(self._text) < SET_AT_ONCE_CHARS:
            scroll = self.text.verticalScrollBar().value()
            self.text.setPlainText(text)
            self.text.verticalScrollBar().setValue(scroll)
            self._text, self._explained = text, generation
            return
        asked, shown = self._asked, self._text
        worker = Worker(lambda _report: line_changes(shown, text))
        worker.returned.connect(lambda changes: self._change(asked, text, changes, generation))
        worker.start(self._diffs)

    def _change(self, asked: int, text: str, changes: list[LineChange], generation: int | None) -> None:
        if asked == self._asked:
            apply_changes(self.text.document(), changes)
            self._text, self._explained = text, generation
