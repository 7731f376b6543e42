"""The terminal dock on a deployed lab: a container's shell and a router's vtysh, driven by mouse and keys."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.gui.helpers import answer_next_dialog, choose, double_click, right_click, when_menu_opens
from tests.gui.test_terminal_widget import type_line, wait_for
from vtopo.gui.canvas.states import NodeState
from vtopo.gui.console.widget import TerminalWidget
from vtopo.gui.main_window import MainWindow

Key = Qt.Key
BOOT_S = 180.0


@contextmanager
def deployed_from_the_view(make_window: Callable[..., MainWindow], qtbot: QtBot, lab: str | Path, node: str,
                           timeout_ms: int) -> Iterator[MainWindow]:
    """The lab (an example's name, or a file) opened and deployed with F5 on the canvas, `node` running; destroyed
    afterwards."""
    from vtopo.gui.panels.deploy import load_deployer

    window = make_window(lab, deployer_loader=load_deployer)
    qtbot.waitUntil(lambda: not window.deploy.busy, timeout=30_000)
    window.resize(1400, 1000)
    window.view.setFocus()
    try:
        with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=timeout_ms):
            qtbot.keyClick(window.view, Key.Key_F5)
        assert window.deploy.state_of(node) is NodeState.RUNNING, window.log.toPlainText()
        yield window
    finally:
        window.terminals.shutdown()  # hangs up: a VM's console is free for the next client
        with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=120_000):
            answer_next_dialog("Destroy")
            window.menu_actions.destroy.trigger()
    assert window.deploy.states == {}


def wait_for_the_shell(qtbot: QtBot, console: TerminalWidget) -> None:
    """The guest may still be booting under TCG: press Return until its shell shows a prompt."""
    deadline = time.monotonic() + BOOT_S
    while not any(line.endswith("#") for line in console.text()):
        assert time.monotonic() < deadline, "\n".join(console.text())
        qtbot.keyClick(console, Key.Key_Return)
        qtbot.wait(2000)


@pytest.mark.privileged
def test_a_shell_and_vtysh_in_the_dock_of_a_deployed_lab(make_window: Callable[..., MainWindow],
                                                         qtbot: QtBot) -> None:
    with deployed_from_the_view(make_window, qtbot, "l2-vs-l3", "h1", timeout_ms=120_000) as window:
        view = window.view
        double_click(view, window.editor.scene.nodes["h1"].pos())
        assert window.terminals.tabText(0) == "h1"
        shell = window.terminals.terminals()[0]
        assert shell.hasFocus()
        qtbot.waitUntil(lambda: any(shell.text()), timeout=20_000)  # the prompt
        type_line(qtbot, shell, "echo hel''lo from $(hostname -I)")
        wait_for(qtbot, shell, "hello from 10.")
        type_line(qtbot, shell, "tput cols")
        qtbot.waitUntil(lambda: str(shell.screen_model.columns) in shell.text())
        assert shell.screen_model.columns == shell.width() // shell.cell_width > 20

        when_menu_opens(choose("Open &terminal"))
        right_click(view, window.editor.scene.nodes["r1"].pos())
        qtbot.waitUntil(lambda: window.terminals.count() == 2)
        vtysh = window.terminals.terminals()[1]
        qtbot.waitUntil(lambda: any(line.endswith("#") for line in vtysh.text()), timeout=20_000)
        qtbot.keyClicks(vtysh, "sh")
        qtbot.keyClick(vtysh, Key.Key_Tab)
        qtbot.keyClicks(vtysh, "vers")
        qtbot.keyClick(vtysh, Key.Key_Tab)
        qtbot.waitUntil(lambda: any(line.endswith("# show version") for line in vtysh.text()))
        qtbot.keyClick(vtysh, Key.Key_Return)
        wait_for(qtbot, vtysh, "FRRouting")
        for terminal in (vtysh, shell):
            with qtbot.waitSignal(terminal.finished, timeout=10_000):
                type_line(qtbot, terminal, "exit")


@pytest.mark.privileged
def test_a_vms_serial_console_in_the_dock(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    with deployed_from_the_view(make_window, qtbot, "vm-router", "vmr", timeout_ms=300_000) as window:
        double_click(window.view, window.editor.scene.nodes["vmr"].pos())
        console = window.terminals.terminals()[0]
        wait_for_the_shell(qtbot, console)
        type_line(qtbot, console, "echo hel''lo-$((3*4))")
        wait_for(qtbot, console, "hello-12", timeout=30_000)
