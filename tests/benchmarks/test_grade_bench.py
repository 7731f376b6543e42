"""Grading submissions of the routing assignment (the ospf-ring lab and its nine checks) as a member through a real
agent, against a plain deploy, check and destroy of one submission by the same member in the same run. Prints;
asserts no times.

The plain side is what a teacher would type for one student: `vtopo deploy`, `vtopo check` again every second
until every check passes (routing converges), `vtopo destroy`. `vtopo grade` does the same for each submission, a few
at once (its default --parallel 2), so that its time per submission can be below one plain round.
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import time
from pathlib import Path

import pytest

from agent_process import Agent
from benchmarks.report import machine_facts, write_fragment
from grading_labs import ASSIGNMENT, submission
from members import members, readable_dir  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

SUBMISSIONS = int(os.environ.get("VTOPO_GRADE_BENCH_SUBMISSIONS", "30"))
PLAIN_TRIALS = 3
CONVERGED_WITHIN_S = 60.0


def plain_round(agent: Agent, member: str, lab_file: Path) -> float:
    """Deploy, check until every check passes, destroy: one submission by hand."""
    started = time.perf_counter()
    deployed = agent.vtopo(member, "deploy", str(lab_file))
    assert deployed.returncode == 0, deployed.stderr
    deadline = started + CONVERGED_WITHIN_S
    while (checked := agent.vtopo(member, "check", "ospf-ring", "--json")).returncode != 0:
        assert time.perf_counter() < deadline, json.loads(checked.stdout)
        time.sleep(1)
    assert agent.vtopo(member, "destroy", "ospf-ring").returncode == 0
    return time.perf_counter() - started


def test_grading_submissions_against_one_plain_round(readable_dir: Path) -> None:
    assignment = readable_dir / ASSIGNMENT.name
    shutil.copy(ASSIGNMENT, assignment)
    paths = [readable_dir / f"student{number:02}.vtopo" for number in range(1, SUBMISSIONS + 1)]
    for path in paths:
        path.write_text(submission())
    output = readable_dir / "grades"
    output.mkdir()
    for path in [readable_dir, output, assignment, *paths]:
        path.chmod(0o777 if path.is_dir() else 0o644)
    facts = machine_facts()
    with Agent.running() as agent, members() as users:
        member = users["a"].pw_name
        plain = [plain_round(agent, member, paths[0]) for _ in range(PLAIN_TRIALS)]
        started = time.perf_counter()
        graded = agent.vtopo(member, "grade", str(assignment), *map(str, paths), "-o", str(output),
                             timeout=60 + 60 * SUBMISSIONS)
        total = time.perf_counter() - started
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert f"graded {SUBMISSIONS} of {SUBMISSIONS} submissions" in graded.stdout, graded.stdout
    one, each = statistics.median(plain), total / SUBMISSIONS
    print(f"\ngrading {SUBMISSIONS} submissions of ospf-ring as a member: {total:.1f} s, {each:.1f} s per submission; "
          f"a plain deploy, check and destroy of one: {one:.1f} s (median of {' '.join(f'{t:.1f}' for t in plain)}); "
          f"ratio {each / one:.2f}")
    print(graded.stdout.splitlines()[-1])
    write_fragment("grade", "\n".join([
        "### Grading submissions", "", facts, "",
        f"`vtopo grade` of {SUBMISSIONS} correct submissions of the routing assignment (ospf-ring: 5 nodes, OSPF, "
        "nine checks) by a member through the agent, two at once (its default), against what a teacher would type "
        "for one: `vtopo deploy`, `vtopo check` every second until all pass, `vtopo destroy` (median of "
        f"{PLAIN_TRIALS}, in the same run). A wrong submission takes longer: its checks are asked again until "
        "`--converge` (30 s) runs out.", "",
        "| submissions | grading, in all | per submission | one plain deploy, check, destroy | per submission / plain |",
        "|---|---|---|---|---|",
        f"| {SUBMISSIONS} | {total:.1f} s | {each:.1f} s | {one:.1f} s | {each / one:.2f}x |"]))
