"""The palette: every registered node kind, dragged from here onto the canvas."""
from __future__ import annotations

from PySide6.QtCore import QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QDrag
from PySide6.QtWidgets import QAbstractItemView, QListWidget, QListWidgetItem, QWidget

from vtopo.gui.canvas.icons import IconCache
from vtopo.gui.canvas.view import KIND_MIME_TYPE
from vtopo.kinds.registry import Registry

KIND_ROLE = Qt.ItemDataRole.UserRole


class KindPalette(QListWidget):
    """One entry per kind: the plugin's icon and label, its description as the tooltip."""

    place_requested = Signal(str)

    def __init__(self, registry: Registry, icons: IconCache, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._icons = icons
        self.setIconSize(QSize(32, 32))
        self.setDragEnabled(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setSpacing(2)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # the dock fits the labels
        for name, kind in sorted(registry.kinds.items(), key=lambda pair: pair[1].label.lower()):
            item = QListWidgetItem(icons.icon(name), kind.label)
            item.setData(KIND_ROLE, name)
            item.setToolTip(f"<b>{kind.label}</b> ({name})<br>{kind.description}")
            item.setStatusTip(kind.description)
            self.addItem(item)
        self.itemActivated.connect(lambda item: self.place_requested.emit(item.data(KIND_ROLE)))

    def kind_names(self) -> list[str]:
        return [self.item(row).data(KIND_ROLE) for row in range(self.count())]

    def mime_data_for(self, kind_name: str) -> QMimeData:
        data = QMimeData()
        data.setData(KIND_MIME_TYPE, kind_name.encode())
        return data

    def startDrag(self, supportedActions: Qt.DropAction) -> None:
        item = self.currentItem()
        if item is None:
            return
        kind_name = item.data(KIND_ROLE)
        drag = QDrag(self)
        drag.setMimeData(self.mime_data_for(kind_name))
        drag.setPixmap(self._icons.pixmap(kind_name, 48))
        drag.setHotSpot(drag.pixmap().rect().center())
        drag.exec(Qt.DropAction.CopyAction)
