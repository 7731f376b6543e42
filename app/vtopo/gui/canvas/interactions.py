"""Canvas tools as small state machines: select/move, draw a link, place a node. Previews never enter the model."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QLineF, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QCursor, QMouseEvent, QPen
from PySide6.QtWidgets import QGraphicsLineItem, QGraphicsPixmapItem, QMenu, QWidget

from vtopo.gui.canvas.items import ICON_SIZE, NodeItem
from vtopo.gui.document.editor import Editor

if TYPE_CHECKING:
    from vtopo.gui.canvas.view import CanvasView

DRAG_THRESHOLD = 4


def choose_port(parent: QWidget, title: str, ports: list[str], at: QPoint) -> str | None:
    """A menu of a node's free ports; None when the user dismisses it."""
    menu = QMenu(parent)
    menu.addSection(title)
    for port in ports:
        menu.addAction(port).setData(port)
    chosen = menu.exec(at)
    return str(chosen.data()) if chosen is not None else None


class Interaction:
    """One gesture on the canvas. The view forwards mouse events while it is active."""

    def __init__(self, view: CanvasView, editor: Editor) -> None:
        self.view = view
        self.editor = editor

    def move(self, event: QMouseEvent) -> None:
        pass

    def release(self, event: QMouseEvent) -> None:
        pass

    def cancel(self) -> None:
        pass


class SelectInteraction(Interaction):
    """Default behaviour (select, rubber band, move) is Qt's; a drag ends as one Move step on release."""

    def release(self, event: QMouseEvent) -> None:
        self.editor.commit_moves()


class LinkInteraction(Interaction):
    """Press on a node, drag, release on another node. With ports chosen from a menu, or the next free ones."""

    def __init__(self, view: CanvasView, editor: Editor, source: NodeItem, press: QPoint, choose_ports: bool) -> None:
        super().__init__(view, editor)
        self.source = source
        self.choose_ports = choose_ports
        self._press = QPoint(press)
        self._moved = False
        self.preview = QGraphicsLineItem(QLineF(source.pos(), source.pos()))
        pen = QPen(QColor(editor.scene.colors.highlight), 2, Qt.PenStyle.DashLine)
        self.preview.setPen(pen)
        self.preview.setZValue(100)
        editor.scene.addItem(self.preview)

    @property
    def moved(self) -> bool:
        return self._moved

    def move(self, event: QMouseEvent) -> None:
        if (event.position().toPoint() - self._press).manhattanLength() >= DRAG_THRESHOLD:
            self._moved = True
        point = self.view.mapToScene(event.position().toPoint())
        target = self.editor.scene.node_at(point)
        target = target if target is not self.source else None
        self.preview.setLine(QLineF(self.source.pos(), target.pos() if target is not None else point))

    def release(self, event: QMouseEvent) -> None:
        self.cancel()
        target = self.editor.scene.node_at(self.view.mapToScene(event.position().toPoint()))
        if target is None or target is self.source or not self._moved:
            return
        reason = self.editor.can_connect(self.source.node_id, target.node_id)
        if reason:
            self.editor.status_message.emit(reason)
            return
        ports: list[str | None] = [None, None]
        if self.choose_ports:
            for index, item in enumerate((self.source, target)):
                ports[index] = choose_port(self.view, f"Port of {item.name}", self.editor.free_ports(item.node_id),
                                           QCursor.pos())
                if ports[index] is None:
                    return
        link = self.editor.connect_nodes(self.source.node_id, target.node_id, ports[0], ports[1])
        if link is not None:
            self.editor.scene.select_ids([link.id])

    def cancel(self) -> None:
        if self.preview.scene() is not None:
            self.editor.scene.removeItem(self.preview)


class PlaceInteraction:
    """A kind dragged from the palette: a ghost icon follows the cursor, the drop adds the node."""

    def __init__(self, editor: Editor, kind_name: str) -> None:
        self.editor = editor
        self.kind_name = kind_name
        self.ghost = QGraphicsPixmapItem(editor.scene.icons.pixmap(kind_name, ICON_SIZE))
        self.ghost.setOffset(-ICON_SIZE / 2, -ICON_SIZE / 2)
        self.ghost.setOpacity(0.5)
        self.ghost.setZValue(100)
        editor.scene.addItem(self.ghost)

    def hover(self, at: QPointF) -> None:
        self.ghost.setPos(self.editor.scene.snapped(at))

    def drop(self, at: QPointF) -> None:
        self.cancel()
        node = self.editor.place_node(self.kind_name, at)
        if node is not None:
            self.editor.scene.select_ids([node.id])

    def cancel(self) -> None:
        if self.ghost.scene() is not None:
            self.editor.scene.removeItem(self.ghost)
