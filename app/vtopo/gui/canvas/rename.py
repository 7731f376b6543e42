"""Renaming a node in place: a line edit over its label. Enter (or clicking elsewhere) renames, Escape cancels."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent
from PySide6.QtWidgets import QLineEdit, QWidget


class InlineRename(QLineEdit):
    finished = Signal(str, str)
    """(node id, the new name) once, when the edit ends with a name; not at all when it is cancelled."""

    def __init__(self, node_id: str, name: str, parent: QWidget) -> None:
        super().__init__(name, parent)
        self.node_id = node_id
        self._done = False
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.selectAll()
        self.returnPressed.connect(self._finish)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self._close()
            return
        super().keyPressEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self._finish()

    def _finish(self) -> None:
        if not self._done:
            self._close()
            self.finished.emit(self.node_id, self.text().strip())

    def _close(self) -> None:
        self._done = True
        self.hide()
        self.deleteLater()
