"""The designer killed with kill -9 in the middle of a deploy, and started again on the same lab, as a member of the
vtopo group through a real agent: the deploy goes on in the agent, and the new window shows the truth. Its nodes are
"deploying" (not degraded), Deploy stays disabled until the agent's deploy ends, then they are running; `vtopo status`
never says "interrupted" meanwhile. A startup command that waits stands for a VM's slow first start: it ends once the
second window has looked (a file that window makes, in /dev/shm, which a node shares with the host), or after
SLEEP_S."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from residue import snapshot
from tests.agent.designer_script import IMPORTS, WINDOW
from tests.agent.test_agent_verbs import saved_copy
from vtopo.lab import open_lab
from vtopo.model import io

pytestmark = pytest.mark.privileged

REPOSITORY = Path(__file__).parents[2]
SLEEP_S = 30
"""How long c2's startup command keeps the agent's deploy going at most: time for the first designer to die and the
second to start and look."""

OPEN = IMPORTS + """
def status():
    return subprocess.run([sys.executable, "-m", "vtopo", "status", "restart-lab"], capture_output=True, text=True,
                          timeout=60).stdout

app = QApplication([])
asked = []
def answer(box):  # the window's questions, each answered as sys.argv[5] says (the first designer asks none)
    asked.append(box.text())
    QTest.mouseClick(box.button(getattr(QMessageBox.StandardButton, sys.argv[5])), Qt.MouseButton.LeftButton)
    when_open(QMessageBox, answer)
when_open(QMessageBox, answer)
""" + WINDOW + """deploy = window.menu_actions.deploy
"""

FIRST = OPEN + """
wait_for(lambda: deploy.isEnabled() and not window.analyzer.pending)
toolbar = window.findChild(QToolBar, "main-toolbar")
QTest.mouseClick(toolbar.widgetForAction(deploy), Qt.MouseButton.LeftButton)
wait_for(lambda: "deploying" in status())
assert asked and "c2" in asked[0], asked
print("deploying", flush=True)
while True:  # until killed
    QTest.qWait(50)
"""

SECOND = OPEN + """
nodes = [node.name for node in window.editor.topology.nodes.values() if node.kind == "container"]
wait_for(lambda: window.deploy.state_of("c2") is not NodeState.NOT_DEPLOYED, 5)
first = {name: window.deploy.state_of(name).value for name in nodes}
seen, statuses, deploy_enabled = set(), [], []
deadline = time.monotonic() + float(sys.argv[4])
while window.deploy.state_of("c2") is not NodeState.RUNNING and time.monotonic() < deadline:
    seen |= {window.deploy.state_of(name).value for name in nodes}
    deploy_enabled.append(deploy.isEnabled())
    statuses.append(status())
    if len(statuses) == 3:  # the deploy seen going on: c2's startup command may end
        Path(sys.argv[6]).touch()
    QTest.qWait(200)
QTest.qWait(1000)
print(json.dumps({"asked": asked, "first": first, "seen": sorted(seen), "deploy_enabled": deploy_enabled, "statuses": statuses,
                  "running": {name: window.deploy.state_of(name).value for name in nodes}}))
"""


def slow_lab(directory: Path, release: Path) -> Path:
    """bridge-veth, its c2's startup command waiting until `release` is there (at most SLEEP_S)."""
    path = saved_copy("bridge-veth", directory, name="restart-lab", prefix="vrl")
    topology = open_lab(path).topology
    next(node for node in topology.nodes.values() if node.name == "c2").startup_commands = [
        f"i=0; while [ ! -e {release} ] && [ $i -lt {SLEEP_S * 10} ]; do sleep 0.1; i=$((i + 1)); done"]
    io.save(topology, path)
    path.chmod(0o644)
    return path


def test_a_designer_killed_mid_deploy_and_started_again_shows_deploying_then_running(agent, users, readable_dir):
    a = users["a"]
    before = snapshot()
    release = Path(f"/dev/shm/vtopo-restart-{os.urandom(4).hex()}")
    lab = slow_lab(readable_dir, release)
    os.chown(readable_dir, a.pw_uid, a.pw_gid)
    env = {**agent.env, "QT_QPA_PLATFORM": "offscreen", "XDG_RUNTIME_DIR": str(readable_dir),
           "HOME": str(readable_dir)}

    def designer(script: str, answer: str) -> subprocess.Popen[str]:
        return subprocess.Popen(["runuser", "-u", a.pw_name, "--", sys.executable, "-c", script, str(REPOSITORY),
                                 str(readable_dir), str(lab), str(SLEEP_S + 30), answer, str(release)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/",
                                start_new_session=True)

    first = designer(FIRST, "Yes")  # allow c2's startup command, for this deploy
    try:
        assert first.stdout is not None
        said = first.stdout.readline()
        assert said.strip() == "deploying", first.communicate(timeout=10)[1][-3000:]
        os.killpg(first.pid, signal.SIGKILL)  # the designer and everything it started, at once
        first.wait(timeout=10)
        second = designer(SECOND, "No")  # e.g. restore an autosave: no
        out, err = second.communicate(timeout=SLEEP_S + 120)
        assert second.returncode == 0, err[-4000:]
        seen = json.loads(out.splitlines()[-1])
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
        agent.vtopo(a.pw_name, "destroy", "restart-lab")
        release.unlink(missing_ok=True)
    assert seen["first"]["c2"] == "deploying", seen
    assert "degraded" not in seen["seen"] and "incomplete" not in seen["seen"], seen["seen"]
    assert not any(seen["deploy_enabled"]), "Deploy is enabled while the agent still deploys"
    assert seen["statuses"] and "deploying" in seen["statuses"][0], seen["statuses"]
    assert not any("interrupted" in text or "degraded" in text for text in seen["statuses"]), seen["statuses"]
    assert set(seen["running"].values()) == {"running"}, (seen["running"], seen["seen"], seen["statuses"][-1])
    assert "restart-lab" not in agent.vtopo(a.pw_name, "status").stdout
    assert snapshot() - before == {}
