"""The designer asks before a lab reaches outside itself: a dialog names the host device and what the mode does."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QLineEdit, QListView, QMessageBox, QToolBar
from pytestqt.qtbot import QtBot

from golden import GOLDEN
from tests.gui.helpers import deploy_with_f5, when_open
from vtopo.gui.main_window import MainWindow
from vtopo.lab_terms import Trust

LAB = GOLDEN / "hostile" / "host-device-macvtap-passthru-on-eth0.vtopo"


@dataclass
class Report:
    lab: str
    nodes: int = 0
    links: int = 0
    seconds: float = 0.0
    notices: list[str] = field(default_factory=list)


class RecordingDeployer:
    """Follows the Deployer API and remembers the consent each deploy was given."""

    def __init__(self) -> None:
        self.consents: list[Any] = []

    def update(self, topology: Any, progress: Callable[[Any], None], consent: Any = None) -> Report:
        self.consents.append(consent)
        return Report(topology.name)

    def status(self, lab: str | None = None) -> list[Any]:
        return []


def _answer(qtbot: QtBot, button: QMessageBox.StandardButton, seen: list[str]) -> None:
    """Click `button` on the consent dialog once it is open."""
    def click(box: QMessageBox) -> None:
        seen.append(f"{box.text()}\n{box.informativeText()}")
        qtbot.mouseClick(box.button(button), Qt.MouseButton.LeftButton)

    when_open(QMessageBox, click)


def test_deploy_asks_for_the_host_device_and_passes_the_answer(make_window: Callable[..., MainWindow],
                                                               qtbot: QtBot) -> None:
    deployer = RecordingDeployer()
    window = make_window(LAB, deployer_loader=lambda: (deployer, ""))
    qtbot.waitUntil(lambda: not window.deploy.busy)  # the status read at start
    assert window.menu_actions.deploy.isEnabled()  # the only error is one the user may clear
    seen: list[str] = []

    _answer(qtbot, QMessageBox.StandardButton.No, seen)
    qtbot.keyClick(window, Qt.Key.Key_F5)
    assert deployer.consents == []
    assert "host device eth0" in seen[0] and "the device leaves the host" in seen[0]

    window.activateWindow()  # the closed dialog had the focus; F5 is a shortcut of the active window
    qtbot.waitUntil(window.isActiveWindow)
    _answer(qtbot, QMessageBox.StandardButton.Yes, seen)
    qtbot.keyClick(window, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: not window.deploy.busy and deployer.consents != [])
    assert deployer.consents[0].host_devices == frozenset({"eth0"})


def test_deploy_shows_the_startup_commands_and_asks_before_they_run(make_window: Callable[..., MainWindow],
                                                                    qtbot: QtBot, tmp_path: Any) -> None:
    import json

    from vtopo.resources import TOPOLOGIES

    document = json.loads((TOPOLOGIES / "bridge-veth.vtopo").read_text())
    document["nodes"][1]["startup_commands"] = ["ip route add 10.9.0.0/24 via 10.0.0.2"]
    path = tmp_path / "startup.vtopo"
    path.write_text(json.dumps(document))
    deployer = RecordingDeployer()
    window = make_window(path, deployer_loader=lambda: (deployer, ""))
    qtbot.waitUntil(lambda: not window.deploy.busy)
    assert window.menu_actions.deploy.isEnabled()
    seen: list[str] = []
    _answer(qtbot, QMessageBox.StandardButton.Yes, seen)
    qtbot.keyClick(window, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: not window.deploy.busy and deployer.consents != [])
    assert seen[0].startswith("This lab wants to run commands inside c1, as you.\n")
    assert "ip route add 10.9.0.0/24 via 10.0.0.2" in seen[0] and "cannot allow this by itself" in seen[0]
    assert deployer.consents[0].startup_commands == frozenset({"c1"})


def _lab_with_images(tmp_path: Path, images: list[Path]) -> Path:
    nodes = [{"id": f"v{i}", "name": f"v{i}", "kind": "vm", "position": {"x": 150 * i, "y": 0},
              "settings": {"image": str(image)}} for i, image in enumerate(images)]
    path = tmp_path / "images.vtopo"
    path.write_text(json.dumps({"format": "vtopo", "version": 2, "lab": {"id": "lab-img", "name": "img"},
                                "nodes": nodes, "links": []}))
    return path


def _in_file_dialog(qtbot: QtBot, act: Callable[[QFileDialog, QLineEdit], None], seen: list[str]) -> None:
    """Once the consent file dialog is open, note what it shows and `act` on it with real key events."""
    def look(dialog: QFileDialog) -> None:
        try:
            name_box = dialog.findChild(QLineEdit, "fileNameEdit")
            files = dialog.findChild(QListView, "listView")  # the folder is listed, then the file is selected in it
            qtbot.waitUntil(lambda: files.selectionModel().hasSelection() and bool(name_box.text()))
            seen.append(f"{dialog.windowTitle()}\n{dialog.directory().absolutePath()}\n{name_box.text()}")
            act(dialog, name_box)
        except BaseException:
            dialog.reject()  # a failed step fails the test instead of leaving the dialog waiting
            raise

    when_open(QFileDialog, look)


def test_a_host_file_is_used_only_when_the_user_chooses_it_in_a_file_dialog(
        make_window: Callable[..., MainWindow], qtbot: QtBot, tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    asked = tmp_path / "images" / "disk.qcow2"
    asked.write_bytes(b"\0" * 512)
    deployer = RecordingDeployer()
    window = make_window(_lab_with_images(tmp_path, [asked, asked]), deployer_loader=lambda: (deployer, ""))
    qtbot.waitUntil(lambda: not window.deploy.busy)
    assert window.menu_actions.deploy.isEnabled()  # the only errors are the user's to clear
    seen: list[str] = []

    _in_file_dialog(qtbot, lambda dialog, box: qtbot.keyClick(box, Qt.Key.Key_Escape), seen)
    deploy_with_f5(qtbot, window)
    assert deployer.consents == [], "cancelling the file dialog deploys nothing"
    assert str(asked) in seen[0] and "QEMU reads it" in seen[0]
    assert seen[0].splitlines()[1:] == [str(asked.parent), asked.name], "the dialog opens on the file the lab names"

    _in_file_dialog(qtbot, lambda dialog, box: qtbot.keyClick(box, Qt.Key.Key_Return), seen)
    deploy_with_f5(qtbot, window)
    qtbot.waitUntil(lambda: not window.deploy.busy and len(deployer.consents) == 1)
    assert deployer.consents[0].images == frozenset({str(asked)})
    assert window.editor.undo_stack.count() == 0, "choosing the file the lab names changes nothing in the lab"


def _startup_lab(tmp_path: Path) -> Path:
    from vtopo.resources import TOPOLOGIES

    document = json.loads((TOPOLOGIES / "bridge-veth.vtopo").read_text())
    document["nodes"][1]["startup_commands"] = ["ip route add 10.9.0.0/24 via 10.0.0.2"]
    path = tmp_path / "startup.vtopo"
    path.write_text(json.dumps(document))
    return path


def _opened_unchecked(make_window: Callable[..., MainWindow], qtbot: QtBot, tmp_path: Path,
                      monkeypatch: pytest.MonkeyPatch, deployer: RecordingDeployer) -> MainWindow:
    """A window on the startup-commands lab whose first check has not started: its delay is made a minute."""
    from vtopo.gui.document import analysis

    window = make_window(None, deployer_loader=lambda: (deployer, ""))
    monkeypatch.setattr(analysis, "FIRST_CHECK_MS_PER_NODE", 15_000.0)
    assert window.files.open_path(_startup_lab(tmp_path))
    qtbot.waitUntil(lambda: not window.deploy.busy)  # the status read of a lab just opened
    assert window.analyzer.pending and window.menu_actions.deploy.isEnabled()
    return window


def test_deploy_pressed_before_the_first_check_waits_for_it_and_asks(
        make_window: Callable[..., MainWindow], qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deployer = RecordingDeployer()
    window = _opened_unchecked(make_window, qtbot, tmp_path, monkeypatch, deployer)
    toolbar = window.findChild(QToolBar, "main-toolbar")
    seen: list[str] = []
    _answer(qtbot, QMessageBox.StandardButton.Yes, seen)
    qtbot.mouseClick(toolbar.widgetForAction(window.menu_actions.deploy), Qt.MouseButton.LeftButton)
    assert deployer.consents == [] and not window.menu_actions.deploy.isEnabled()  # waiting for the check
    qtbot.waitUntil(lambda: not window.deploy.busy and deployer.consents != [])
    assert seen and seen[0].startswith("This lab wants to run commands inside c1, as you.\n"), seen
    assert deployer.consents == [Trust(startup_commands=frozenset({"c1"}))]


def test_f5_before_the_first_check_deploys_nothing_the_user_refuses(
        make_window: Callable[..., MainWindow], qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deployer = RecordingDeployer()
    window = _opened_unchecked(make_window, qtbot, tmp_path, monkeypatch, deployer)
    seen: list[str] = []
    _answer(qtbot, QMessageBox.StandardButton.No, seen)
    deploy_with_f5(qtbot, window)
    qtbot.waitUntil(lambda: bool(seen))
    qtbot.waitUntil(lambda: window.menu_actions.deploy.isEnabled())
    assert deployer.consents == [] and "inside c1" in seen[0]
