"""A student's submission read as untrusted input: the lab it describes, under a name the grader chooses, with the
assignment's checks in place of its own, or one line saying why it cannot be graded."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from vtopo.checks.spec import TypedCheck, typed_checks
from vtopo.lab_terms import Trust
from vtopo.compile.resolve import resolve
from vtopo.lab import read_lab, registry
from vtopo.model import io
from vtopo.model.lab_text import read_text
from vtopo.model.expectations import Experiment
from vtopo.model.problems import LabError, Problem, errors_in
from vtopo.model.topology import Topology


@dataclass(frozen=True)
class Submission:
    path: Path
    student: str  # the file's name without .vtopo
    topology: Topology | None  # the lab to deploy; None when it cannot be graded
    checks: list[TypedCheck]  # the assignment's, typed against this lab
    refusal: str = ""  # why it cannot be graded, one line


def read_submission(path: Path, assignment: Topology, lab_name: str) -> Submission:
    """The submission at `path`, to be deployed as lab `lab_name` (its own name and prefix hint are dropped) and
    judged by the assignment's checks (its own are dropped too: a submission cannot change what grades it, and so is
    its experiment, which grading does not run)."""
    student = path.name.removesuffix(".vtopo")
    try:
        own = io.loads(read_text(path), default_name=student)
        graded = read_lab(io.dumps(replace(own, name=lab_name, prefix="", checks=list(assignment.checks),
                                           experiment=Experiment())))
    except LabError as error:
        return Submission(path, student, None, [], _one_line(error.errors or error.problems))
    # as the agent will compile it: with no consent at all
    problems = list(resolve(graded, registry(), None, Trust()).problems)
    if refusal := _needs_consent(graded, problems):
        return Submission(path, student, None, [], refusal)
    if errors_in(problems):
        return Submission(path, student, None, [], _one_line(errors_in(problems)))
    return Submission(path, student, graded, typed_checks(graded, registry())[0])


def _needs_consent(topology: Topology, problems: list[Problem]) -> str:
    """What of the lab only a user's consent allows (the grader never gives a submission any), as one line; "" for
    nothing."""
    asked = [f"{problem.consent.what} {problem.consent.name}" for problem in problems if problem.consent is not None]
    asked += [f"site {name}" for name in topology.sites]
    return f"needs consent the grader does not give: {', '.join(asked)}" if asked else ""


def _one_line(problems: list[Problem]) -> str:
    """The first problem, and how many more there are, on one line."""
    first = " ".join(str(problems[0]).split()) if problems else "not a lab"
    return first + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
