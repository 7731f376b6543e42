"""The designer, run as a member of the vtopo group (offscreen), deploys and destroys through the agent and shows the
node states, without importing the executor, opens a terminal on a node (a container: its hostname and the lab's
/etc/hosts, as root of the lab's user namespace), measures through it and stops a node from the canvas' menu; run as
root, it shows a bar recommending a normal user."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from residue import snapshot
from tests.agent.designer_script import DEPLOY

REPOSITORY = Path(__file__).parents[2]

DESIGNER = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolBar
from tests.gui.helpers import answer_next_dialog, choose, double_click, right_click, when_menu_opens
from vtopo.gui.app import create_window
from vtopo.gui.measure.controller import find_deployed
from vtopo.measure import MeasureError, PingOptions, PingRun
from vtopo.resources import TOPOLOGIES

def wait_for(condition):
    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline, (window.log.toPlainText(), window.menu_actions.deploy.toolTip())
        QTest.qWait(20)


app = QApplication([])
work = Path(sys.argv[2])
window = create_window(TOPOLOGIES / "bridge-veth.vtopo", QSettings(str(work / "settings.ini"),
                       QSettings.Format.IniFormat), work / "autosave")
window.show()
QTest.qWaitForWindowExposed(window)
""" + DEPLOY + """deployed = {name: state.name for name, state in window.deploy.states.items()}
painted = {name: item.state.name for name, item in window.editor.scene.nodes.items()}
double_click(window.view, window.editor.scene.nodes["c1"].pos())
shell = window.terminals.terminals()[0]
wait_for(lambda: any(shell.text()))
QTest.keyClicks(shell, 'echo "host:$(hostname) hosts:$(grep -cw c3 /etc/hosts) uid:$(id -u) tmp:$(ls -A /tmp | wc -l)"')
QTest.keyClick(shell, Qt.Key.Key_Return)
wait_for(lambda: any("host:c1" in line for line in shell.text()))
in_terminal = next(line for line in shell.text() if line.startswith("host:c1"))
lab, why = find_deployed("bridge-veth")  # what the Measure dock runs its runs on
pinged = PingRun(lab.endpoint("c1"), lab.endpoint("c2"), "10.0.0.2", PingOptions(count=2, interval_s=0.2)).run()
when_menu_opens(choose("Stop"))  # the node's menu on the canvas: the agent stops c2 for its owner
right_click(window.view, window.editor.scene.nodes["c2"].scenePos())
wait_for(lambda: not window.operate.busy and window.deploy.state_of("c2").name == "STOPPED")
stopped = window.editor.scene.nodes["c2"].state.name
try:
    unanswered = str(PingRun(lab.endpoint("c1"), lab.endpoint("c2"), "10.0.0.2", PingOptions(count=1)).run())
except MeasureError as error:
    unanswered = str(error)
answer_next_dialog("Destroy")
QTest.mouseClick(toolbar.widgetForAction(window.menu_actions.destroy), Qt.MouseButton.LeftButton)
wait_for(lambda: not window.deploy.busy and window.deploy.deployed_lab == "")
print(json.dumps({"deployed": deployed, "painted": painted, "after": {n: s.name for n, s in window.deploy.states.items()},
                  "executor": "vtopo.host.deployer" in sys.modules,
                  "pinged": pinged.received, "log": window.log.toPlainText(), "stopped": stopped,
                  "after_stop": unanswered, "operate": "vtopo.lab_operations" in sys.modules,
                  "root_bar": window.findChild(QToolBar, "root-warning") is not None, "terminal": in_terminal}))
"""


@pytest.mark.privileged
def test_the_designer_as_a_member_deploys_and_destroys_through_the_agent(agent, users, readable_dir):
    user = users["a"]
    os.chown(readable_dir, user.pw_uid, user.pw_gid)
    before = snapshot()
    env = {**agent.env, "QT_QPA_PLATFORM": "offscreen", "XDG_RUNTIME_DIR": str(readable_dir),
           "HOME": str(readable_dir)}
    run = subprocess.run(["runuser", "-u", user.pw_name, "--", sys.executable, "-c", DESIGNER, str(REPOSITORY),
                          str(readable_dir)], env=env, capture_output=True, text=True, timeout=300, cwd="/")
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.splitlines()[-1])
    nodes = {"br0", "c1", "c2", "c3"}
    assert seen["deployed"] == {name: "RUNNING" for name in nodes}, seen["log"]
    assert seen["painted"] == {name: "RUNNING" for name in nodes}
    assert seen["after"] == {} and "lab destroyed" in seen["log"]
    in_tmp = int(REPOSITORY.is_relative_to("/tmp"))  # a checkout under /tmp stays visible in the node's empty /tmp
    assert seen["terminal"].strip() == f"host:c1 hosts:1 uid:0 tmp:{in_tmp}", seen["terminal"]
    assert not seen["executor"], "the designer imported the executor although the agent deploys"
    assert not seen["root_bar"]
    assert seen["pinged"] == 2  # the Measure dock's commands ran through the agent, as the user
    assert seen["stopped"] == "STOPPED" and "c1 gets no reply from 10.0.0.2" in seen["after_stop"], seen["log"]
    assert "stopped c2 in lab bridge-veth" in seen["log"] and not seen["operate"]  # the agent did it
    assert snapshot() - before == {}


def test_the_designer_as_root_shows_a_warning_bar(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QLabel, QToolBar

    from tests.gui.conftest import leave_it_running
    from vtopo.gui.app import create_window
    from vtopo.gui.panels import leaving

    monkeypatch.setattr(leaving, "ask", leave_it_running)  # the machine may run a lab of the default lab's name
    for euid, shown in ((0, True), (1000, False)):
        monkeypatch.setattr(os, "geteuid", lambda euid=euid: euid)
        window = create_window(None, QSettings(str(tmp_path / f"{euid}.ini"), QSettings.Format.IniFormat),
                               tmp_path / "autosave")
        qtbot.addWidget(window)
        window.show()
        bar = window.findChild(QToolBar, "root-warning")
        assert (bar is not None and bar.isVisible()) == shown
        if shown:
            assert "Run it as yourself" in bar.findChild(QLabel).text()
        window.analyzer.shutdown()
