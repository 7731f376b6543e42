"""The main toolbar: labelled buttons whose icons read on light and dark themes, and whose widths do not change as
you work (Undo and Redo keep their short names; the command they would undo is in their tooltip)."""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (QAction, QColor, QIcon, QPainter, QPainterPath, QPen, QPixmap, QPolygonF, QTransform,
                           QUndoStack)
from PySide6.QtWidgets import QMainWindow, QToolBar

ICON = 32
GREEN, RED, BLUE = QColor("#2fb344"), QColor("#d63939"), QColor("#3b82f6")


def _icon(draw: str, color: QColor) -> QIcon:
    """A plain shape in a colour that stands out on both a light and a dark toolbar."""
    pixmap = QPixmap(ICON, ICON)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(color)
    if draw == "play":
        painter.drawPolygon(QPolygonF([QPointF(8, 5), QPointF(27, 16), QPointF(8, 27)]))
    elif draw == "stop":
        painter.drawRoundedRect(QRectF(7, 7, 18, 18), 3, 3)
    else:
        arc = QPainterPath()
        arc.moveTo(9, 13)
        arc.cubicTo(14, 5, 26, 8, 25, 20)
        painter.setPen(QPen(color, 3.5, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(arc)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawPolygon(QPolygonF([QPointF(3, 9), QPointF(13, 7), QPointF(9, 17)]))
    painter.end()
    if draw == "redo":
        pixmap = pixmap.transformed(QTransform().scale(-1, 1))
    return QIcon(pixmap)


def deploy_icon() -> QIcon:
    return _icon("play", GREEN)


def destroy_icon() -> QIcon:
    return _icon("stop", RED)


def history_button(window: QMainWindow, stack: QUndoStack, redo: bool) -> QAction:
    """A toolbar button for undo or redo with a fixed label; the stack's text goes in the tooltip."""
    name = "Redo" if redo else "Undo"
    action = QAction(_icon("redo" if redo else "undo", BLUE), name, window)
    can_change, text_changed = ((stack.canRedoChanged, stack.redoTextChanged) if redo
                                else (stack.canUndoChanged, stack.undoTextChanged))
    action.triggered.connect(stack.redo if redo else stack.undo)
    can_change.connect(action.setEnabled)
    text_changed.connect(lambda text: action.setToolTip(f"{name} {text}".strip()))
    action.setEnabled(stack.canRedo() if redo else stack.canUndo())
    action.setToolTip(name)
    return action


def build_toolbar(window: QMainWindow, groups: list[list[QAction]]) -> QToolBar:
    toolbar = QToolBar("Main", window)
    toolbar.setObjectName("main-toolbar")
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    for index, group in enumerate(groups):
        if index:
            toolbar.addSeparator()
        toolbar.addActions(group)
    window.addToolBar(toolbar)
    return toolbar
