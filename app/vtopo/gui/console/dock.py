"""The terminal dock: one tab per open terminal; closing a tab hangs up its session."""
from __future__ import annotations

from PySide6.QtWidgets import QDockWidget, QTabWidget, QWidget

from vtopo.gui.console.widget import TerminalWidget


class TerminalTabs(QTabWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTabsClosable(True)
        self.setMovable(True)
        self.setDocumentMode(True)
        self.tabCloseRequested.connect(self.close_tab)
        self.dock: QDockWidget | None = None
        self.scale = 1.0  # of the terminals' font: larger in presentation mode

    def open(self, title: str, argv: list[str]) -> TerminalWidget:
        """A new tab running `argv`, shown and focused. Raises OSError when the program cannot start."""
        terminal = TerminalWidget(argv, self.scale)
        index = self.addTab(terminal, title)
        terminal.finished.connect(lambda code, t=terminal: self._ended(t, code))
        self.setCurrentIndex(index)
        if self.dock is not None:
            self.dock.show()
            self.dock.raise_()
        terminal.setFocus()
        return terminal

    def set_scale(self, scale: float) -> None:
        self.scale = scale
        for terminal in self.terminals():
            terminal.set_scale(scale)

    def terminals(self) -> list[TerminalWidget]:
        return [widget for index in range(self.count()) if isinstance(widget := self.widget(index), TerminalWidget)]

    def close_tab(self, index: int) -> None:
        terminal = self.widget(index)
        self.removeTab(index)
        if isinstance(terminal, TerminalWidget):
            terminal.close_session()
            terminal.deleteLater()

    def _ended(self, terminal: TerminalWidget, code: int) -> None:
        index = self.indexOf(terminal)
        if index >= 0:
            self.setTabText(index, f"{self.tabText(index)} (exited)")

    def shutdown(self) -> None:
        while self.count():
            self.close_tab(0)
