"""A teacher's first days, as a member of the vtopo group through a real agent, with real keys and mouse: the
designer follows a lab deployed and destroyed from the command line within a second, lists the running labs with
their owners, draws the link rates the agent reads, and its terminal has the dock's size from the first line; Save
running configuration shows what one vtysh command changed, and the lab saved and opened again is what runs."""
from __future__ import annotations

import os

import pytest

from residue import snapshot
from tests.agent.designer_script import IMPORTS, SAVE_RUNNING, WINDOW, run_designer
from tests.agent.test_agent_verbs import saved_copy


DESIGNER = IMPORTS + """
def vtopo(*args):
    return subprocess.run([sys.executable, "-m", "vtopo", *args], capture_output=True, text=True, timeout=120)

app = QApplication([])
""" + WINDOW + """wait_for(lambda: window.menu_actions.deploy.isEnabled())
assert vtopo("deploy", str(lab)).returncode == 0
deployed = time.monotonic()
seen = wait_for(lambda: window.deploy.state_of("c1") is NodeState.RUNNING, 10) - deployed
labs = sorted((entry.lab, entry.owner) for entry in window.deploy.running_labs)

pinging = subprocess.Popen([sys.executable, "-m", "vtopo", "exec", "day-lab", "c1", "--", "ping", "-q", "-i", "0.01",
                            "-s", "1000", "-w", "20", "10.0.0.2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wait_for(lambda: any(rate.bits_per_second > 200_000 for rate in window.rates.latest.values()), 20)
rates = sorted(round(rate.bits_per_second) for rate in window.rates.latest.values())
pinging.kill(); pinging.wait()

click(window.view, window.editor.scene.nodes[next(i for i, n in window.editor.topology.nodes.items()
                                                   if n.name == "c1")].scenePos())
QTest.keyClick(window.view, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
wait_for(lambda: window.terminals.count() == 1)
shell = window.terminals.terminals()[0]
wait_for(lambda: any(line.rstrip().endswith("#") for line in shell.text()), 30)  # root of the lab's user namespace
QTest.keyClicks(shell, "stty size"); QTest.keyClick(shell, Qt.Key.Key_Return)
size = f"{shell.screen_model.lines} {shell.screen_model.columns}"
wait_for(lambda: size in shell.text(), 10)
# -c: whole command lines, wider than the dock, as a machine running only short-named processes has no line past 80
QTest.keyClicks(shell, "top -c -d 1"); QTest.keyClick(shell, Qt.Key.Key_Return)
wait_for(lambda: shell.text()[0].startswith("top - ") and any("PID" in line for line in shell.text()), 20)
header = next(i for i, line in enumerate(shell.text()) if "PID" in line)
wait_for(lambda: sum(bool(line.strip()) for line in shell.text()[header + 1:]) >= 2, 10)
top_width = max(len(line) for line in shell.text())
QTest.keyClick(shell, Qt.Key.Key_Q)
window.terminals.shutdown()

assert vtopo("destroy", "day-lab").returncode == 0
destroyed = time.monotonic()
gone = wait_for(lambda: window.deploy.state_of("c1") is NodeState.NOT_DEPLOYED, 10) - destroyed
window.close()
print(json.dumps({"seen": seen, "gone": gone, "labs": labs, "rates": rates, "size": size,
                  "columns": shell.screen_model.columns, "top_width": top_width, "closed": not window.isVisible(),
                  "log": window.log.toPlainText()}))
"""


@pytest.mark.privileged
def test_a_member_sees_the_labs_truth_the_link_rates_and_a_terminal_of_the_docks_size(agent, users, readable_dir):
    a, b = users["a"], users["b"]
    before = snapshot()
    mine = saved_copy("bridge-veth", readable_dir, name="day-lab", prefix="vdl")
    theirs = saved_copy("bridge-veth", readable_dir, name="their-lab", prefix="vtl")
    os.chown(readable_dir, a.pw_uid, a.pw_gid)
    assert (deployed := agent.vtopo(b.pw_name, "deploy", str(theirs))).returncode == 0, deployed.stderr
    try:
        seen = run_designer(agent, a.pw_name, DESIGNER, readable_dir, mine)
    finally:
        agent.vtopo(a.pw_name, "destroy", "day-lab")
        assert agent.vtopo(b.pw_name, "destroy", "their-lab").returncode == 0
    assert seen["seen"] < 1.5 and seen["gone"] < 1.5, seen  # a read a second, and the read itself
    assert [tuple(entry) for entry in seen["labs"]] == [("day-lab", a.pw_uid), ("their-lab", b.pw_uid)]
    assert seen["rates"][-1] > 200_000, seen["rates"]  # the agent read the counters for a, who cannot enter
    assert seen["size"] and seen["columns"] > 80 and seen["top_width"] > 80, seen
    assert seen["closed"], "closing the window with no lab running asks nothing"
    assert snapshot() - before == {}


