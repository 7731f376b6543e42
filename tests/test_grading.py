"""Grading reads a submission as untrusted input: hostile files get one line each and no traceback, a submission
that asks for consent is not deployed, its own checks, name and prefix are dropped, and the report escapes whatever
it wrote. Offline: nothing is deployed (tests/agent/test_grading_as_member.py grades through an agent)."""
from __future__ import annotations

import csv
import io
import json

import pytest

from golden import GOLDEN
from grading_labs import ALWAYS_TRUE, ASSIGNMENT, submission
from vtopo.checks.engine import Outcome
from vtopo.grade.grader import Graded, Grader
from vtopo.grade.report import to_csv, to_html
from vtopo.grade.submission import read_submission
from vtopo.kinds.check_types import Verdict
from vtopo.lab import open_lab
from vtopo.reports import LabEntry

HOSTILE = sorted((GOLDEN / "hostile").glob("*.vtopo"))
GARBAGE = {"binary": b"\x00\xff\xfe vtopo \x80", "not-an-object": b"[1, 2, 3]", "empty": b"",
           "nodes-not-a-list": b'{"format": "vtopo", "version": 2, "nodes": "r1"}'}


@pytest.fixture(name="assignment")
def _assignment():
    return open_lab(ASSIGNMENT).topology


@pytest.mark.parametrize("lab_file", HOSTILE, ids=[p.stem for p in HOSTILE])
def test_a_hostile_submission_gets_one_line(lab_file, assignment):
    read = read_submission(lab_file, assignment, "grade-t-1")
    assert read.topology is None and read.refusal and "\n" not in read.refusal


@pytest.mark.parametrize("name", GARBAGE)
def test_garbage_gets_one_line(name, assignment, tmp_path):
    path = tmp_path / f"{name}.vtopo"
    path.write_bytes(GARBAGE[name])
    read = read_submission(path, assignment, "grade-t-1")
    assert read.topology is None and read.refusal.startswith("error: ") and "\n" not in read.refusal


def test_a_submission_that_asks_for_consent_is_not_deployed(assignment, tmp_path):
    document = json.loads(submission())
    next(node for node in document["nodes"] if node["name"] == "h1")["startup_commands"] = ["touch /tmp/owned"]
    path = tmp_path / "dave.vtopo"
    path.write_text(json.dumps(document))
    read = read_submission(path, assignment, "grade-t-1")
    assert read.topology is None
    assert read.refusal == "needs consent the grader does not give: startup commands h1"


def test_a_submission_cannot_change_its_checks_name_or_prefix_nor_be_refused_for_its_experiment(assignment, tmp_path):
    document = json.loads(submission(checks=ALWAYS_TRUE))
    document["lab"]["prefix"] = "vother"
    document["experiment"] = {"pairs": [{"name": "away", "source": "h1", "destination": "nowhere"}],
                              "tests": [{"name": "ping", "tool": "ping"}]}  # grading runs none: it cannot refuse it
    path = tmp_path / "bob.vtopo"
    path.write_text(json.dumps(document))
    read = read_submission(path, assignment, "grade-t-1")
    assert read.topology is not None and read.topology.name == "grade-t-1" and read.topology.prefix == ""
    assert [(c.check.name, c.params) for c in read.checks] == [
        (c.check.name, c.params) for c in read_submission(ASSIGNMENT, assignment, "grade-t-2").checks]
    assert read.checks[0].params.destination == "h3"


def test_the_report_escapes_what_a_submission_wrote(assignment, tmp_path):
    path = tmp_path / "=HYPERLINK(evil)<script>.vtopo"
    path.write_text(submission())
    read = read_submission(path, assignment, "grade-t-1")
    why = "<img src=x onerror=alert(1)> is not adjacent"
    grades = [Graded(read, [Outcome(check, Verdict(False, why), 0.1) for check in read.checks])]
    report = to_html(assignment, grades)
    assert "<script>" not in report and "<img" not in report
    assert "&lt;img src=x onerror=alert(1)&gt;" in report and "=HYPERLINK(evil)&lt;script&gt;" in report
    row = next(csv.DictReader(io.StringIO(to_csv(assignment, grades))))
    assert row["student"] == "'=HYPERLINK(evil)<script>"  # a spreadsheet reads it as text, not as a formula
    assert row["total"] == f"0/{len(assignment.checks)}"



class LabsTaken:
    """An agent on which `names` are deployed already, by someone else: deploying or destroying a lab fails the
    test."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def labs(self) -> list[LabEntry]:
        return [LabEntry(name, 1002) for name in self.names]

    def deploy(self, *_: object, **__: object) -> None:
        raise AssertionError("deployed over a lab that is there")

    def destroy(self, *_: object, **__: object) -> None:
        raise AssertionError("destroyed a lab that grading did not deploy")


def test_a_lab_of_the_name_grading_chose_is_left_alone(assignment, tmp_path):
    path = tmp_path / "alice.vtopo"
    path.write_text(submission())
    agent = LabsTaken()
    grader = Grader(assignment, agent, 1.0)  # type: ignore[arg-type]
    agent.names.append(grader.lab_name(1))
    (graded,) = grader.grade_all([path], 1)
    assert graded.outcomes == []
    assert graded.why_not == f"did not deploy: a lab named {grader.lab_name(1)} is deployed already"
