"""File > Import from the keyboard: a containerlab topology or GNS3 project opens as a new, unsaved lab on the canvas,
with a node-by-node account of what did not come over; a file it names outside its folder is read only once the user
picks that very file."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFileDialog

from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels import leaving

from tests.gui.conftest import ASK_FOR_REAL
from tests.gui.helpers import answer_next_dialog, choose, when_menu_opens
from tests.gui.test_first_day import HostDeployer, back_to_the_canvas

INTEROP = Path(__file__).parent.parent / "interop"


def import_from_the_file_menu(window: MainWindow, qtbot: Any) -> None:
    when_menu_opens(choose("&Import containerlab or GNS3…"))
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.AltModifier)


def test_file_import_opens_a_containerlab_lab_unsaved_with_its_notices(
        make_window: Callable[..., MainWindow], qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    window = make_window(None)
    topology_file = INTEROP / "containerlab" / "ospf-lab" / "ospf-lab.clab.yml"
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(topology_file), ""))
    summary = answer_next_dialog("OK")
    import_from_the_file_menu(window, qtbot)
    qtbot.waitUntil(lambda: bool(summary), timeout=5000)
    assert "9 nodes, 9 links imported" in summary[0] and "• node sw: an Open vSwitch switch" in summary[0]
    topology = window.editor.topology
    assert topology.name == "ospf-lab" and len(window.editor.scene.nodes) == 9
    assert window.editor.scene.nodes["r1"].pos().x() == 300  # from its graph-posX label
    assert window.isWindowModified() and window.files.path is None  # Save asks where


def test_a_file_outside_the_folder_is_read_once_the_user_picks_it(
        make_window: Callable[..., MainWindow], qtbot: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    window = make_window(None)
    secret = tmp_path / "elsewhere" / "r1.conf"
    secret.parent.mkdir()
    secret.write_text("hostname r1\n")
    (tmp_path / "lab").mkdir()
    os.symlink(secret, tmp_path / "lab" / "r1.conf")
    topology_file = tmp_path / "lab" / "one.clab.yml"
    topology_file.write_text("name: one\ntopology:\n  nodes:\n    r1: {kind: frr, startup-config: r1.conf}\n")
    asked: list[str] = []

    def pick(parent: Any, caption: str, start: str = "", *args: Any) -> tuple[str, str]:
        asked.append(caption)
        return (str(topology_file) if len(asked) == 1 else start), ""
    monkeypatch.setattr(QFileDialog, "getOpenFileName", pick)
    summary = answer_next_dialog("OK")
    import_from_the_file_menu(window, qtbot)
    qtbot.waitUntil(lambda: bool(summary), timeout=5000)
    assert asked[1] == f"node r1 reads {secret}, outside the topology's folder: choose it to allow it"
    router = window.editor.topology.node_named("r1")
    assert router is not None and router.settings["config"] == "hostname r1\n"


def test_import_over_a_running_lab_asks_as_new_lab_does_and_counts_in_english(
        make_window: Callable[..., MainWindow], qtbot: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(leaving, "ask", ASK_FOR_REAL)
    window = make_window("bridge-veth", deployer_loader=lambda: (HostDeployer(), ""))
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        qtbot.keyClick(window.view, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: window.deploy.deployed_lab == "bridge-veth", timeout=5000)
    topology_file = tmp_path / "one.clab.yml"
    topology_file.write_text("name: one\ntopology:\n  nodes:\n    r1: {kind: linux}\n")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(topology_file), ""))
    asked = answer_next_dialog("Keep working")
    import_from_the_file_menu(window, qtbot)
    qtbot.waitUntil(lambda: bool(asked), timeout=5000)
    assert "Lab bridge-veth is running" in asked[0] and window.editor.topology.name == "bridge-veth"
    back_to_the_canvas(window, qtbot)
    asked = answer_next_dialog("Leave it running")
    summary: list[list[str]] = []

    def answer_the_summary_once_asked() -> None:
        if asked:
            summary.append(answer_next_dialog("OK"))
        else:
            QTimer.singleShot(20, answer_the_summary_once_asked)
    answer_the_summary_once_asked()
    import_from_the_file_menu(window, qtbot)
    qtbot.waitUntil(lambda: bool(summary) and bool(summary[0]), timeout=5000)
    assert summary[0][0].startswith("one.clab.yml: 1 node, 0 links imported."), summary[0][0]
    assert window.editor.topology.name == "one"
