"""A factory fixture for main windows on isolated settings and autosave folders (the napari way)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox

from vtopo.gui.document.clipboard import release_clipboard
from vtopo.gui.panels import leaving
from vtopo.gui.main_window import MainWindow
from vtopo.lab import registry
from vtopo.resources import TOPOLOGIES


def no_deployer() -> tuple[Any, str]:
    return None, "no executor in GUI tests"


ASK_FOR_REAL = leaving.ask
"""The question a window asks before it leaves a running lab, for the tests of that question."""


def leave_it_running(_parent: Any, _text: str, _informative: str, choices: list[str]) -> str:
    """A window a test closes leaves its lab as it is, as a teacher who leaves it running for the class."""
    return next((choice for choice in choices if choice.startswith("Leave it")), leaving.KEEP_WORKING)


@pytest.fixture
def make_window(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., MainWindow]]:
    windows: list[MainWindow] = []
    # a window with unsaved changes asks on close; the tests answer "discard"
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    monkeypatch.setattr(leaving, "ask", leave_it_running)

    def make(lab: str | Path | None = "l2-vs-l3", deployer_loader: Callable[[], tuple[Any, str]] = no_deployer,
             show: bool = True) -> MainWindow:
        settings = QSettings(str(tmp_path / f"settings-{len(windows)}.ini"), QSettings.Format.IniFormat)
        window = MainWindow(registry(), settings, tmp_path / "autosave", deployer_loader)
        qtbot.addWidget(window)
        windows.append(window)
        if lab is not None:
            path = lab if isinstance(lab, Path) else TOPOLOGIES / f"{lab}.vtopo"
            assert window.files.open_path(path, as_template=not isinstance(lab, Path))
        if show:
            window.show()
            qtbot.waitExposed(window)
        wait_analysis(qtbot, window)
        return window

    yield make
    for window in windows:
        # closed here, while the questions above are answered: a close that waits for a job (a read of the lab's
        # state) asks again once the job ends, which would be after pytest-qt's own close, with no one to answer
        window.close()
        qtbot.waitUntil(lambda: not window.deploy.busy, timeout=60_000)  # pylint: disable=cell-var-from-loop
        window.analyzer.shutdown()
        window.deploy.wait()
    release_clipboard()


def wait_analysis(qtbot: Any, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: not window.analyzer.pending, timeout=5000)
