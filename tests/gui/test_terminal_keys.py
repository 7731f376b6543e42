"""While a terminal of the dock has the focus, the designer's own keys are the designer's (Ctrl+S saves, Ctrl+Shift+P
presents), and the keys a shell reads are the shell's (Ctrl+Z, Ctrl+P): real key events into the terminal widget."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.gui.test_terminal_dock import deployed_from_the_view
from tests.gui.test_terminal_widget import SHELL, type_line, wait_for
from vtopo.gui.console.widget import TerminalWidget
from vtopo.gui.main_window import MainWindow
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

Key = Qt.Key
Ctrl, Shift = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


def lab_file(tmp_path: Path, example: str) -> Path:
    path = tmp_path / f"{example}.vtopo"
    shutil.copy(TOPOLOGIES / f"{example}.vtopo", path)
    return path


def shell_in_the_dock(window: MainWindow, qtbot: QtBot) -> TerminalWidget:
    """A shell in a tab of the Terminal dock, focused in the active window, its prompt shown."""
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=3000)
    shell = window.terminals.open("shell", SHELL)
    qtbot.waitUntil(shell.hasFocus, timeout=3000)
    qtbot.waitUntil(lambda: any(shell.text()), timeout=10_000)
    return shell


def test_ctrl_s_in_the_terminal_saves_the_lab_and_the_shell_goes_on(make_window: Callable[..., MainWindow],
                                                                   qtbot: QtBot, tmp_path: Path) -> None:
    """Ctrl+S sent on would be XOFF: the session would freeze, and the lab would not be saved."""
    path = lab_file(tmp_path, "bridge-veth")
    window = make_window(path)
    window.editor.place_node("container", QPointF(400, 400))
    assert window.files.modified
    shell = shell_in_the_dock(window, qtbot)
    qtbot.keyClick(shell, Key.Key_S, Ctrl)
    assert not window.files.modified
    assert len(io.load(path).nodes) == len(window.editor.topology.nodes)
    type_line(qtbot, shell, "echo not-$((6*7))-frozen")
    wait_for(qtbot, shell, "not-42-frozen")


def test_ctrl_shift_p_in_the_terminal_presents_and_ctrl_z_stays_the_shells(make_window: Callable[..., MainWindow],
                                                                           qtbot: QtBot, tmp_path: Path) -> None:
    """Ctrl+Shift+P sent on would be ^P, bash's previous command; Ctrl+Z taken by the designer would undo an edit."""
    window = make_window(None)
    window.editor.place_node("container", QPointF(0, 0))
    shell = shell_in_the_dock(window, qtbot)
    runs = tmp_path / "runs"
    type_line(qtbot, shell, f"echo ran >> {runs}")
    qtbot.waitUntil(runs.exists)
    presentation = window.menu_actions.presentation
    qtbot.keyClick(shell, Key.Key_P, Ctrl | Shift)
    assert presentation.isChecked()
    qtbot.keyClick(shell, Key.Key_P, Ctrl | Shift)
    assert not presentation.isChecked()
    qtbot.keyClick(shell, Key.Key_Z, Ctrl)
    assert window.editor.undo_stack.index() == 1 and len(window.editor.topology.nodes) == 1
    qtbot.keyClick(shell, Key.Key_Return)  # runs the previous command again if ^P reached bash
    type_line(qtbot, shell, f"echo runs=$(wc -l < {runs})")
    qtbot.waitUntil(lambda: any(line.startswith("runs=") for line in shell.text()))  # the answer, not the command
    assert [line for line in shell.text() if line.startswith("runs=")] == ["runs=1"]


@pytest.mark.privileged
def test_ctrl_s_in_vtysh_on_a_deployed_router_saves_and_vtysh_answers(make_window: Callable[..., MainWindow],
                                                                     qtbot: QtBot, tmp_path: Path) -> None:
    path = lab_file(tmp_path, "l2-vs-l3")
    with deployed_from_the_view(make_window, qtbot, path, "r1", timeout_ms=120_000) as window:
        window.editor.place_node("container", QPointF(600, 600))
        window.editor.scene.select_ids(["r1"])
        qtbot.keyClick(window.view, Key.Key_T, Ctrl)
        vtysh = window.terminals.terminals()[0]
        qtbot.waitUntil(lambda: any(line.endswith("#") for line in vtysh.text()), timeout=20_000)
        qtbot.keyClick(vtysh, Key.Key_S, Ctrl)
        assert not window.files.modified and len(io.load(path).nodes) == len(window.editor.topology.nodes)
        type_line(qtbot, vtysh, "show version")
        wait_for(qtbot, vtysh, "FRRouting")
        with qtbot.waitSignal(vtysh.finished, timeout=10_000):
            type_line(qtbot, vtysh, "exit")
