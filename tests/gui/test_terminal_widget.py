"""The embedded terminal with real key events: a shell, Tab completion, vim and top on pyte's screen."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterator

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QGuiApplication, QWheelEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from vtopo.gui.console.dock import TerminalTabs
from vtopo.gui.console.keys import key_bytes
from vtopo.gui.console.widget import TerminalWidget

Key = Qt.Key
Mod = Qt.KeyboardModifier
CTRL_SHIFT = Mod.ControlModifier | Mod.ShiftModifier
SHELL = ["env", "HISTFILE=", "bash", "--norc", "--noprofile", "-i"]  # its history is not saved in the user's home


@pytest.fixture
def tabs(qtbot: QtBot) -> Iterator[TerminalTabs]:
    tabs = TerminalTabs()
    qtbot.addWidget(tabs)
    tabs.resize(900, 500)
    tabs.show()
    qtbot.waitExposed(tabs)
    yield tabs
    tabs.shutdown()


def type_line(qtbot: QtBot, terminal: TerminalWidget, line: str) -> None:
    qtbot.keyClicks(terminal, line)
    qtbot.keyClick(terminal, Key.Key_Return)


def wait_for(qtbot: QtBot, terminal: TerminalWidget, text: str, timeout: int = 10_000) -> None:
    qtbot.waitUntil(lambda: any(text in line for line in terminal.text()), timeout=timeout)


def foreground_command(terminal: TerminalWidget) -> str:
    group = os.tcgetpgrp(terminal.process.master)
    try:
        return Path(f"/proc/{group}/comm").read_text().strip()
    except OSError:
        return ""


def open_shell(qtbot: QtBot, tabs: TerminalTabs) -> TerminalWidget:
    terminal = tabs.open("sh", SHELL)
    qtbot.waitUntil(lambda: any(line for line in terminal.text()), timeout=10_000)  # the prompt
    return terminal


def test_keys_send_what_xterm_sends() -> None:
    none = Mod.NoModifier
    assert key_bytes(Key.Key_C, Mod.ControlModifier, "c") == b"\x03"
    assert key_bytes(Key.Key_Up, none, "") == b"\x1b[A"
    assert key_bytes(Key.Key_Up, none, "", application_cursor=True) == b"\x1bOA"
    assert key_bytes(Key.Key_Tab, none, "\t") == b"\t"
    assert key_bytes(Key.Key_B, Mod.AltModifier, "b") == b"\x1bb"
    assert key_bytes(Key.Key_Shift, Mod.ShiftModifier, "") == b""


def test_a_shell_echoes_and_its_size_follows_the_widget(qtbot: QtBot, tabs: TerminalTabs) -> None:
    terminal = open_shell(qtbot, tabs)
    assert terminal.hasFocus()
    type_line(qtbot, terminal, "echo hel''lo")
    wait_for(qtbot, terminal, "hello")
    type_line(qtbot, terminal, "tput cols; tput lines")
    expected = f"{terminal.screen_model.columns}"
    qtbot.waitUntil(lambda: expected in terminal.text() and f"{terminal.screen_model.lines}" in terminal.text())
    tabs.resize(600, 400)
    qtbot.waitUntil(lambda: terminal.screen_model.columns == terminal.width() // terminal.cell_width)
    type_line(qtbot, terminal, "clear; stty size")
    qtbot.waitUntil(lambda: f"{terminal.screen_model.lines} {terminal.screen_model.columns}" in terminal.text())


def test_tab_completes_and_ctrl_c_interrupts(qtbot: QtBot, tabs: TerminalTabs) -> None:
    terminal = open_shell(qtbot, tabs)
    qtbot.keyClicks(terminal, "echo $BASH_VERSIN")
    qtbot.keyClick(terminal, Key.Key_Tab)
    qtbot.waitUntil(lambda: any("$BASH_VERSINFO" in line for line in terminal.text()))
    qtbot.keyClick(terminal, Key.Key_Return)
    type_line(qtbot, terminal, "sleep 30; echo slept-$((6*7))")
    qtbot.waitUntil(lambda: foreground_command(terminal) == "sleep")  # exec'd, not a shell about to become it
    qtbot.keyClick(terminal, Key.Key_C, Mod.ControlModifier)
    type_line(qtbot, terminal, "echo after-$((40+3))")
    wait_for(qtbot, terminal, "after-43")
    assert not any("slept-42" in line for line in terminal.text())


@pytest.mark.skipif(shutil.which("vim") is None, reason="vim is not installed")
def test_vim_edits_on_the_alternate_screen_and_gives_the_shell_back(qtbot: QtBot, tabs: TerminalTabs,
                                                                   tmp_path: object) -> None:
    terminal = open_shell(qtbot, tabs)
    type_line(qtbot, terminal, "echo before-vim")
    wait_for(qtbot, terminal, "before-vim")
    path = f"{tmp_path}/note.txt"
    type_line(qtbot, terminal, f"vim -u NONE -N {path}")
    qtbot.waitUntil(lambda: terminal.text()[1].startswith("~"), timeout=10_000)
    qtbot.keyClicks(terminal, "ifirst")
    qtbot.keyClick(terminal, Key.Key_Return)
    qtbot.keyClicks(terminal, "second")
    qtbot.keyClick(terminal, Key.Key_Escape)
    qtbot.keyClick(terminal, Key.Key_Up)  # the cursor key moves in vim's normal mode
    qtbot.keyClicks(terminal, "A!")
    qtbot.keyClick(terminal, Key.Key_Escape)
    qtbot.waitUntil(lambda: terminal.text()[:2] == ["first!", "second"])
    type_line(qtbot, terminal, ":wq")
    wait_for(qtbot, terminal, "before-vim")
    qtbot.waitUntil(lambda: not any(line.startswith("~") for line in terminal.text()))
    with open(path) as written:
        assert written.read() == "first!\nsecond\n"


@pytest.mark.skipif(shutil.which("top") is None, reason="top is not installed")
def test_top_fills_the_screen_and_quits(qtbot: QtBot, tabs: TerminalTabs) -> None:
    terminal = open_shell(qtbot, tabs)
    type_line(qtbot, terminal, "top -d 0.5")
    qtbot.waitUntil(lambda: terminal.text()[0].startswith("top - ") and any("PID" in line for line in terminal.text()),
                    timeout=10_000)
    header = next(index for index, line in enumerate(terminal.text()) if "PID" in line)
    qtbot.waitUntil(lambda: any(line.strip() for line in terminal.text()[header + 1:]))
    qtbot.keyClick(terminal, Key.Key_Q)
    qtbot.waitUntil(lambda: not terminal.text()[0].startswith("top - "))


def test_closing_the_tab_hangs_up_the_session(qtbot: QtBot, tabs: TerminalTabs) -> None:
    terminal = open_shell(qtbot, tabs)
    process = terminal.process.process
    tabs.close_tab(0)
    assert process.returncode is not None
    assert tabs.count() == 0


def test_exit_marks_the_tab(qtbot: QtBot, tabs: TerminalTabs) -> None:
    terminal = open_shell(qtbot, tabs)
    with qtbot.waitSignal(terminal.finished, timeout=10_000):
        type_line(qtbot, terminal, "exit 3")
    assert tabs.tabText(0).endswith("(exited)")
    wait_for(qtbot, terminal, "[exited with code 3]")


def wheel(terminal: TerminalWidget, notches: int) -> None:
    centre = QPointF(terminal.rect().center())
    event = QWheelEvent(centre, QPointF(terminal.mapToGlobal(centre.toPoint())), QPoint(), QPoint(0, 120 * notches),
                        Qt.MouseButton.NoButton, Mod.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(terminal, event)


def test_the_wheel_and_shift_page_up_scroll_back_and_output_returns(qtbot: QtBot, tabs: TerminalTabs) -> None:
    terminal = open_shell(qtbot, tabs)
    type_line(qtbot, terminal, "seq 1 300")
    qtbot.waitUntil(lambda: "300" in terminal.text())
    wheel(terminal, 1)
    assert terminal.screen_model.scrolled_back and "300" not in terminal.text()
    qtbot.keyClick(terminal, Key.Key_PageUp, Mod.ShiftModifier)
    qtbot.keyClick(terminal, Key.Key_PageUp, Mod.ShiftModifier)
    early = [int(line) for line in terminal.text() if line.isdigit()]
    assert early and max(early) < 300 - terminal.screen_model.lines
    wheel(terminal, -1)
    type_line(qtbot, terminal, "echo back-$((1+1))")
    wait_for(qtbot, terminal, "back-2")
    assert not terminal.screen_model.scrolled_back


def test_ctrl_shift_v_pastes_without_running_the_pasted_lines(qtbot: QtBot, tabs: TerminalTabs) -> None:
    terminal = open_shell(qtbot, tabs)
    type_line(qtbot, terminal, "bind 'set enable-bracketed-paste on'")
    QGuiApplication.clipboard().setText("echo pasted-$((2+3))\n")
    qtbot.keyClick(terminal, Key.Key_V, CTRL_SHIFT)
    qtbot.waitUntil(lambda: any(line.endswith("echo pasted-$((2+3))") for line in terminal.text()))
    assert not any("pasted-5" in line for line in terminal.text())  # bracketed: the newline did not run it
    qtbot.keyClick(terminal, Key.Key_Return)
    wait_for(qtbot, terminal, "pasted-5")


def test_dragging_selects_and_ctrl_shift_c_copies(qtbot: QtBot, tabs: TerminalTabs) -> None:
    terminal = open_shell(qtbot, tabs)
    type_line(qtbot, terminal, "echo sel-$((6*7)) tail")
    qtbot.waitUntil(lambda: "sel-42 tail" in terminal.text())
    line = terminal.text().index("sel-42 tail")
    middle = int((line + 0.5) * terminal.cell_height)
    start, end = QPoint(1, middle), QPoint(int(6 * terminal.cell_width) - 1, middle)
    qtbot.mousePress(terminal, Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(terminal, end)
    qtbot.mouseRelease(terminal, Qt.MouseButton.LeftButton, pos=end)
    assert terminal.selected_text() == "sel-42"
    qtbot.keyClick(terminal, Key.Key_C, CTRL_SHIFT)
    assert QGuiApplication.clipboard().text() == "sel-42"
    assert terminal.process.running  # Ctrl+Shift+C copied; it sent no interrupt


def test_coloured_text_is_drawn_in_its_own_cells(qtbot: QtBot, tabs: TerminalTabs) -> None:
    terminal = tabs.open("cat", ["cat"])
    terminal.feed(b"x" * 40 + b"\x1b[1;31m" + b"W" * 3 + b"\x1b[0m" + b"z" * 5)
    image = terminal.grab().toImage()
    row = int(terminal.cell_height / 2)
    red = [x for x in range(image.width()) if (lambda c: c.red() > 150 and c.green() < 90)(image.pixelColor(x, row))]
    assert red, "no red text drawn"
    assert 40 * terminal.cell_width - 1 <= min(red) and max(red) <= 43 * terminal.cell_width + 1
