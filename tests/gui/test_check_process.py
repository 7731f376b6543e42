"""The designer's checker, driven as the designer drives it: a child process reading pickled requests on its stdin."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vtopo.gui.document.check_process import (COMMAND, NICENESS, AnalysisReply, CheckRequest, ExplainRequest,
                                              ExplanationReply, read_frame, write_frame)
from vtopo.model import io
from vtopo.model.topology import Topology
from vtopo.resources import TOPOLOGIES

READ = {"x86_64": "0", "aarch64": "63"}[platform.machine()]  # read(2)'s number, as /proc/PID/syscall gives it


@pytest.fixture
def checker() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    yield process
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(30) == 0, "the checker did not end with its requests"


def ask(checker: subprocess.Popen[bytes], *requests: object) -> object:
    assert checker.stdin is not None and checker.stdout is not None
    for request in requests:
        write_frame(checker.stdin, request)
    return read_frame(checker.stdout.fileno())


def check_of(generation: int, topology: Topology) -> CheckRequest:
    return CheckRequest.of(generation, topology, list(topology.nodes.values()), list(topology.links.values()))


def test_the_checker_answers_the_latest_check_and_explains_part_of_its_plan(checker: subprocess.Popen[bytes]) -> None:
    lab = io.load(TOPOLOGIES / "l2-vs-l3.vtopo")
    broken = io.load(TOPOLOGIES / "l2-vs-l3.vtopo")
    broken.nodes[next(iter(broken.nodes))].name = "bad name"
    reply = ask(checker, check_of(1, broken), check_of(2, lab))  # the second overtakes the first
    assert isinstance(reply, AnalysisReply) and reply.generation == 2
    assert reply.compiled and not reply.errors() and reply.domains()
    assert reply.explanation.startswith("#!/bin/sh") and "# ---- node h1\n" in reply.explanation
    explained = ask(checker, ExplainRequest(2, frozenset({"node h1"})))
    assert isinstance(explained, ExplanationReply) and explained.owners == frozenset({"node h1"})
    assert "# ---- node h1\n" in explained.text and "# ---- node h2\n" not in explained.text
    reply = ask(checker, check_of(3, broken))
    assert isinstance(reply, AnalysisReply) and reply.generation == 3
    assert not reply.compiled and any("bad name" in str(problem) for problem in reply.errors())
    assert reply.changes() is None


def test_the_checker_says_which_lines_of_the_script_an_edit_changed(checker: subprocess.Popen[bytes]) -> None:
    lab = io.load(TOPOLOGIES / "l2-vs-l3.vtopo")
    first = ask(checker, check_of(1, lab))
    assert isinstance(first, AnalysisReply)
    lab.node_named("h1").name = "web"  # type: ignore[union-attr]
    second = ask(checker, check_of(2, lab))
    assert isinstance(second, AnalysisReply)
    changes = second.changes()
    assert second.changed_from == 1 and changes
    lines = first.explanation.split("\n")
    for change in reversed(changes):
        lines[change.start:change.end] = change.lines
    assert "\n".join(lines) == second.explanation and "# ---- node web\n" in second.explanation


def waiting_for_a_request(process: subprocess.Popen[bytes]) -> bool:
    """Whether `process` sleeps in a read of its stdin: /proc/PID/syscall names the call it sleeps in (its number)
    and the call's arguments, the descriptor first."""
    return Path(f"/proc/{process.pid}/syscall").read_text().split()[:2] == [READ, "0x0"]


def test_the_checker_checks_the_opened_lab_at_the_designers_priority_and_every_edit_below_it(
        checker: subprocess.Popen[bytes]) -> None:
    designers = os.getpriority(os.PRIO_PROCESS, 0)
    deadline = time.monotonic() + 60
    while not waiting_for_a_request(checker):
        assert time.monotonic() < deadline, "the checker did not wait for its first request within 60 s"
        time.sleep(0.01)
    assert os.getpriority(os.PRIO_PROCESS, checker.pid) == designers
    assert isinstance(ask(checker, check_of(1, io.load(TOPOLOGIES / "l2-vs-l3.vtopo"))), AnalysisReply)
    assert os.getpriority(os.PRIO_PROCESS, checker.pid) == min(designers + NICENESS, 19)


CRASHING_DESIGNER = """
import sys
from pathlib import Path
from PySide6.QtCore import QSettings
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from vtopo.gui.app import create_window
app = QApplication([])
work = Path(sys.argv[2])
window = create_window(Path(sys.argv[1]), QSettings(str(work / "settings.ini"), QSettings.Format.IniFormat),
                       work / "autosave")
window.show()
QTest.qWait(500)
raise SystemExit("an uncaught error")
"""


def test_a_designer_ended_by_an_uncaught_error_exits_and_ends_its_checker(tmp_path) -> None:  # type: ignore
    designer = subprocess.run([sys.executable, "-c", CRASHING_DESIGNER, str(TOPOLOGIES / "ospf-ring.vtopo"),
                               str(tmp_path)], env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
                              capture_output=True, text=True, timeout=60)
    assert designer.returncode == 1 and "an uncaught error" in designer.stderr, designer.stderr
