"""A course played end to end, each person a member of the vtopo group through a real agent. The teacher hands out
the three-stage OSPF assignment (hidden checks and solutions left out of the student's copy). The student, in the
designer with real keys and mouse, deploys the copy, works through the Exercise dock stage by stage (vtysh typed in
the Terminal dock on r1 and through `vtopo exec` on r2 and r3), saves the running configuration into the lab and
destroys it. On the way, once OSPF is up, they keep a checkpoint in Lab > Checkpoints, break r2's OSPF and restore
the checkpoint, which changes r2 alone. The teacher grades that submission beside a wrong one and an unparsable one: every check, the hidden
ones included, passes or fails as it should, each with its diagnosis, and the machine is left as it was."""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from members import owned_by
from residue import snapshot
from tests.agent.designer_script import IMPORTS, SAVE_RUNNING, WINDOW, run_designer
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

ASSIGNMENT = TOPOLOGIES / "ospf-assignment.vtopo"
LAB = "ospf-assignment"
WRONG = {"r1 is adjacent to r3", "r1 learned lan3 by OSPF", "h1 to h3 crosses r1 and r3"}
"""What fails when r1 puts its link to r3 in area 1: that link forms no adjacency, so lan3 comes the long way round."""
CONVERGE_S = "20"  # how long grading waits for a failing check to pass: the wrong submission waits it out (the right
# one, with the fast hellos and retransmits of tests/ospf_answers.py, passes within about 6 s)

