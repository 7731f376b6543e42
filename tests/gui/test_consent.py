"""The designer asks before a lab reaches outside itself: a dialog names the host device and what the mode does."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QMessageBox
from pytestqt.qtbot import QtBot

from golden import GOLDEN
from vtopo.gui.main_window import MainWindow

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
    """Click `button` on the consent dialog once it is open (it runs its own event loop)."""
    def click() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(10, click)
            return
        seen.append(f"{box.text()}\n{box.informativeText()}")
        qtbot.mouseClick(box.button(button), Qt.MouseButton.LeftButton)

    QTimer.singleShot(10, click)


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


def _lab_with_images(tmp_path: Path, images: list[Path]) -> Path:
    nodes = [{"id": f"v{i}", "name": f"v{i}", "kind": "vm", "position": {"x": 150 * i, "y": 0},
              "settings": {"image": str(image)}} for i, image in enumerate(images)]
    path = tmp_path / "images.vtopo"
    path.write_text(json.dumps({"format": "vtopo", "version": 2, "lab": {"id": "lab-img", "name": "img"},
                                "nodes": nodes, "links": []}))
    return path


def _in_file_dialog(qtbot: QtBot, act: Callable[[QFileDialog, QLineEdit], None], seen: list[str]) -> None:
    """Once the consent file dialog is open, note what it shows and `act` on it with real key events."""
    def look() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QFileDialog):
            QTimer.singleShot(10, look)
            return
        name_box = dialog.findChild(QLineEdit, "fileNameEdit")
        qtbot.waitUntil(lambda: bool(name_box.text()))  # the dialog lists the folder before it selects the file
        seen.append(f"{dialog.windowTitle()}\n{dialog.directory().absolutePath()}\n{name_box.text()}")
        act(dialog, name_box)

    QTimer.singleShot(10, look)


def _deploy_with_f5(qtbot: QtBot, window: MainWindow) -> None:
    window.activateWindow()  # a closed dialog had the focus; F5 is a shortcut of the active window
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_F5)


def test_a_host_file_is_used_only_when_the_user_chooses_it_in_a_file_dialog(
        make_window: Callable[..., MainWindow], qtbot: QtBot, tmp_path: Path) -> None:
    asked, other = tmp_path / "asked" / "disk.qcow2", tmp_path / "mine.qcow2"
    for image in (asked, other):
        image.parent.mkdir(exist_ok=True)
        image.write_bytes(b"\0" * 512)
    deployer = RecordingDeployer()
    window = make_window(_lab_with_images(tmp_path, [asked, asked]), deployer_loader=lambda: (deployer, ""))
    qtbot.waitUntil(lambda: not window.deploy.busy)
    assert window.menu_actions.deploy.isEnabled()  # the only errors are the user's to clear
    seen: list[str] = []

    _in_file_dialog(qtbot, lambda dialog, box: qtbot.keyClick(box, Qt.Key.Key_Escape), seen)
    _deploy_with_f5(qtbot, window)
    assert deployer.consents == [], "cancelling the file dialog deploys nothing"
    assert str(asked) in seen[0] and "QEMU reads it" in seen[0]
    assert seen[0].splitlines()[1:] == [str(asked.parent), asked.name], "the dialog opens on the file the lab names"

    _in_file_dialog(qtbot, lambda dialog, box: qtbot.keyClick(box, Qt.Key.Key_Return), seen)
    _deploy_with_f5(qtbot, window)
    qtbot.waitUntil(lambda: not window.deploy.busy and len(deployer.consents) == 1)
    assert deployer.consents[0].images == frozenset({str(asked)})
    assert window.editor.undo_stack.count() == 0, "choosing the file the lab names changes nothing in the lab"

    def pick_other(dialog: QFileDialog, box: QLineEdit) -> None:
        box.selectAll()
        qtbot.keyClicks(box, str(other))
        qtbot.keyClick(box, Qt.Key.Key_Return)

    _in_file_dialog(qtbot, pick_other, seen)
    _deploy_with_f5(qtbot, window)
    qtbot.waitUntil(lambda: not window.deploy.busy and len(deployer.consents) == 2)
    assert deployer.consents[1].images == frozenset({str(other)})
    nodes = window.editor.topology.nodes
    assert [nodes[i].settings["image"] for i in ("v0", "v1")] == [str(other)] * 2, "both VMs boot the file picked"
    window.editor.undo_stack.undo()
    assert [nodes[i].settings["image"] for i in ("v0", "v1")] == [str(asked)] * 2
