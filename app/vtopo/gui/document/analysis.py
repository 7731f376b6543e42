"""Checking and compiling the lab off the GUI thread, debounced after edits. Panels show the latest result.

The GUI thread does nothing in proportion to the lab: it hands the worker the lists of the lab's nodes and links,
and the worker copies them and checks the copy. An edit while it works makes its result stale: a newer check
starts after the debounce, and the stale one stops at its next step (copy, check, plan, domains) and is dropped.
An edit the copy missed half-way always starts a newer check, for every edit the checks read starts one.
Moving nodes and editing notes change nothing the checks read, so those edits start no check: dropping a hundred
dragged nodes of a 2,000-node lab leaves the Problems panel as it was.
The hand-back is small too: the collector never scans a result (heap.made_to_last), and the result it replaces is
freed on the worker thread, not where the panels let go of it.
"""
from __future__ import annotations

import copy
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer, Signal

from vtopo.compile.compiler import Compiler, StageFailed
from vtopo.compile.domains import Domain, broadcast_domains_of
from vtopo.compile.plan import Plan
from vtopo.gui import heap
from vtopo.gui.document.editor import Editor
from vtopo.gui.workers import Worker, serial_pool
from vtopo.kinds.environment import HostFacts, Trust
from vtopo.lab import explain_sites, plan_of, registry
from vtopo.model.placement import sites_used, spread_over_sites
from vtopo.model.problems import LabError, Problem, errors_in
from vtopo.model.sites import Site
from vtopo.model.topology import Annotation, Link, Node, Topology

DEBOUNCE_MS = 250
FIRST_CHECK_MS_PER_NODE = 0.5
"""A newly opened lab is checked once it is painted: a moment later, longer for a bigger lab (1 s at 2,000 nodes)."""
CheckedPart = tuple[str, str, dict[str, Any]]


@dataclass(frozen=True)
class Analysis:
    generation: int
    problems: list[Problem] = field(default_factory=list)
    plan: Plan | None = None
    domains: list[Domain] = field(default_factory=list)
    explanation: str = ""
    """The whole plan explained (the Explain dock's script), written on the worker thread."""
    site_plans: dict[str, Plan] = field(default_factory=dict)
    """Of a lab spread over sites, each site's plan (`plan` is this machine's): the script is each site's in turn."""

    @property
    def errors(self) -> list[Problem]:
        return errors_in(self.problems)


class Stale(Exception):
    """A newer edit made this check pointless."""


def analyse(generation: int, topology: Topology, wanted: Callable[[], bool] = lambda: True) -> Analysis:
    """Check and compile the lab once: its problems, and when it has no errors its plan and broadcast domains.
    Raises Stale between steps once `wanted` says the result is no longer wanted."""
    def step() -> None:
        if not wanted():
            raise Stale()

    try:
        compiler = Compiler(topology, registry(), HostFacts())
        try:
            compiler.check()
            step()
            domains = broadcast_domains_of(compiler.lab)  # of the whole lab: lowering keeps this site's part only
            step()
            plan = compiler.order(compiler.lower())
        except StageFailed:
            return Analysis(generation, compiler.problems)
        finally:
            compiler.lab.release()
        step()
        if not spread_over_sites(topology):
            return Analysis(generation, compiler.problems, plan, domains, plan.explain())
        from vtopo.sites.spread import tunnel_vnis  # the VNIs a deploy from here would use

        vnis = tunnel_vnis()
        plans = {site: plan_of(topology, HostFacts(), Trust(site=site, tunnel_vnis=vnis))
                 for site in sites_used(topology)}
        step()
        return Analysis(generation, compiler.problems, plan, domains, explain_sites(topology, plans), plans)
    except Stale:
        raise
    except LabError as error:
        return Analysis(generation, error.problems)
    except Exception as error:  # a plugin's check may fail in any way: show it as a problem, with where it broke
        where = traceback.extract_tb(error.__traceback__)[-1]
        return Analysis(generation, [Problem(f"internal error while checking the lab: {error!r} "
                                             f"({where.filename}:{where.lineno}); please report it")])


