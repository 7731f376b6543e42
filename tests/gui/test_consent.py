"""The designer asks before a lab reaches outside itself: a dialog names the host device and what the mode does."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
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
    assert seen[0].startswith("This lab wants to run commands inside c1, as root.\n")
    assert "ip route add 10.9.0.0/24 via 10.0.0.2" in seen[0] and "cannot allow this by itself" in seen[0]
    assert deployer.consents[0].startup_commands == frozenset({"c1"})
