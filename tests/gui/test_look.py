"""Themes, and the screenshots of docs/ (`make docs`): the default lab, and two labs' runs in the Measure dock."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from vtopo.gui.main_window import MainWindow
from vtopo.measure import IntervalSample, IperfOptions, RunResult, history_path_for, save_history
from vtopo.resources import TOPOLOGIES

# In build/ (ignored by git), so a test run changes nothing tracked; `make docs` points this at docs/.
SCREENSHOTS = Path(os.environ.get("VTOPO_SCREENSHOT_DIR")
                   or Path(__file__).resolve().parents[2] / "build" / "screenshots")
SCREENSHOT = SCREENSHOTS / "screenshot.png"
MEASURE_SCREENSHOT = SCREENSHOT.with_name("measure.png")


def test_dark_and_light_themes(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window()
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    original = app.palette()
    try:
        window.actions.themes["dark"].trigger()
        qtbot.waitUntil(lambda: window.editor.scene.colors.base.lightness() < 80)
        assert window.editor.scene.colors.text.lightness() > 180
        window.actions.themes["light"].trigger()
        qtbot.waitUntil(lambda: window.editor.scene.colors.base.lightness() > 200)
        assert window.settings.value("view/theme") == "light"
    finally:
        app.setPalette(original)


def test_screenshot_of_the_default_lab(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window()
    window.resize(1400, 900)
    qtbot.wait(50)
    window.view.fit_to_view()
    window.editor.scene.select_ids(["r1"])
    window.explain_dock.raise_()
    qtbot.wait(100)
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    image = window.grab()
    assert image.save(str(SCREENSHOT))
    assert image.width() >= 1400 and image.height() >= 900


def test_screenshot_of_two_labs_compared(make_window: Callable[..., MainWindow], qtbot: QtBot,
                                         tmp_path: Path) -> None:
    """Runs as the teacher's notebook shows them: veth+bridge against macvlan, from each lab's saved history."""
    labs = {}
    for number, (lab, gbps, path) in enumerate((("bridge-veth", 13.8, "veth → br0 → veth"),
                                                 ("macvlan-bridge", 16.1, "macvlan bridge mode"))):
        labs[lab] = tmp_path / f"{lab}.vtopo"
        shutil.copy(TOPOLOGIES / f"{lab}.vtopo", labs[lab])
        run = RunResult(source="c1", destination="c2", address=f"10.0.{number}.2", options=IperfOptions(duration_s=5),
                        lab=lab, path=path, id=f"run{number}", started_at=f"2026-11-23T10:0{number}:00+00:00")
        run.intervals = [IntervalSample(float(t), float(t + 1), gbps * 1e9 * (1 + 0.02 * (t % 3 - 1)), 1000,
                                        retransmits=0) for t in range(5)]
        save_history(history_path_for(labs[lab]), [run])
    window = make_window(labs["bridge-veth"])
    window.files.open_path(labs["macvlan-bridge"])
    window.resize(1400, 900)
    window.measure.show_panel()
    window.measure_panel.history_view.select_rows([0, 1])
    qtbot.wait(50)
    window.view.fit_to_view()
    qtbot.wait(100)
    image = window.grab()
    MEASURE_SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    assert image.save(str(MEASURE_SCREENSHOT))
    assert window.measure_panel.bars.values == pytest.approx([13.8, 16.1], rel=0.01)
