"""The canvas view: zoom with the wheel, pan with the middle button (or Space+drag), drops from the palette,
and mouse gestures routed to the current interaction."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, QRectF, Qt, Signal
from PySide6.QtGui import (QDragEnterEvent, QDragLeaveEvent, QDragMoveEvent, QDropEvent, QKeyEvent, QMouseEvent,
                           QPainter, QWheelEvent)
from PySide6.QtWidgets import QGraphicsView, QWidget

from vtopo.gui.canvas.interactions import Interaction, LinkInteraction, PlaceInteraction, SelectInteraction
from vtopo.gui.canvas.items import LinkItem
from vtopo.gui.document.editor import Editor

KIND_MIME_TYPE = "application/x-vtopo-kind"
MIN_SCALE, MAX_SCALE = 0.05, 6.0
ZOOM_STEP = 1.15


class CanvasView(QGraphicsView):
    file_dropped = Signal(Path)
    node_context_menu = Signal(str, QPoint)
    link_context_menu = Signal(str, QPoint)
    canvas_context_menu = Signal(QPoint)

    def __init__(self, editor: Editor, parent: QWidget | None = None) -> None:
        super().__init__(editor.scene, parent)
        self.editor = editor
        self.link_mode = False
        self._interaction: Interaction | None = None
        self._placing: PlaceInteraction | None = None
        self._pan_from: QPoint | None = None
        self._space_held = False
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.SmoothPixmapTransform
                            | QPainter.RenderHint.TextAntialiasing)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheBackground)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setAcceptDrops(True)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.NoContextMenu)

    # ------------------------------------------------------------ zoom and pan

    @property
    def zoom(self) -> float:
        return self.transform().m11()

    def zoom_by(self, factor: float) -> None:
        factor = max(MIN_SCALE / self.zoom, min(MAX_SCALE / self.zoom, factor))
        self.scale(factor, factor)

    def reset_zoom(self) -> None:
        self.resetTransform()

    def fit_to_view(self) -> None:
        rect = self.editor.scene.itemsBoundingRect()
        if rect.isEmpty():
            self.resetTransform()
            return
        rect = rect.adjusted(-40, -40, 40, 40)
        self.setSceneRect(rect.united(self.editor.scene.sceneRect()))
        self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        if self.zoom > 1.25:
            self.resetTransform()
            self.scale(1.25, 1.25)
            self.centerOn(rect.center())

    def wheelEvent(self, event: QWheelEvent) -> None:
        steps = event.angleDelta().y() / 120
        if steps and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.zoom_by(ZOOM_STEP ** steps)
            event.accept()
            return
        super().wheelEvent(event)

    def _start_pan(self, at: QPoint) -> None:
        self._pan_from = at
        self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)

    def _pan_to(self, at: QPoint) -> None:
        assert self._pan_from is not None
        delta = at - self._pan_from
        self._pan_from = at
        self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - delta.x())
        self.verticalScrollBar().setValue(self.verticalScrollBar().value() - delta.y())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space_held = True
            self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
        elif event.key() == Qt.Key.Key_Escape and self._interaction is not None:
            self._interaction.cancel()
            self._interaction = None
        else:
            super().keyPressEvent(event)

    def keyReleaseEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space_held = False
            self.viewport().unsetCursor()
        else:
            super().keyReleaseEvent(event)

    # ------------------------------------------------------------ mouse gestures

    def mousePressEvent(self, event: QMouseEvent) -> None:
        at = event.position().toPoint()
        button = event.button()
        if button == Qt.MouseButton.MiddleButton or (button == Qt.MouseButton.LeftButton and self._space_held):
            self._start_pan(at)
            return
        node = self.editor.scene.node_at(self.mapToScene(at))
        shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if node is not None and (button == Qt.MouseButton.RightButton
                                 or (button == Qt.MouseButton.LeftButton and self.link_mode)):
            self._interaction = LinkInteraction(self, self.editor, node, at,
                                                choose_ports=button == Qt.MouseButton.RightButton or shift)
            return
        if button == Qt.MouseButton.RightButton:
            link = next((item for item in self.items(at) if isinstance(item, LinkItem)), None)
            if link is not None:
                self.link_context_menu.emit(link.link_id, event.globalPosition().toPoint())
            else:
                self.canvas_context_menu.emit(event.globalPosition().toPoint())
            return
        self._interaction = SelectInteraction(self, self.editor)
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._pan_from is not None:
            self._pan_to(event.position().toPoint())
            return
        if isinstance(self._interaction, LinkInteraction):
            self._interaction.move(event)
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._pan_from is not None:
            self._pan_from = None
            self.viewport().setCursor(Qt.CursorShape.OpenHandCursor if self._space_held else Qt.CursorShape.ArrowCursor)
            return
        interaction, self._interaction = self._interaction, None
        if isinstance(interaction, LinkInteraction):
            interaction.release(event)
            if not interaction.moved and event.button() == Qt.MouseButton.RightButton:
                self.node_context_menu.emit(interaction.source.node_id, event.globalPosition().toPoint())
            return
        super().mouseReleaseEvent(event)
        if interaction is not None:
            interaction.release(event)

    # ------------------------------------------------------------ drops: kinds from the palette, .vtopo files

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        data = event.mimeData()
        if data.hasFormat(KIND_MIME_TYPE):
            kind = bytes(data.data(KIND_MIME_TYPE).data()).decode()
            self._placing = PlaceInteraction(self.editor, kind)
            self._placing.hover(self.mapToScene(event.position().toPoint()))
            event.acceptProposedAction()
        elif any(url.toLocalFile().endswith(".vtopo") for url in data.urls()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if self._placing is not None:
            self._placing.hover(self.mapToScene(event.position().toPoint()))
        event.acceptProposedAction()

    def dragLeaveEvent(self, event: QDragLeaveEvent) -> None:
        if self._placing is not None:
            self._placing.cancel()
            self._placing = None
        super().dragLeaveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        data = event.mimeData()
        if data.hasFormat(KIND_MIME_TYPE):
            placing = self._placing or PlaceInteraction(self.editor, bytes(data.data(KIND_MIME_TYPE).data()).decode())
            self._placing = None
            placing.drop(self.mapToScene(event.position().toPoint()))
            event.acceptProposedAction()
            self.setFocus()
            return
        for url in data.urls():
            if url.toLocalFile().endswith(".vtopo"):
                self.file_dropped.emit(Path(url.toLocalFile()))
                event.acceptProposedAction()
                return
        event.ignore()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.editor.scene.refresh_colors(self.palette())
            self.resetCachedContent()
        super().changeEvent(event)

    def visible_scene_rect(self) -> QRectF:
        return self.mapToScene(self.viewport().rect()).boundingRect()
