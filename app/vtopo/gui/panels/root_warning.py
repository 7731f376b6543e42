"""The bar a designer started as root shows: the agent does the privileged work, the designer need not be root."""
from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMainWindow, QToolBar

ROOT_WARNING = ("The designer runs as root. Run it as yourself: the vtopo agent deploys for the members of the "
                "vtopo group (`sudo make run` opens the designer as you), and Wayland sessions refuse root "
                "applications.")


def add_root_warning(window: QMainWindow) -> QToolBar | None:
    """A bar above the canvas when this process is root; None otherwise."""
    if os.geteuid() != 0:
        return None
    bar = QToolBar("Running as root", window)
    bar.setObjectName("root-warning")
    bar.setMovable(False)
    label = QLabel(f"⚠  {ROOT_WARNING}")
    label.setWordWrap(True)
    label.setStyleSheet("QLabel { background: #fff3cd; color: #664d03; padding: 6px; }")
    bar.addWidget(label)
    window.addToolBarBreak(Qt.ToolBarArea.TopToolBarArea)
    window.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
    return bar
