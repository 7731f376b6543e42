"""Kind icons rendered from SVG once per kind and size, so painting a node is a pixmap blit."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from vtopo.kinds.registry import Registry


class IconCache:
    """QPixmaps keyed by (kind, pixel size). A kind without an icon file gets a neutral placeholder."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self._pixmaps: dict[tuple[str, int], QPixmap] = {}
        self._swatches: dict[str, QColor] = {}

    def pixmap(self, kind_name: str, size: int) -> QPixmap:
        key = (kind_name, size)
        pixmap = self._pixmaps.get(key)
        if pixmap is None:
            pixmap = self._render(kind_name, size)
            self._pixmaps[key] = pixmap
        return pixmap

    def swatch(self, kind_name: str) -> QColor:
        """The icon's average colour, opaque: what a node of this kind looks like from far away."""
        color = self._swatches.get(kind_name)
        if color is None:
            image = self.pixmap(kind_name, 16).toImage().scaled(1, 1, Qt.AspectRatioMode.IgnoreAspectRatio,
                                                                Qt.TransformationMode.SmoothTransformation)
            color = image.pixelColor(0, 0)
            color.setAlpha(255)
            self._swatches[kind_name] = color
        return color

    def icon(self, kind_name: str) -> QIcon:
        icon = QIcon()
        for size in (16, 24, 32, 48, 64):
            icon.addPixmap(self.pixmap(kind_name, size))
        return icon

    def _render(self, kind_name: str, size: int) -> QPixmap:
        pixmap = QPixmap(QSize(size, size))
        pixmap.fill(Qt.GlobalColor.transparent)
        kind = self._registry.get(kind_name)
        path: Path | None = kind.icon_path() if kind is not None else None
        renderer = QSvgRenderer(str(path)) if path is not None and path.is_file() else None
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if renderer is not None and renderer.isValid():
            renderer.render(painter)
        else:
            painter.setPen(Qt.GlobalColor.gray)
            painter.setBrush(Qt.GlobalColor.lightGray)
            painter.drawRoundedRect(2, 2, size - 4, size - 4, size / 6, size / 6)
            painter.setPen(Qt.GlobalColor.black)
            painter.drawText(pixmap.rect(), Qt.AlignmentFlag.AlignCenter, "?")
        painter.end()
        return pixmap
