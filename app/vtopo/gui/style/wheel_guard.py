"""A mouse wheel over a combo box or spin box in a scrolling form scrolls the form; it changes the value only once
the field has the focus (clicked or tabbed into), as in most designers."""
from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QWidget


class WheelGuard(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Wheel and isinstance(watched, QWidget) and not watched.hasFocus():
            parent = watched.parentWidget()
            if parent is not None:
                QApplication.sendEvent(parent, event)  # unhandled there, it travels up to the scroll area
            return True
        return False


def guard_wheel(owner: QWidget, fields: Iterable[QWidget] | None = None) -> None:
    """Guard the given fields, or every combo box and spin box inside `owner`."""
    guard = WheelGuard(owner)
    chosen = fields if fields is not None else [*owner.findChildren(QComboBox), *owner.findChildren(QAbstractSpinBox)]
    for field in chosen:
        field.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        field.installEventFilter(guard)
