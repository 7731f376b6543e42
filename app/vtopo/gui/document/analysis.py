"""Checking and compiling the lab in the designer's checker process, debounced after edits. Panels show the latest
result.

The GUI thread does nothing in proportion to the lab: it hands a pool thread the lists of the lab's nodes and links,
which that thread pickles and sends to the checker (check_process, a child process below the designer's priority once
it has checked the lab opened); another thread reads the checker's answers. An edit while the checker works makes its
result stale: a newer check is sent after the debounce, and the checker drops the stale one at its next step (copy,
check, plan, domains). An edit the pickling met half-way always sends a newer check, for every edit the checks read
starts one.
Moving nodes and editing notes change nothing the checks read, so those edits start no check: dropping a hundred
dragged nodes of a 2,000-node lab leaves the Problems panel as it was.
The hand-back is small too: a result stays pickled until a panel shows a part of it (AnalysisReply).
"""
from __future__ import annotations

import atexit
import pickle
import subprocess
from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer, Signal

from vtopo.gui.document.check_process import (COMMAND, AnalysisReply, CheckRequest, ExplainRequest, ExplanationReply,
                                              read_frame, write_frame)
from vtopo.gui.document.checking import Analysis
from vtopo.gui.document.editor import Editor
from vtopo.gui.workers import Worker, serial_pool
from vtopo.model.problems import Problem
from vtopo.model.topology import Annotation, Node

DEBOUNCE_MS = 250
FIRST_CHECK_MS_PER_NODE = 0.5
"""A newly opened lab is checked once it is painted: a moment later, longer for a bigger lab (1 s at 2,000 nodes)."""
STOP_SECONDS = 5.0  # how long the checker has to end once the designer closes
CheckedPart = tuple[str, str, bytes]
"""What a check reads of a node: its name, its kind and its settings pickled. A tuple that holds a dict stays in the
cycle collector's sight, and 2,000 of them made with each check would soon have it scan the designer's whole heap."""


def _checked_part(node: Node) -> CheckedPart:
    return node.name, node.kind, pickle.dumps(node.settings)


