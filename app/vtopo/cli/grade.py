"""`vtopo grade ASSIGNMENT SUBMISSION...`: deploy each student's lab as the caller, run the assignment's checks on it,
destroy it, and write the grades as CSV and HTML."""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from vtopo.cli.common import Command, agent_client

if TYPE_CHECKING:
    from vtopo.grade.grader import Graded

CONVERGED_WITHIN_S = 30.0
"""How long a lab's checks may keep failing after its deploy before they count, while its routing converges."""


def cmd_grade(args: argparse.Namespace) -> int:
    from vtopo.grade.grader import Grader, share_of_quota
    from vtopo.grade.report import to_csv, to_html
    from vtopo.lab import open_lab
    from vtopo.model.io import write_atomically

    assignment = open_lab(args.assignment).topology
    if not assignment.checks:
        print(f"{args.assignment}: the assignment has no checks to grade by", file=sys.stderr)
        return 2
    if problem := unwritable(args.output):
        print(f"error: {problem}", file=sys.stderr)
        return 1
    client = agent_client()
    share = share_of_quota(args.parallel, client, len(assignment.nodes))
    grader = Grader(assignment, client, args.converge, share.checks_per_lab)
    started = time.monotonic()
    grades = grader.grade_all(args.submissions, share.labs, lambda graded: print(summary_line(graded), flush=True))
    csv_path, html_path = (args.output / f"{assignment.name}-grades.{suffix}" for suffix in ("csv", "html"))
    write_atomically(csv_path, to_csv(assignment, grades))
    write_atomically(html_path, to_html(assignment, grades))
    graded = [g for g in grades if g.outcomes]
    print(f"graded {len(graded)} of {len(grades)} submissions against {len(assignment.checks)} checks, "
          f"{share.labs} at once, in {time.monotonic() - started:.1f} s: {csv_path}, {html_path}")
    return 0


def unwritable(directory: Path) -> str:
    """Why the grades cannot be written into `directory` (made if missing), or "": said before grading, not after."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return f"cannot make {directory}: {error.strerror}"
    return "" if os.access(directory, os.W_OK | os.X_OK) else f"cannot write the grades into {directory}"


def summary_line(graded: Graded) -> str:
    submission = graded.submission
    if not graded.outcomes:
        return f"{submission.student}: not graded: {graded.why_not}"
    return f"{submission.student}: {graded.passed}/{len(graded.outcomes)} checks pass ({graded.seconds:.1f} s)"


def add_commands(command: Command) -> None:
    sub = command("grade", cmd_grade, "deploy each submission as you (with no consent: no startup commands, host "
                  "devices or outside images), run the assignment's checks on it (never the submission's own), "
                  "destroy it, and write the grades as CSV and HTML")
    sub.add_argument("assignment", type=Path, help="the assignment's .vtopo file, whose checks grade")
    sub.add_argument("submissions", type=Path, nargs="+", metavar="SUBMISSION", help="the students' .vtopo files")
    sub.add_argument("-o", "--output", type=Path, default=Path("."), metavar="DIR",
                     help="where to write ASSIGNMENT-grades.csv and .html (default: here)")
    sub.add_argument("--parallel", type=int, default=2, metavar="N",
                     help="deploy up to N submissions at once, within your quota (default 2)")
    sub.add_argument("--converge", type=float, default=CONVERGED_WITHIN_S, metavar="SECONDS",
                     help="how long a lab's checks may keep failing after its deploy while its routing converges "
                          f"(default {CONVERGED_WITHIN_S:g})")
