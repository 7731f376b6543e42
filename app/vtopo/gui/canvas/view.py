"""The canvas view: zoom with the wheel, pan with the middle button (or Space+drag), drops from the palette.
A button press picks the canvas tool (vtopo.gui.canvas.interactions) that the scene then feeds the gesture to."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (QDragEnterEvent, QDragLeaveEvent, QDragMoveEvent, QDropEvent, QHelpEvent, QKeyEvent,
                           QMouseEvent, QPainter, QShowEvent, QWheelEvent)
from PySide6.QtWidgets import QGraphicsView, QToolTip, QWidget

from vtopo.gui.canvas.editing import CanvasEditor
from vtopo.gui.canvas.interactions import LinkInteraction, PlaceInteraction, SelectInteraction
from vtopo.gui.canvas.items import ICON_SIZE, LABEL_GAP, NodeItem
from vtopo.gui.canvas.overview import DETAIL_ZOOM
from vtopo.gui.canvas.rename import InlineRename
from vtopo.gui.canvas.scene import GRID
from vtopo.gui.canvas.tooltips import link_tooltip, node_tooltip

KIND_MIME_TYPE = "application/x-vtopo-kind"
MIN_SCALE, MAX_SCALE = 0.05, 6.0
ZOOM_STEP = 1.15
NUDGE_STEP = 10.0
NUDGES = {Qt.Key.Key_Left: (-1, 0), Qt.Key.Key_Right: (1, 0), Qt.Key.Key_Up: (0, -1), Qt.Key.Key_Down: (0, 1)}


class CanvasView(QGraphicsView):
    node_activated = Signal(str)
    """A node was double-clicked."""
    node_context_menu = Signal(str, QPoint)
    link_context_menu = Signal(str, QPoint)
    canvas_context_menu = Signal(QPoint)
    link_mode_left = Signal()
    """Escape ended link drawing."""

    def __init__(self, editor: CanvasEditor, parent: QWidget | None = None) -> None:
        super().__init__(editor.scene, parent)
        self.editor = editor
        self.link_mode = False
        self._fit_pending = False
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
        self._zoom_changed()

    def reset_zoom(self) -> None:
        self.resetTransform()
        self._zoom_changed()

    def _zoom_changed(self) -> None:
        """Zoomed out far enough, the scene draws the lab as an overview (vtopo.gui.canvas.overview)."""
        self.editor.scene.set_detailed(self.zoom >= DETAIL_ZOOM)

    def fit_to_view(self) -> None:
        rect = self.editor.scene.itemsBoundingRect()
        if rect.isEmpty():
            self.reset_zoom()
            return
        rect = rect.adjusted(-40, -40, 40, 40)
        self.setSceneRect(rect.united(self.editor.scene.sceneRect()))
        self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        if self.zoom > 1.25:
            self.resetTransform()
            self.scale(1.25, 1.25)
            self.centerOn(rect.center())
        self._zoom_changed()

    def fit_when_shown(self) -> None:
        """Fit the lab once the view has its size (a lab opened before the window shows is fitted then)."""
        self._fit_pending = True
        if self.isVisible():
            QTimer.singleShot(0, self._fit_if_pending)

    def _fit_if_pending(self) -> None:
        if self._fit_pending and self.isVisible():
            self._fit_pending = False
            self.fit_to_view()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._fit_pending:
            QTimer.singleShot(0, self._fit_if_pending)

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
        elif event.key() == Qt.Key.Key_Escape:
            self.editor.scene.cancel_gesture()
            if self.link_mode:
                self.link_mode = False
                self.link_mode_left.emit()
        elif event.key() in NUDGES and self.editor.scene.selectedItems():
            fine = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            step = 1.0 if fine else GRID if self.editor.scene.snap_to_grid else NUDGE_STEP
            dx, dy = NUDGES[Qt.Key(event.key())]
            self.editor.nudge(dx * step, dy * step)
        else:
            super().keyPressEvent(event)

    def keyReleaseEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space_held = False
            self.viewport().unsetCursor()
        else:
            super().keyReleaseEvent(event)

    # ------------------------------------------------------------ mouse gestures: pan here, the rest in a tool

    def mousePressEvent(self, event: QMouseEvent) -> None:
        at = event.position().toPoint()
        button = event.button()
        if button == Qt.MouseButton.MiddleButton or (button == Qt.MouseButton.LeftButton and self._space_held):
            self._start_pan(at)
            return
        scene = self.editor.scene
        point = self.mapToScene(at)
        right = button == Qt.MouseButton.RightButton
        linking = right or (button == Qt.MouseButton.LeftButton and self.link_mode)
        node = scene.node_at(point) if linking else None  # a plain click leaves the hit test to Qt's own press (at
        if node is not None:  # a bridge of a thousand ports, each hit test asks a thousand links for their shapes)
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            clicked = self._node_clicked if right else None
            scene.begin_gesture(LinkInteraction(self.editor, node, right or shift, self, clicked))
        elif right:
            link = scene.link_at(point)
            if link is not None:
                self.link_context_menu.emit(link.link_id, event.globalPosition().toPoint())
            else:
                self.canvas_context_menu.emit(event.globalPosition().toPoint())
            return
        else:
            scene.begin_gesture(SelectInteraction(self.editor))
        super().mousePressEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        node = self.editor.scene.node_at(self.mapToScene(event.position().toPoint()))
        if node is not None and event.button() == Qt.MouseButton.LeftButton:
            self.node_activated.emit(node.node_id)
            return
        super().mouseDoubleClickEvent(event)

    def start_rename(self, node_id: str) -> InlineRename:
        """A line edit over the node's name; Enter renames (one undo step), Escape leaves the name as it was."""
        item = self.editor.scene.nodes[node_id]
        self.ensureVisible(item, 40, 40)
        field = InlineRename(node_id, item.name, self.viewport())
        field.finished.connect(self._renamed)
        width = max(120, field.fontMetrics().horizontalAdvance(item.name) + 30)
        label = self.mapFromScene(item.pos() + QPointF(0, ICON_SIZE / 2 + LABEL_GAP))
        field.setGeometry(label.x() - width // 2, label.y(), width, field.sizeHint().height())
        field.show()
        field.setFocus()
        return field

    def _renamed(self, node_id: str, name: str) -> None:
        if node_id in self.editor.topology.nodes:
            error = self.editor.rename_node(node_id, name)
            if error:
                self.editor.status_message.emit(f"not renamed: {error}")
        self.setFocus()

    def _node_clicked(self, node: NodeItem, at: QPoint) -> None:
        self.node_context_menu.emit(node.node_id, at)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._pan_from is not None:
            self._pan_to(event.position().toPoint())
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._pan_from is not None:
            self._pan_from = None
            self.viewport().setCursor(Qt.CursorShape.OpenHandCursor if self._space_held else Qt.CursorShape.ArrowCursor)
            return
        super().mouseReleaseEvent(event)

    # ------------------------------------------------------------ drops from the palette (files: the window's)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        data = event.mimeData()
        if data.hasFormat(KIND_MIME_TYPE):
            kind = bytes(data.data(KIND_MIME_TYPE).data()).decode()
            self._placing = PlaceInteraction(self.editor, kind)
            self._placing.hover(self.mapToScene(event.position().toPoint()))
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if self._placing is None:
            event.ignore()
            return
        self._placing.hover(self.mapToScene(event.position().toPoint()))
        event.acceptProposedAction()

    def dragLeaveEvent(self, event: QDragLeaveEvent) -> None:
        if self._placing is not None:
            self._placing.cancel()
            self._placing = None
        super().dragLeaveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        data = event.mimeData()
        if not data.hasFormat(KIND_MIME_TYPE):
            event.ignore()
            return
        placing = self._placing or PlaceInteraction(self.editor, bytes(data.data(KIND_MIME_TYPE).data()).decode())
        self._placing = None
        placing.drop(self.mapToScene(event.position().toPoint()))
        event.acceptProposedAction()
        self.setFocus()

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            text = self._tooltip_at(self.mapToScene(event.pos()))
            if text:
                QToolTip.showText(event.globalPos(), text, self.viewport())
                return True
        return super().viewportEvent(event)

    def _tooltip_at(self, point: QPointF) -> str:
        """A node's or a link's tooltip, written when it is asked for (a note keeps its own)."""
        scene, topology = self.editor.scene, self.editor.topology
        node = scene.node_at(point)
        if node is not None:
            kind_name = topology.nodes[node.node_id].kind
            kind = self.editor.registry.get(kind_name)
            return node_tooltip(topology, node.node_id, kind.label if kind is not None else kind_name, node.state)
        link = scene.link_at(point)
        return link_tooltip(topology, link.link_id, link.fault, link.traffic) if link is not None else ""

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.editor.scene.refresh_colors(self.palette())
            self.resetCachedContent()
        super().changeEvent(event)

    def visible_scene_rect(self) -> QRectF:
        return self.mapToScene(self.viewport().rect()).boundingRect()
