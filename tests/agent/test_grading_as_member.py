"""`vtopo grade` as a member through a real agent: a correct, a wrong and an unparsable submission of an OSPF
assignment, graded by the assignment's checks (never a submission's own), each failed check with its diagnosis, and
the machine left as it was."""
from __future__ import annotations

import csv
import shutil

import pytest

from grading_labs import ASSIGNMENT, CHECKS, FAILED_IN_THE_WRONG_ONE, write_submissions
from residue import snapshot

pytestmark = pytest.mark.privileged


def test_a_member_grades_three_submissions_and_leaves_nothing(agent, users, readable_dir):
    a = users["a"].pw_name
    before = snapshot()
    assignment = readable_dir / ASSIGNMENT.name
    shutil.copy(ASSIGNMENT, assignment)
    assignment.chmod(0o644)
    paths = write_submissions(readable_dir)
    output = readable_dir / "grades"
    output.mkdir(mode=0o777)
    output.chmod(0o777)
    done = agent.vtopo(a, "grade", str(assignment), *(str(p) for p in paths.values()), "-o", str(output),
                       "--parallel", "2", timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "graded 2 of 3 submissions against 9 checks" in done.stdout, done.stdout

    with (output / "ospf-ring-grades.csv").open() as file:
        rows = {row["student"]: row for row in csv.DictReader(file)}
    assert list(rows["alice"]) == ["student", "file", *CHECKS, "total", "note"]
    assert {name: rows["alice"][name] for name in CHECKS} == dict.fromkeys(CHECKS, "pass")
    assert rows["alice"]["total"] == f"{len(CHECKS)}/{len(CHECKS)}"
    assert {name: rows["bob"][name] for name in CHECKS} == {
        name: "fail" if name in FAILED_IN_THE_WRONG_ONE else "pass" for name in CHECKS}  # its own checks ignored
    assert rows["bob"]["total"] == f"{len(CHECKS) - len(FAILED_IN_THE_WRONG_ONE)}/{len(CHECKS)}"
    assert {name: rows["carol"][name] for name in CHECKS} == dict.fromkeys(CHECKS, "error")
    assert rows["carol"]["note"].startswith("error: ") and "\n" not in rows["carol"]["note"]

    report = (output / "ospf-ring-grades.html").read_text()
    bob = report[report.index("<tr><th>bob</th>"):].split("</tr>")[0]
    diagnoses = [cell.split('<div class="why">')[1].split("</div>")[0] for cell in bob.split('<td class="fail">')[1:]]
    assert len(diagnoses) == len(FAILED_IN_THE_WRONG_ONE) and all(diagnoses), bob
    assert any("r3" in why for why in diagnoses), diagnoses

    assert agent.vtopo(a, "status").stdout.strip() == "no lab is deployed"
    assert snapshot() - before == {}