SECOND_DAY = IMPORTS + """
from PySide6.QtWidgets import QDialogButtonBox, QFileDialog

def vtopo(*args):
    return subprocess.run([sys.executable, "-m", "vtopo", *args], capture_output=True, text=True, timeout=120)

def press(button_text):
    def answer(box):
        button = next(button for button in box.buttons() if button.text() == button_text)
        QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    when_open(QMessageBox, answer)

app = QApplication([])
""" + WINDOW + SAVE_RUNNING + """wait_for(lambda: window.menu_actions.deploy.isEnabled())
assert vtopo("deploy", str(lab)).returncode == 0
wait_for(lambda: window.deploy.state_of("r1") is NodeState.RUNNING, 10)
typed = vtopo("exec", "second-day", "r1", "--", "vtysh", "-c", "configure terminal", "-c", "interface eth1", "-c",
              "ip ospf cost 50")
assert typed.returncode == 0, typed.stderr
dialog = open_save_running()
listed = [dialog.nodes.item(row).text() for row in range(dialog.nodes.count())]
QTest.mouseClick(dialog.nodes.viewport(), Qt.MouseButton.LeftButton,
                 pos=dialog.nodes.visualItemRect(dialog.nodes.item(0)).center())
diff = dialog.diff.toPlainText()
QTest.mouseClick(dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok),
                 Qt.MouseButton.LeftButton)
saved = lab  # Ctrl+S writes the lab's own file, which Ctrl+O opens again
QFileDialog.getOpenFileName = lambda *_args: (str(saved), "")
window.activateWindow()  # back from the dialog, as a click on the canvas would
wait_for(window.isActiveWindow, 10)
window.view.setFocus()
QTest.keyClick(window.view, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
wait_for(lambda: "ip ospf cost 50" in saved.read_text(), 10)
press("Leave it running")
QTest.keyClick(window.view, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
wait_for(lambda: window.files.path == saved and window.deploy.deployed_lab == "second-day" and not window.deploy.busy)
drift = window.deploy.drift()
logged = len(window.log.toPlainText())
window.activateWindow()  # back from the question
wait_for(window.isActiveWindow, 10)
window.view.setFocus()
QTest.keyClick(window.view, Qt.Key.Key_F5)
wait_for(lambda: "nothing to apply" in window.log.toPlainText()[logged:] or "FAILED" in window.log.toPlainText()[logged:])
deploy_said = window.log.toPlainText()[logged:]
assert vtopo("destroy", "second-day").returncode == 0
wait_for(lambda: not window.deploy.deployed_lab, 30)
window.close()
print(json.dumps({"listed": listed, "diff": diff, "drift": drift, "deploy": deploy_said}))
"""


@pytest.mark.privileged
def test_a_member_saves_one_routers_change_as_a_diff_and_the_reopened_lab_is_what_runs(agent, users, readable_dir):
    """The second day: after one `ip ospf cost 50` on r1, Save running configuration shows r1 alone as a diff of that
    line; once written, saved and opened again, the lab is what runs and Deploy finds nothing to apply."""
    a = users["a"]
    before = snapshot()
    mine = saved_copy("l2-vs-l3", readable_dir, name="second-day", prefix="vsd")
    os.chown(readable_dir, a.pw_uid, a.pw_gid)
    try:
        seen = run_designer(agent, a.pw_name, SECOND_DAY, readable_dir, mine)
    finally:
        agent.vtopo(a.pw_name, "destroy", "second-day")
    assert seen["listed"] == ["r1"], seen
    assert [line for line in seen["diff"].splitlines()[2:] if line[:1] in "+-"] == ["+   ip ospf cost 50"], seen
    assert seen["drift"] == "", seen
    assert "the running lab already matches; nothing to apply" in seen["deploy"], seen["deploy"]
    assert snapshot() - before == {}
