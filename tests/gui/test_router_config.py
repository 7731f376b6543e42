"""A router's configuration in the designer, with real mouse and key events: the inspector shows the OSPF text vtopo
generates, "Edit configuration" makes it the router's own in one undo step; Lab ▸ Save running configuration shows
what a student typed into vtysh as a diff per node and writes it into the lab as one undo step."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QFileDialog
from pytestqt.qtbot import QtBot

from residue import snapshot
from tests.gui.helpers import click, click_menu_entry, deploy_or_destroy, inspected_setting
from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels.save_running import RunningDiff
from vtopo.gui.panels.setting_editors import TextFileEditor


def config_editor(window: MainWindow, qtbot: QtBot, node_id: str) -> TextFileEditor:
    click(window.view, window.editor.scene.nodes[node_id].scenePos())
    editor = inspected_setting(qtbot, window, node_id, "config")
    assert isinstance(editor, TextFileEditor)
    return editor


def test_edit_configuration_makes_the_generated_text_the_routers_own(make_window: Callable[..., MainWindow],
                                                                     qtbot: QtBot) -> None:
    window = make_window()  # l2-vs-l3
    editor = config_editor(window, qtbot, "r1")
    generated = editor.text.toPlainText()
    assert "router ospf" in generated and "network 10.0.12.0/30 area 0.0.0.0" in generated
    assert editor.text.isReadOnly() and editor.edit.isVisible()
    steps = window.editor.undo_stack.count()
    qtbot.mouseClick(editor.edit, Qt.MouseButton.LeftButton)
    node = window.editor.topology.nodes["r1"]
    assert node.settings["config"] == generated and window.editor.undo_stack.count() == steps + 1
    qtbot.waitUntil(lambda: not editor.text.isReadOnly() and not editor.edit.isVisible())

    editor.text.setFocus()
    editor.text.moveCursor(editor.text.textCursor().MoveOperation.End)
    qtbot.keyClicks(editor.text, "ip route 10.9.0.0/16 10.0.12.2")
    qtbot.keyClick(editor.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert node.settings["config"].endswith("ip route 10.9.0.0/16 10.0.12.2")
    window.view.setFocus()
    qtbot.keyClick(window.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert node.settings["config"] == generated
    qtbot.keyClick(window.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert "config" not in node.settings
    qtbot.waitUntil(lambda: editor.text.isReadOnly() and editor.text.toPlainText() == generated)


@pytest.mark.privileged
def test_save_running_configuration_shows_a_diff_and_is_one_undo_step(make_window: Callable[..., MainWindow],
                                                                       qtbot: QtBot, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """After one `ip ospf cost 50` on r1: r1 alone, as a diff of that line against what was deployed; once written,
    saved and opened again, the lab is what runs, and Deploy finds nothing to apply."""
    from vtopo.deployed import DeployedLab
    from vtopo.gui.panels.deploy import load_deployer

    before = snapshot()
    window = make_window("l2-vs-l3", deployer_loader=load_deployer)
    try:
        deploy_or_destroy(window, qtbot, True)
        lab = DeployedLab.find("l2-vs-l3")
        typed = subprocess.run(lab.command_in("r1", ["vtysh", "-c", "configure terminal", "-c", "interface eth1",
                                                     "-c", "ip ospf cost 50"]), capture_output=True, text=True)
        assert typed.returncode == 0, typed.stderr
        steps = window.editor.undo_stack.count()
        seen: list[RunningDiff] = []
        window.save_running.dialog_opened.connect(seen.append)
        click_menu_entry(qtbot, window, "&Lab", window.menu_actions.save_running)
        qtbot.waitUntil(lambda: bool(seen), timeout=30_000)
        dialog = seen[0]
        assert [dialog.nodes.item(row).text() for row in range(dialog.nodes.count())] == ["r1"]
        qtbot.mouseClick(dialog.nodes.viewport(), Qt.MouseButton.LeftButton,
                         pos=dialog.nodes.visualItemRect(dialog.nodes.item(0)).center())
        diff = dialog.diff.toPlainText()
        assert [line for line in diff.splitlines()[2:] if line[:1] in "+-"] == ["+   ip ospf cost 50"], diff
        assert len(diff.splitlines()) < 12, diff
        write = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
        qtbot.mouseClick(write, Qt.MouseButton.LeftButton)
        r1 = window.editor.topology.nodes["r1"]
        assert " ip ospf cost 50" in r1.settings["config"]
        assert "config" not in window.editor.topology.nodes["r2"].settings
        assert window.editor.undo_stack.count() == steps + 1
        window.activateWindow()  # back from the dialog, as a click on the canvas would
        qtbot.waitUntil(window.isActiveWindow)
        window.view.setFocus()
        qtbot.keyClick(window.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        assert window.editor.undo_stack.index() == steps, window.editor.undo_stack.undoText()
        assert all("config" not in node.settings for node in window.editor.topology.nodes.values()
                   if node.kind == "router")
        qtbot.keyClick(window.view, Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier)
        assert " ip ospf cost 50" in window.editor.topology.nodes["r1"].settings["config"]

        saved = tmp_path / "l2-vs-l3.vtopo"
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(saved), ""))
        qtbot.keyClick(window.view, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
        assert saved.exists()
        assert window.files.open_path(saved)
        qtbot.waitUntil(lambda: window.deploy.deployed_lab == "l2-vs-l3" and not window.deploy.busy,
                        timeout=30_000)
        assert window.drift.text() == "" and window.deploy.drift() == ""
        logged = len(window.log.toPlainText())
        deploy_or_destroy(window, qtbot, True)
        assert "the running lab already matches; nothing to apply" in window.log.toPlainText()[logged:], \
            window.log.toPlainText()[logged:]
    finally:
        if window.deploy.deployed_lab:
            deploy_or_destroy(window, qtbot, False)
    assert snapshot() - before == {}
