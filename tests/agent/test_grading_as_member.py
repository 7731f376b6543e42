"""`vtopo grade` as a member through a real agent: a correct, a wrong and an unparsable submission of an OSPF
assignment, graded by the assignment's checks (never a submission's own), each failed check with its diagnosis, and
the machine left as it was, also when the agent refuses a submission's deploy."""
from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from agent_process import Agent
from grading_labs import ASSIGNMENT, CHECKS, FAILED_IN_THE_WRONG_ONE, submission, write_submissions
from residue import snapshot

pytestmark = pytest.mark.privileged

CONVERGE_S = "20"  # how long grading waits for a failing check to pass: bob's wrong submission waits it out, where
# alice's, whose routers have ospf-ring's one-second hellos on point-to-point links, passes within a few seconds


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
                       "--parallel", "2", "--converge", CONVERGE_S, timeout=400)
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


def test_a_submission_the_agent_refuses_leaves_nothing(users, readable_dir):
    """A member may have 5 nodes here: a submission of 6 passes every check grading makes itself, and the agent
    refuses its deploy; its row says why, and nothing is left."""
    a = users["a"].pw_name
    before = snapshot()
    assignment = readable_dir / ASSIGNMENT.name
    shutil.copy(ASSIGNMENT, assignment)
    assignment.chmod(0o644)
    document = json.loads(submission())
    document["nodes"].append({"id": "h4", "kind": "container", "name": "h4", "position": {"x": 0, "y": 0}})
    erin = readable_dir / "erin.vtopo"
    erin.write_text(json.dumps(document))
    erin.chmod(0o644)
    with Agent.running("nodes_per_member = 5\n") as agent:
        refused = agent.vtopo(a, "grade", str(assignment), str(erin), "-o", str(readable_dir))
        assert refused.stderr == f"error: cannot write the grades into {readable_dir}\n" and refused.returncode == 1
        readable_dir.chmod(0o777)
        done = agent.vtopo(a, "grade", str(assignment), str(erin), "-o", str(readable_dir), timeout=200)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
        assert "erin: not graded: did not deploy: " in done.stdout and "nodes_per_member" in done.stdout, done.stdout
        assert agent.vtopo(a, "status").stdout.strip() == "no lab is deployed"
    with (readable_dir / "ospf-ring-grades.csv").open() as file:
        row = next(csv.DictReader(file))
    assert {name: row[name] for name in CHECKS} == dict.fromkeys(CHECKS, "error")
    assert snapshot() - before == {}


def test_a_submission_whose_frr_text_names_a_file_of_the_teachers_writes_nothing(agent, users, readable_dir):
    """dave's r1 adds an RFC 5424 log target writing the grading member's ~/.bashrc (`log extended-syslog`, then
    `destination file PATH create`, which FRR's daemons take): graded by member a, the submission is refused before
    it deploys, its row says which line, and a's home directory stays empty (the daemons, besides, would find the
    host's files read-only: tests/security/test_member_routers.py)."""
    teacher = users["a"]
    home = Path(tempfile.mkdtemp(prefix="vtopo-teacher-", dir="/home"))
    try:
        os.chown(home, teacher.pw_uid, teacher.pw_gid)
        assignment = readable_dir / ASSIGNMENT.name
        shutil.copy(ASSIGNMENT, assignment)
        assignment.chmod(0o644)
        document = json.loads(submission())
        r1 = next(node for node in document["nodes"] if node["name"] == "r1")
        r1["settings"]["config"] += f"log extended-syslog x\n destination file {home}/.bashrc create\n"
        dave = readable_dir / "dave.vtopo"
        dave.write_text(json.dumps(document))
        dave.chmod(0o644)
        readable_dir.chmod(0o777)
        done = agent.vtopo(teacher.pw_name, "grade", str(assignment), str(dave), "-o", str(readable_dir),
                           timeout=200)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
        with (readable_dir / "ospf-ring-grades.csv").open() as file:
            row = next(csv.DictReader(file))
        assert {name: row[name] for name in CHECKS} == dict.fromkeys(CHECKS, "error")
        assert "'log extended-syslog x', would have FRR write or read a file" in row["note"], row["note"]
        assert list(home.iterdir()) == []
        assert agent.vtopo(teacher.pw_name, "status").stdout.strip() == "no lab is deployed"
    finally:
        shutil.rmtree(home)
