"""Checking and compiling the lab off the GUI thread, debounced after edits. Panels show the latest result.

Moving nodes and editing notes change nothing the checks read, so those edits start no check: dropping a
hundred dragged nodes of a 2,000-node lab leaves the Problems panel as it was.
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from vtopo.compile.plan import Plan
from vtopo.compile.domains import Domain, broadcast_domains_of
from vtopo.gui.document.editor import Editor
from vtopo.gui.workers import Worker, serial_pool
from vtopo.lab import context_of, plan_of, problems_of
from vtopo.model.problems import LabError, Problem, errors_in
from vtopo.model.topology import Annotation, Node, Topology

DEBOUNCE_MS = 250


@dataclass(frozen=True)
class Analysis:
    generation: int
    problems: list[Problem] = field(default_factory=list)
    plan: Plan | None = None
    domains: list[Domain] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return errors_in(self.problems)


def analyse(generation: int, topology: Topology) -> Analysis:
    try:
        problems = problems_of(topology)
        if errors_in(problems):
            return Analysis(generation, problems)
        return Analysis(generation, problems, plan_of(topology), broadcast_domains_of(context_of(topology)))
    except LabError as error:
        return Analysis(generation, error.problems)
    except Exception as error:  # a plugin's check may fail in any way: show it as a problem, with where it broke
        where = traceback.extract_tb(error.__traceback__)[-1]
        return Analysis(generation, [Problem(f"internal error while checking the lab: {error!r} "
                                             f"({where.filename}:{where.lineno}); please report it")])


def _checked_part(node: Node) -> tuple[str, str, dict[str, Any]]:
    return node.name, node.kind, node.settings


class LabAnalyzer(QObject):
    """Re-checks the lab a moment after the last edit; stale results (from older edits) are dropped."""

    analysed = Signal(object)
    busy_changed = Signal(bool)

    def __init__(self, editor: Editor, delay_ms: int = DEBOUNCE_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self._generation = 0
        self._pool = serial_pool(self)
        self._workers: set[Worker] = set()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self.run_now)
        self.latest: Analysis | None = None
        self._checked_nodes: dict[str, tuple[str, str, dict[str, Any]]] = {}  # what the last check read of each node
        editor.edited.connect(self._edited)
        editor.topology_replaced.connect(self.run_now)
        self._timer.start()

    @property
    def pending(self) -> bool:
        return self._timer.isActive() or self.latest is None or self.latest.generation != self._generation

    def _edited(self, subject: object) -> None:
        if isinstance(subject, Annotation):
            return
        if (isinstance(subject, Node) and self._editor.topology.nodes.get(subject.id) is subject
                and self._checked_nodes.get(subject.id) == _checked_part(subject)):
            return  # moved only
        self._timer.start()

    def run_now(self) -> None:
        self._timer.stop()
        self._generation += 1
        self.busy_changed.emit(True)
        generation, topology = self._generation, self._editor.topology.copy()
        self._checked_nodes = {node.id: _checked_part(node) for node in topology.nodes.values()}
        worker = Worker(lambda _report: analyse(generation, topology))
        worker.returned.connect(self._finished)
        worker.finished.connect(lambda: self._workers.discard(worker))
        self._workers.add(worker)
        worker.start(self._pool)

    def _finished(self, analysis: Analysis) -> None:
        if analysis.generation != self._generation:
            return
        self.latest = analysis
        self.busy_changed.emit(False)
        self.analysed.emit(analysis)

    def shutdown(self) -> None:
        self._timer.stop()
        self._pool.waitForDone()
