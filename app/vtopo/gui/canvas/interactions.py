"""Canvas tools as small state machines: select/move, draw a link, place a node. Previews never enter the model.

The view picks the tool when a button goes down; the scene then hands each mouse event to it first. A tool that
returns True has consumed the event; otherwise Qt's own handling (select, rubber band, move) runs.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QLineF, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsLineItem, QGraphicsPixmapItem, QGraphicsSceneMouseEvent, QMenu, QWidget

from vtopo.gui.canvas.editing import CanvasEditor
from vtopo.gui.canvas.items import ICON_SIZE, NodeItem

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
    """One gesture on the canvas, from a button press to its release."""

    def __init__(self, editor: CanvasEditor) -> None:
        self.editor = editor

    def mouse_press(self, event: QGraphicsSceneMouseEvent) -> bool:
        return False

    def mouse_move(self, event: QGraphicsSceneMouseEvent) -> bool:
        return False

    def mouse_release(self, event: QGraphicsSceneMouseEvent) -> bool:
        return False

    def cancel(self) -> None:
        pass


class SelectInteraction(Interaction):
    """Select, rubber band and move are Qt's own; a drag ends as one Move step on release."""

    def mouse_release(self, event: QGraphicsSceneMouseEvent) -> bool:
        self.editor.commit_moves()
        return False


class LinkInteraction(Interaction):
    """Press on a node, drag, release on another node. With ports chosen from a menu, or the next free ones.
    A press and release without a drag is a click: `clicked` gets the node and the screen position."""

    def __init__(self, editor: CanvasEditor, source: NodeItem, choose_ports: bool, menu_parent: QWidget,
                 clicked: Callable[[NodeItem, QPoint], None] | None = None) -> None:
        super().__init__(editor)
        self.source = source
        self.choose_ports = choose_ports
        self._menu_parent = menu_parent
        self._clicked = clicked
        self._press = QPoint()
        self._moved = False
        self.preview = QGraphicsLineItem(QLineF(source.pos(), source.pos()))
        self.preview.setPen(QPen(QColor(editor.scene.colors.highlight), 2, Qt.PenStyle.DashLine))
        self.preview.setZValue(100)

    def mouse_press(self, event: QGraphicsSceneMouseEvent) -> bool:
        self._press = event.screenPos()
        self.editor.scene.addItem(self.preview)
        event.accept()
        return True

    def mouse_move(self, event: QGraphicsSceneMouseEvent) -> bool:
        if (event.screenPos() - self._press).manhattanLength() >= DRAG_THRESHOLD:
            self._moved = True
        point = event.scenePos()
        target = self.editor.scene.node_at(point)
        target = target if target is not self.source else None
        self.preview.setLine(QLineF(self.source.pos(), target.pos() if target is not None else point))
        return True

    def mouse_release(self, event: QGraphicsSceneMouseEvent) -> bool:
        self.cancel()
        if not self._moved:
            if self._clicked is not None:
                self._clicked(self.source, event.screenPos())
            return True
        target = self.editor.scene.node_at(event.scenePos())
        if target is not None and target is not self.source:
            self._connect(target, event.screenPos())
        return True

    def _connect(self, target: NodeItem, at: QPoint) -> None:
        reason = self.editor.can_connect(self.source.node_id, target.node_id)
        if reason:
            self.editor.status_message.emit(reason)
            return
        ports: list[str | None] = [None, None]
        if self.choose_ports:
            for index, item in enumerate((self.source, target)):
                ports[index] = choose_port(self._menu_parent, f"Port of {item.name}",
                                           self.editor.free_ports(item.node_id), at)
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

    def __init__(self, editor: CanvasEditor, kind_name: str) -> None:
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
