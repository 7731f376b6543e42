"""Themes, and the screenshot in docs/ rendered from the default lab."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from vtopo.gui.main_window import MainWindow

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshot.png"


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
    SCREENSHOT.parent.mkdir(exist_ok=True)
    image = window.grab()
    assert image.save(str(SCREENSHOT))
    assert image.width() >= 1400 and image.height() >= 900
