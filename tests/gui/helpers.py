"""Driving the canvas like a user: mouse presses, moves and releases at scene positions."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from vtopo.gui.canvas.view import CanvasView


def view_point(view: CanvasView, scene_point: QPointF) -> QPoint:
    return view.mapFromScene(scene_point)


def send(view: CanvasView, kind: QMouseEvent.Type, at: QPoint, button: Qt.MouseButton,
         buttons: Qt.MouseButton, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    event = QMouseEvent(kind, QPointF(at), QPointF(view.viewport().mapToGlobal(at)), button, buttons, modifiers)
    QApplication.sendEvent(view.viewport(), event)


def drag(view: CanvasView, start: QPointF, end: QPointF, button: Qt.MouseButton = Qt.MouseButton.LeftButton,
         modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier, steps: int = 8) -> None:
    """Press at a scene point, move there in steps, release: a real drag as the view sees it."""
    a, b = view_point(view, start), view_point(view, end)
    send(view, QMouseEvent.Type.MouseButtonPress, a, button, button, modifiers)
    for i in range(1, steps + 1):
        at = a + (b - a) * (i / steps)
        send(view, QMouseEvent.Type.MouseMove, at, Qt.MouseButton.NoButton, button, modifiers)
    send(view, QMouseEvent.Type.MouseButtonRelease, b, button, Qt.MouseButton.NoButton, modifiers)


def click(view: CanvasView, at: QPointF, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    point = view_point(view, at)
    left = Qt.MouseButton.LeftButton
    send(view, QMouseEvent.Type.MouseButtonPress, point, left, left, modifiers)
    send(view, QMouseEvent.Type.MouseButtonRelease, point, left, Qt.MouseButton.NoButton, modifiers)
