"""Lab ▸ Checkpoints… with the mouse and keys, on a deployed OSPF ring: a checkpoint typed and made (one undo step),
a cost typed into r1's vtysh, Restore (only r1 changes, and the state it replaced is kept as before-restore), Undo
restore, and the Exercise dock's move to a stage that starts from the checkpoint, which restores it."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from residue import snapshot
from tests.gui.helpers import click_menu_entry, deploy_or_destroy
from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels.checkpoints import CheckpointsDialog
from vtopo.model import io
from vtopo.model.checkpoints import UNDO
from vtopo.model.stages import Stage
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

LAB = "gui-checkpoints"
COST = "ip ospf cost 60"


def r1_config() -> str:
    from vtopo.deployed import DeployedLab

    shown = subprocess.run(DeployedLab.find(LAB).command_in("r1", ["vtysh", "-c", "show running-config"]),
                           capture_output=True, text=True, check=True)
    return shown.stdout


def type_cost() -> None:
    from vtopo.deployed import DeployedLab

    typed = subprocess.run(DeployedLab.find(LAB).command_in("r1", ["vtysh", "-c", "configure terminal", "-c",
                                                                   "interface eth1", "-c", COST]),
                           capture_output=True, text=True)
    assert typed.returncode == 0, typed.stderr


def test_checkpoints_are_made_restored_and_undone_from_the_lab_menu(make_window: Callable[..., MainWindow],
                                                                    qtbot: QtBot, tmp_path: Path) -> None:
    from vtopo.gui.panels.deploy import load_deployer

    topology = io.load(TOPOLOGIES / "ospf-ring.vtopo")
    topology.name, topology.prefix = LAB, "vgc"
    topology.stages = [Stage("Look around"), Stage("Start from the checkpoint", checkpoint="good")]
    path = tmp_path / f"{LAB}.vtopo"
    io.save(topology, path)
    before = snapshot()
    window = make_window(path, deployer_loader=load_deployer)
    try:
        deploy_or_destroy(window, qtbot, True)
        seen: list[CheckpointsDialog] = []
        said: list[str] = []
        window.checkpoints.dialog_opened.connect(seen.append)
        window.checkpoints.finished.connect(said.append)
        click_menu_entry(qtbot, window, "&Lab", window.menu_actions.checkpoints)
        qtbot.waitUntil(lambda: bool(seen))
        dialog = seen[0]
        assert dialog.checkpoints.count() == 0 and dialog.make.isEnabled()

        steps = window.editor.undo_stack.count()
        qtbot.mouseClick(dialog.name, Qt.MouseButton.LeftButton)
        qtbot.keyClicks(dialog.name, "good")
        qtbot.keyClick(dialog.name, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: bool(said) and dialog.checkpoints.count() == 1, timeout=30_000)
        assert [checkpoint.name for checkpoint in window.editor.topology.checkpoints] == ["good"]
        assert window.editor.undo_stack.count() == steps + 1, "making a checkpoint is one undo step"
        assert said[-1].startswith(f"kept checkpoint good of lab {LAB}: 5 running node(s)")

        type_cost()
        item = dialog.checkpoints.item(0)
        qtbot.mouseClick(dialog.checkpoints.viewport(), Qt.MouseButton.LeftButton,
                         pos=dialog.checkpoints.visualItemRect(item).center())
        qtbot.waitUntil(dialog.restore.isEnabled)
        qtbot.mouseClick(dialog.restore, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "to checkpoint good" in said[-1], timeout=60_000)
        shown = dialog.said.toPlainText()
        assert "r1 took the checkpoint's state, restarting its daemons with it:" in shown, shown
        assert f"-   {COST}" in shown and not any(line.startswith(("r2 ", "r3 ")) for line in shown.splitlines())
        assert COST not in r1_config()
        assert [checkpoint.name for checkpoint in window.editor.topology.checkpoints] == ["good", UNDO]
        assert window.editor.undo_stack.count() == steps + 2 and \
            window.editor.undo_stack.undoText() == "Restore checkpoint good"

        qtbot.waitUntil(dialog.undo.isEnabled)
        qtbot.mouseClick(dialog.undo, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: f"to checkpoint {UNDO}" in said[-1], timeout=60_000)
        assert COST in r1_config(), "Undo restore puts the cost back"

        dialog.close()
        panel = window.exercise_panel
        window.exercise_dock.raise_()
        qtbot.waitUntil(panel.next_button.isEnabled)
        qtbot.mouseClick(panel.next_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "to checkpoint good" in said[-1], timeout=60_000)
        assert COST not in r1_config(), "stage 2 starts from checkpoint good"
        assert "It starts from checkpoint good" in panel.summary.text()
    finally:
        if window.deploy.deployed_lab:
            deploy_or_destroy(window, qtbot, False)
    assert snapshot() - before == {}