STUDENT = IMPORTS + """
from PySide6.QtWidgets import QDialogButtonBox
from tests.ospf_answers import lan_announced, ospf_in_area_0

LAB = "ospf-assignment"

def vtopo(*args):
    return subprocess.run([sys.executable, "-m", "vtopo", *args], capture_output=True, text=True, timeout=120)

def vtysh(router, lines):
    typed = vtopo("exec", LAB, router, "--", "vtysh", "-c", "configure terminal", *(w for l in lines for w in ("-c", l)))
    assert typed.returncode == 0, typed.stdout + typed.stderr

def running_config(router):
    return vtopo("exec", LAB, router, "--", "vtysh", "-c", "show running-config").stdout

def node_at(name):
    return window.editor.scene.nodes[next(i for i, n in window.editor.topology.nodes.items() if n.name == name)]

def to_the_canvas():
    window.activateWindow()  # as a click on the canvas does, after a dialog or a terminal had the focus
    wait_for(window.isActiveWindow, 10)
    window.view.setFocus()

runs = []
def check_until_complete(seconds=90):
    # the Exercise dock's Check, pressed again after each run until every check of the stage passes; the rows seen
    deadline = time.monotonic() + seconds
    while True:
        before = len(runs)
        QTest.mouseClick(panel.check_button, Qt.MouseButton.LeftButton)
        wait_for(lambda: len(runs) > before, 60)
        if panel.rows() and all(result == "pass" for _, result in panel.rows()):
            seen["stages"][panel.title.text()] = panel.rows()
            return
        assert time.monotonic() < deadline, panel.rows()
        QTest.qWait(1000)

def next_stage(number):
    assert panel.next_button.isEnabled(), (panel.rows(), panel.summary.text())
    QTest.mouseClick(panel.next_button, Qt.MouseButton.LeftButton)
    wait_for(lambda: panel.title.text().startswith(f"<b>Stage {number} of 3"), 10)

app = QApplication([])
""" + WINDOW + SAVE_RUNNING + """panel = window.exercise_panel
window.checks.finished.connect(lambda *_: runs.append(1))
seen = {"stages": {}}  # each stage's title, and its checks as they passed
wait_for(lambda: window.menu_actions.deploy.isEnabled())
to_the_canvas()
QTest.keyClick(window.view, Qt.Key.Key_F5)
wait_for(lambda: not window.deploy.busy and window.deploy.state_of("h3") is NodeState.RUNNING, 120)

check_until_complete()  # stage 1: the links, up as deployed
next_stage(2)

# stage 2: OSPF in area 0, r1's typed in its terminal tab
click(window.view, node_at("r1").scenePos())
QTest.keyClick(window.view, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
wait_for(lambda: window.terminals.count() == 1)
shell = window.terminals.terminals()[0]
wait_for(lambda: any(line.rstrip().endswith("r1#") for line in shell.text()), 30)
for line in ["configure terminal", *ospf_in_area_0("r1"), "end"]:
    QTest.keyClicks(shell, line)
    QTest.keyClick(shell, Qt.Key.Key_Return)
wait_for(lambda: "r1(config-router)# network 10.0.13.0/30 area 0" in "\\n".join(shell.text()), 30)
assert "ospf router-id 1.1.1.1" in running_config("r1")
to_the_canvas()
for router in ("r2", "r3"):
    vtysh(router, ospf_in_area_0(router))
check_until_complete()

# a checkpoint of OSPF up; r2's OSPF removed; the checkpoint restored, from Lab > Checkpoints
said = []
window.checkpoints.finished.connect(said.append)
dialog = open_from_lab_menu(window.menu_actions.checkpoints, window.checkpoints.dialog_opened)
QTest.mouseClick(dialog.name, Qt.MouseButton.LeftButton)
QTest.keyClicks(dialog.name, "ospf-up")
QTest.keyClick(dialog.name, Qt.Key.Key_Return)
wait_for(lambda: dialog.checkpoints.count() == 1, 60)
vtysh("r2", ["no router ospf"])
assert "router ospf" not in running_config("r2")
item = dialog.checkpoints.item(0)
QTest.mouseClick(dialog.checkpoints.viewport(), Qt.MouseButton.LeftButton,
                 pos=dialog.checkpoints.visualItemRect(item).center())
wait_for(dialog.restore.isEnabled, 10)
QTest.mouseClick(dialog.restore, Qt.MouseButton.LeftButton)
wait_for(lambda: any("to checkpoint ospf-up" in text for text in said), 120)
seen["restored"] = dialog.said.toPlainText()
assert "router ospf" in running_config("r2")
dialog.close()
to_the_canvas()
check_until_complete()
next_stage(3)

for router in ("r1", "r3"):  # stage 3: the LANs announced
    vtysh(router, lan_announced(router))
check_until_complete()
seen["summary"] = panel.summary.text()

to_the_canvas()
dialog = open_save_running()
seen["changed"] = [dialog.nodes.item(row).text() for row in range(dialog.nodes.count())]
QTest.mouseClick(dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok),
                 Qt.MouseButton.LeftButton)
to_the_canvas()
QTest.keyClick(window.view, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
wait_for(lambda: "passive-interface eth0" in lab.read_text(), 10)

window.terminals.shutdown()
assert vtopo("destroy", LAB).returncode == 0
wait_for(lambda: not window.deploy.deployed_lab, 30)
window.close()
print(json.dumps(seen))
"""


@pytest.fixture
def student_dir(users) -> Iterator[Path]:  # type: ignore[no-untyped-def]
    """The student's own folder: their copy of the handout, the designer's settings and the stage they are at."""
    directory = Path(tempfile.mkdtemp(prefix="vtopo-student-"))
    os.chown(directory, users["b"].pw_uid, users["b"].pw_gid)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def wrong_copy(saved: str) -> str:
    """The student's submission with r1's link to r3 in area 1."""
    document = json.loads(saved)
    r1 = next(node for node in document["nodes"] if node["name"] == "r1")
    assert " network 10.0.13.0/30 area 0\n" in r1["settings"]["config"]
    r1["settings"]["config"] = r1["settings"]["config"].replace("network 10.0.13.0/30 area 0",
                                                                "network 10.0.13.0/30 area 1")
    return json.dumps(document, indent=1)


def cells(report: str, student: str) -> list[tuple[str, str]]:
    """A student's row of the HTML report: each check's result and its diagnosis."""
    row = report[report.index(f"<tr><th>{student}</th>"):].split("</tr>")[0]
    return re.findall(r'<td class="(\w+)">\w+<div class="why">([^<]*)</div></td>', row)