def _checked_part(node: Node) -> CheckedPart:
    return node.name, node.kind, node.settings


@dataclass(frozen=True)
class _Snapshot:
    """What the GUI thread hands over: the lab's fields and the lists of its objects, not yet copied."""

    generation: int
    lab: Topology
    nodes: list[Node]
    links: list[Link]
    sites: dict[str, Site]

    def copied(self) -> Topology:
        lab = self.lab
        return Topology(name=lab.name, id=lab.id, notes=lab.notes, prefix=lab.prefix,
                        sites=self.sites, nodes={node.id: copy.deepcopy(node) for node in self.nodes},
                        links={link.id: copy.deepcopy(link) for link in self.links},
                        checks=copy.deepcopy(lab.checks), stages=copy.deepcopy(lab.stages),
                        experiment=copy.deepcopy(lab.experiment))


@dataclass(frozen=True)
class _Checked:
    analysis: Analysis
    read: dict[str, CheckedPart]  # what the check read of each node


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
        self._delay_ms = delay_ms
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self.run_now)
        self.latest: Analysis | None = None
        self._checked_nodes: dict[str, CheckedPart] = {}  # what the last check read of each node
        self._lab_replaced = True
        editor.edited.connect(self._edited)
        editor.topology_replaced.connect(self._replaced)
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

    def _replaced(self) -> None:
        self._lab_replaced = True
        self._timer.start(max(self._delay_ms, int(len(self._editor.topology.nodes) * FIRST_CHECK_MS_PER_NODE)))

    def run_soon(self) -> None:
        """Check now rather than after the debounce, unless a check of the latest edit is under way."""
        if self._timer.isActive():
            self.run_now()

    def run_now(self) -> None:
        self._timer.stop()
        self._timer.setInterval(self._delay_ms)
        if self._lab_replaced:  # the new lab is built and painted: out of the collector's sight before checking
            self._lab_replaced = False
            heap.settle()
        self._generation += 1
        self.busy_changed.emit(True)
        topology = self._editor.topology
        snapshot = _Snapshot(self._generation, topology, list(topology.nodes.values()), list(topology.links.values()),
                             dict(topology.sites))
        worker = Worker(lambda _report: self._check(snapshot))
        worker.returned.connect(self._finished)
        worker.errored.connect(lambda _error: self._timer.start())  # the copy met an edit half-way: try again
        worker.finished.connect(lambda: self._workers.discard(worker))
        self._workers.add(worker)
        worker.start(self._pool)

    def _check(self, snapshot: _Snapshot) -> list[_Checked]:
        """On the worker thread. The result is handed over in a list the GUI thread takes it out of (see _finished)."""
        def wanted() -> bool:
            return snapshot.generation == self._generation

        if not wanted():
            return []
        with heap.made_to_last():
            lab = snapshot.copied()
            read = {node.id: _checked_part(node) for node in lab.nodes.values()}
            try:
                return [_Checked(analyse(snapshot.generation, lab, wanted), read)]
            except Stale:
                return []

    def _finished(self, handed: list[_Checked]) -> None:
        checked = handed.pop() if handed else None
        let_go: list[object] = [checked]
        if checked is not None and checked.analysis.generation == self._generation:
            let_go = [self.latest, self._checked_nodes]
            self._checked_nodes = checked.read
            self.latest = checked.analysis
            self.busy_changed.emit(False)
            self.analysed.emit(checked.analysis)
        del checked
        self._free_on_worker(let_go)

    def _free_on_worker(self, let_go: list[object]) -> None:
        """Freeing the previous result (the plan of a 2,000-node lab: 10 ms of deallocation) is the worker's job.
        The GUI thread holds it only in `let_go` (the panels have moved on to the new one), which the worker empties."""
        worker = Worker(lambda _report: let_go.clear())
        worker.finished.connect(lambda: self._workers.discard(worker))
        self._workers.add(worker)
        worker.start(self._pool)

    def shutdown(self) -> None:
        self._timer.stop()
        self._generation += 1  # a running check stops at its next step
        self._pool.waitForDone()