class LabAnalyzer(QObject):
    """Re-checks the lab a moment after the last edit; stale results (from older edits) are dropped. Asks the
    checker for the script of some nodes (`explain`), answered through `explained`."""

    analysed = Signal(object)
    busy_changed = Signal(bool)
    explained = Signal(object)
    """An ExplanationReply of the latest analysis."""

    def __init__(self, editor: Editor, delay_ms: int = DEBOUNCE_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self._generation = 0
        self._pool = serial_pool(self)  # sends to the checker, one request after the other
        self._reading = serial_pool(self)  # reads the checker's replies
        self._workers: set[Worker] = set()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._delay_ms = delay_ms
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self.run_now)
        self.latest: AnalysisReply | None = None
        self._checked_nodes: dict[str, CheckedPart] = {}  # what the last check read of each node
        self._sent: dict[int, dict[str, CheckedPart]] = {}  # what each check sent read, by generation
        self._checker: subprocess.Popen[bytes] | None = None
        self._start_checker()
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
        self._timer.start(max(self._delay_ms, int(len(self._editor.topology.nodes) * FIRST_CHECK_MS_PER_NODE)))

    def run_soon(self) -> None:
        """Check now rather than after the debounce, unless a check of the latest edit is under way."""
        if self._timer.isActive():
            self.run_now()

    def run_now(self) -> None:
        self._timer.stop()
        self._timer.setInterval(self._delay_ms)
        checker = self._checker or self._start_checker()
        self._generation += 1
        self.busy_changed.emit(True)
        generation, topology = self._generation, self._editor.topology
        nodes, links = list(topology.nodes.values()), list(topology.links.values())

        def send(_report: Callable[[Any], None]) -> tuple[int, dict[str, CheckedPart]] | None:
            if generation != self._generation:
                return None
            request = CheckRequest.of(generation, topology, nodes, links)
            read = {node.id: _checked_part(node) for node in nodes}
            self._write(checker, request)
            return generation, read

        self._start_job(send, self._sent_check, lambda _error: self._timer.start())  # met an edit half-way: again

    def explain(self, owners: set[str]) -> None:
        """Ask the checker for the script of `owners` (nodes and links, as plans name them) in the latest plan."""
        if self.latest is None or not self.latest.compiled or self._checker is None:
            return
        request, checker = ExplainRequest(self.latest.generation, frozenset(owners)), self._checker
        self._start_job(lambda _report: self._write(checker, request))

    def _start_job(self, job: Callable[[Callable[[Any], None]], Any], returned: Callable[[Any], None] | None = None,
                   errored: Callable[[Any], None] | None = None) -> None:
        worker = Worker(job)
        if returned is not None:
            worker.returned.connect(returned)
        if errored is not None:
            worker.errored.connect(errored)
        worker.finished.connect(lambda: self._workers.discard(worker))
        self._workers.add(worker)
        worker.start(self._pool)

    @staticmethod
    def _write(checker: subprocess.Popen[bytes], request: object) -> None:
        assert checker.stdin is not None
        try:
            write_frame(checker.stdin, request)
        except (BrokenPipeError, ValueError):  # the checker has ended (or was closed): its reader says so
            pass

    def _sent_check(self, sent: tuple[int, dict[str, CheckedPart]] | None) -> None:
        if sent is not None:
            generation, read = sent
            self._sent = {g: r for g, r in self._sent.items() if g > generation - 2}
            self._sent[generation] = read

    def _start_checker(self) -> subprocess.Popen[bytes]:
        checker = self._checker = subprocess.Popen(COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert checker.stdin is not None
        # a designer that ends without shutdown (an uncaught error) ends its checker too: the exit waits for the reader
        atexit.register(checker.stdin.close)
        worker = Worker(lambda report: self._read_replies(checker, report))
        worker.yielded.connect(self._received)
        worker.returned.connect(lambda code: self._checker_ended(checker, code))
        worker.finished.connect(lambda: self._workers.discard(worker))
        self._workers.add(worker)
        worker.start(self._reading)
        return checker

    @staticmethod
    def _read_replies(checker: subprocess.Popen[bytes], report: Callable[[Any], None]) -> int:
        """On a pool thread, until the checker ends: each reply, unpickled there, and then its exit code."""
        assert checker.stdout is not None
        while (reply := read_frame(checker.stdout.fileno())) is not None:
            report(reply)
        return checker.wait()

    def _received(self, reply: AnalysisReply | ExplanationReply) -> None:
        if isinstance(reply, ExplanationReply):
            if self.latest is not None and reply.generation == self.latest.generation:
                self.explained.emit(reply)
        elif reply.generation == self._generation:
            self._checked_nodes = self._sent.pop(reply.generation, {})
            self._show(reply)

    def _checker_ended(self, checker: subprocess.Popen[bytes], code: int) -> None:
        """The checker ended while the designer runs (it closes it only in shutdown): say so, and start another one
        with the next edit's check."""
        if checker is not self._checker:
            return
        self._checker = None
        ended = Problem(f"the designer's checker ended (exit code {code}) without checking the lab; it starts again "
                        "with the next edit")
        self._show(AnalysisReply.of(Analysis(self._generation, [ended])))

    def _show(self, analysis: AnalysisReply) -> None:
        self.latest = analysis
        self.busy_changed.emit(False)
        self.analysed.emit(analysis)

    def shutdown(self) -> None:
        self._timer.stop()
        self._generation += 1  # a check under way is no longer sent
        self._pool.waitForDone()
        checker, self._checker = self._checker, None
        if checker is not None:
            assert checker.stdin is not None
            checker.stdin.close()  # the checker ends at the end of its requests
            atexit.unregister(checker.stdin.close)
            try:
                checker.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                checker.kill()
        self._reading.waitForDone()
