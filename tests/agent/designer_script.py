"""What the designer scripts of the agent's tests share: run offscreen as a member, each imports the designer, waits
on conditions with `wait_for`, and opens a window on the lab its command line names (argv: repository, work
directory, lab file)."""

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