def test_a_course_handed_out_worked_through_in_the_designer_and_graded(agent, users, readable_dir, student_dir):
    teacher, student = users["a"].pw_name, users["b"].pw_name
    before = snapshot()
    os.chown(readable_dir, users["a"].pw_uid, users["a"].pw_gid)
    assignment = readable_dir / ASSIGNMENT.name
    shutil.copy(ASSIGNMENT, assignment)
    assignment.chmod(0o644)
    hidden = [check.name for check in io.load(assignment).checks if check.hidden]
    names = [check.name for check in io.load(assignment).checks]

    handout = readable_dir / "handout"
    made = agent.vtopo(teacher, "handout", str(assignment), "-o", str(handout))
    assert made.returncode == 0, made.stderr
    assert f"{len(hidden)} hidden checks left out" in made.stdout, made.stdout
    assert (handout / f"{LAB}.html").is_file()
    shutil.copy(handout / f"{LAB}.vtopo", student_dir)
    copy = owned_by(student_dir / f"{LAB}.vtopo", users["b"])
    assert not any(name in copy.read_text() for name in hidden)

    try:
        seen = run_designer(agent, student, STUDENT, student_dir, copy, timeout=600)
    finally:
        agent.vtopo(student, "destroy", LAB)
    stages = seen["stages"]
    assert [title.split(":")[0] for title in stages] == [f"<b>Stage {n} of 3" for n in (1, 2, 3)], seen
    assert [len(rows) for rows in stages.values()] == [5, 3, 3], "hidden checks shown to the student"
    assert not {name for rows in stages.values() for name, _ in rows} & set(hidden)
    assert seen["summary"] == "The last stage is complete."
    assert seen["changed"] == ["r1", "r2", "r3"], seen
    restored = seen["restored"].splitlines()
    assert any(line.startswith("r2 took the checkpoint's state") for line in restored), restored
    assert not any(line.startswith(("r1 ", "r3 ", "h1 ", "h2 ", "h3 ")) for line in restored), restored

    submissions = readable_dir / "submissions"
    submissions.mkdir()
    saved = copy.read_text()
    texts = {"alice": saved, "bob": wrong_copy(saved), "carol": '{"format": "vtopo", "version": 3, "nodes": [{"name": '}
    for name, text in texts.items():
        (submissions / f"{name}.vtopo").write_text(text)
    grades = readable_dir / "grades"
    for folder in (submissions, grades):
        folder.mkdir(exist_ok=True)
        shutil.chown(folder, users["a"].pw_name)
        for path in folder.iterdir():
            shutil.chown(path, users["a"].pw_name)
    graded = agent.vtopo(teacher, "grade", str(assignment), *(str(submissions / f"{name}.vtopo") for name in texts),
                         "-o", str(grades), "--parallel", "2", "--converge", CONVERGE_S, timeout=600)
    assert graded.returncode == 0 and "Traceback" not in graded.stderr, graded.stdout + graded.stderr
    assert f"graded 2 of 3 submissions against {len(names)} checks" in graded.stdout, graded.stdout

    with (grades / f"{LAB}-grades.csv").open() as file:
        rows = {row["student"]: row for row in csv.DictReader(file)}
    assert {name: rows["alice"][name] for name in names} == dict.fromkeys(names, "pass")
    assert {name: rows["bob"][name] for name in names} == {name: "fail" if name in WRONG else "pass"
                                                          for name in names}
    assert {name: rows["carol"][name] for name in names} == dict.fromkeys(names, "error")
    assert rows["carol"]["note"].startswith("error: ") and "\n" not in rows["carol"]["note"]
    report = (grades / f"{LAB}-grades.html").read_text()
    for name in texts:
        assert len(cells(report, name)) == len(names) and all(why.strip() for _, why in cells(report, name)), name
    assert [result for result, _ in cells(report, "bob")] == ["fail" if name in WRONG else "pass" for name in names]

    assert agent.vtopo(teacher, "status").stdout.strip() == "no lab is deployed"
    assert agent.vtopo(student, "status").stdout.strip() == "no lab is deployed"
    assert snapshot() - before == {}
