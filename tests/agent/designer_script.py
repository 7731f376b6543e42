"""What the designer scripts of the agent's tests share: run offscreen as a member, each imports the designer, waits
on conditions with `wait_for`, and opens a window on the lab its command line names (argv: repository, work
directory, lab file). `run_designer` runs one as a member."""
import json
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).parents[2]

IMPORTS = """
import json, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QToolBar
from tests.gui.helpers import click, when_open
from vtopo.gui.app import create_window
from vtopo.gui.canvas.states import NodeState

def wait_for(condition, seconds=60):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, window.log.toPlainText()[-2000:]
        QTest.qWait(20)
    return time.monotonic()
"""

WINDOW = """
work, lab = Path(sys.argv[2]), Path(sys.argv[3])
window = create_window(lab, QSettings(str(work / "settings.ini"), QSettings.Format.IniFormat), work / "autosave")
window.resize(1200, 900)
window.show()
QTest.qWaitForWindowExposed(window)
"""

DEPLOY = """
# Deploy, clicked on the toolbar; the lab is up once the designer is idle
toolbar = window.findChild(QToolBar, "main-toolbar")
wait_for(lambda: window.menu_actions.deploy.isEnabled())
QTest.mouseClick(toolbar.widgetForAction(window.menu_actions.deploy), Qt.MouseButton.LeftButton)
wait_for(lambda: not window.deploy.busy and window.deploy.deployed_lab != "")
"""

SAVE_RUNNING = """
def open_from_lab_menu(action, dialog_opened):
    # an entry of the Lab menu, chosen with the keyboard; the dialog it opens
    opened = []
    dialog_opened.connect(opened.append)
    window.view.setFocus()
    def choose(menu):
        menu.setActiveAction(action)
        QTest.keyClick(menu, Qt.Key.Key_Return)
    when_open(type(window.menuBar().actions()[0].menu()), choose, popup=True)
    QTest.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.AltModifier)
    wait_for(lambda: bool(opened), 60)
    return opened[0]

def open_save_running():
    return open_from_lab_menu(window.menu_actions.save_running, window.save_running.dialog_opened)
"""


def run_designer(agent, user: str, script: str, work: Path, lab: Path, *more: str,  # type: ignore
                 timeout: float = 400) -> dict:
    """Run a designer script as `user`, offscreen, through the agent, its settings, autosave and data in `work`, with
    `more` arguments after the lab's path; what it printed last, as JSON."""
    env = {**agent.env, "QT_QPA_PLATFORM": "offscreen", "XDG_RUNTIME_DIR": str(work), "HOME": str(work),
           "VTOPO_DATA_DIR": str(work / "data"), "TERM": "xterm"}
    run = subprocess.run(["runuser", "-u", user, "--", sys.executable, "-c", script, str(REPOSITORY), str(work),
                          str(lab), *more], env=env, capture_output=True, text=True, timeout=timeout, cwd="/")
    assert run.returncode == 0, run.stderr[-4000:]
    return dict(json.loads(run.stdout.splitlines()[-1]))
