"""The Exercise dock: the stage's instructions as rendered Markdown with images from the lab's folder only, its
visible checks with the Checks dock's results, and Next stage opening only once they pass, driven by mouse and keys."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QImage, QTextDocument
from pytestqt.qtbot import QtBot

from fake_lab import FakeLab
from vtopo.checks.stages import current_stage
from vtopo.gui.main_window import MainWindow
from vtopo.model import io
from vtopo.model.stages import Stage
from vtopo.resources import TOPOLOGIES


def _assignment(folder: Path) -> Path:
    """l2-vs-l3 (whose answers FakeLab gives) as a three-stage exercise, one of its checks the teacher's."""
    topology = io.load(TOPOLOGIES / "l2-vs-l3.vtopo")
    next(check for check in topology.checks if check.name == "h1 to h3 crosses r1 and r2").hidden = True
    topology.stages = [
        Stage("Switch the LAN", "Ping **h2** from h1.\n\n![the LAN](lan.png) ![secret](../secret.png)",
              ["h1 reaches h2", "h1 and h2 share a LAN"], solution="Nothing to do."),
        Stage("Route between LANs", "Make *h3* reachable.", ["h1 reaches h3", "h1 to h3 crosses r1 and r2"]),
        Stage("Done", "Well done."),
    ]
    folder.mkdir()
    image = QImage(4, 4, QImage.Format.Format_RGB32)
    image.fill(QColor("green"))
    assert image.save(str(folder / "lan.png"))
    assert image.save(str(folder.parent / "secret.png"))
    path = folder / "exercise.vtopo"
    io.save(topology, path)
    return path


def _check(window: MainWindow, qtbot: QtBot) -> list[tuple[str, str]]:
    panel = window.exercise_panel
    with qtbot.waitSignal(window.checks.finished, timeout=10000):
        qtbot.mouseClick(panel.check_button, Qt.MouseButton.LeftButton)
    return panel.rows()


def test_a_student_works_through_the_stages(make_window: Callable[..., MainWindow], qtbot: QtBot,
                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    window = make_window(_assignment(tmp_path / "course"))
    lab = FakeLab()
    window.checks.probe_for = lambda topology: lab
    panel = window.exercise_panel
    assert window.exercise_dock.isVisible()
    assert panel.title.text() == "<b>Stage 1 of 3: Switch the LAN</b>"
    assert "Ping h2 from h1." in panel.instructions.toPlainText()  # Markdown rendered, not shown as text
    document, image = panel.instructions.document(), QTextDocument.ResourceType.ImageResource.value
    qtbot.waitUntil(lambda: isinstance(document.resource(image, QUrl("lan.png")), QImage))
    assert document.resource(image, QUrl("lan.png")).pixelColor(0, 0) == QColor("green")
    assert document.resource(image, QUrl("../secret.png")) is None, "an image outside the lab's folder is not loaded"
    assert panel.rows() == [("h1 reaches h2", "…"), ("h1 and h2 share a LAN", "…")]
    assert not panel.next_button.isEnabled() and not panel.previous_button.isEnabled()

    assert _check(window, qtbot) == [("h1 reaches h2", "pass"), ("h1 and h2 share a LAN", "pass")]
    assert panel.next_button.isEnabled()
    qtbot.mouseClick(panel.next_button, Qt.MouseButton.LeftButton)
    assert panel.title.text() == "<b>Stage 2 of 3: Route between LANs</b>"
    assert current_stage(window.editor.topology) == 2
    assert [name for name, _ in panel.rows()] == ["h1 reaches h3"], "the hidden check is not shown"

    lab.unreachable[("h1", "h3")] = "h1 cannot reach 10.2.0.10 (h3): no route"
    assert _check(window, qtbot) == [("h1 reaches h3", "FAIL")]
    assert not panel.next_button.isEnabled()
    del lab.unreachable[("h1", "h3")]
    assert _check(window, qtbot) == [("h1 reaches h3", "pass")]
    panel.next_button.setFocus()
    qtbot.keyClick(panel.next_button, Qt.Key.Key_Space)
    assert panel.title.text() == "<b>Stage 3 of 3: Done</b>" and not panel.next_button.isEnabled()

    panel.previous_button.setFocus()
    qtbot.keyClick(panel.previous_button, Qt.Key.Key_Space)
    assert current_stage(window.editor.topology) == 2 and panel.rows() == [("h1 reaches h3", "pass")]

    monkeypatch.setenv("VTOPO_DATA_DIR", "/proc/vtopo")  # a folder no one can make: the stage cannot be kept
    with qtbot.waitSignal(window.editor.status_message) as said:
        qtbot.mouseClick(panel.previous_button, Qt.MouseButton.LeftButton)
    assert said.args[0].startswith("cannot keep the stage you are at in /proc/vtopo")


def test_a_lab_without_stages_says_so(make_window: Callable[..., MainWindow]) -> None:
    panel = make_window().exercise_panel
    assert panel.title.text() == "This lab has no stages."
    assert not any(button.isEnabled() for button in (panel.previous_button, panel.check_button, panel.next_button))


def test_the_designers_save_keeps_the_stages_and_hidden_checks(make_window: Callable[..., MainWindow], qtbot: QtBot,
                                                               tmp_path: Path) -> None:
    path = _assignment(tmp_path / "course")
    window = make_window(path)
    window.editor.update_lab(notes="Edited in the designer.")
    qtbot.keyClick(window.view, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    saved = io.load(path)
    assert saved.notes == "Edited in the designer."
    assert [stage.title for stage in saved.stages] == ["Switch the LAN", "Route between LANs", "Done"]
    assert saved.stages[0].solution == "Nothing to do."
    assert [check.name for check in saved.checks if check.hidden] == ["h1 to h3 crosses r1 and r2"]
