"""`vtopo gui [FILE]`: the designer's entry point."""
from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from vtopo.gui.document.clipboard import release_clipboard
from vtopo.gui.document.files import default_autosave_dir
from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels.root_warning import add_root_warning
from vtopo.lab import registry
from vtopo.resources import TOPOLOGIES

DEFAULT_LAB = TOPOLOGIES / "l2-vs-l3.vtopo"


def create_window(path: Path | None, settings: QSettings | None = None,
                  autosave_dir: Path | None = None) -> MainWindow:
    """A main window on FILE, or on the default teaching lab (opened untitled, so saving asks where)."""
    window = MainWindow(registry(), settings or QSettings("vtopo", "vtopo"), autosave_dir or default_autosave_dir())
    add_root_warning(window)
    for problem in registry().load_problems:
        window.log.log(f"warning: {problem}")
    if path is not None:
        window.files.open_path(Path(path))
    elif DEFAULT_LAB.is_file():
        window.files.open_path(DEFAULT_LAB, as_template=True)
    return window


def run(path: Path | None) -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("vtopo")
    app.setOrganizationName("vtopo")
    app.aboutToQuit.connect(release_clipboard)
    window = create_window(path)
    window.show()
    window.view.fit_to_view()
    return app.exec()
