"""Export the canvas as a PNG (bitmap, at twice the screen resolution) or an SVG (vector)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsScene

MARGIN = 30.0


def _source_rect(scene: QGraphicsScene) -> QRectF:
    return scene.itemsBoundingRect().adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)


def _render(scene: QGraphicsScene, painter: QPainter, target: QRectF, source: QRectF) -> None:
    selected = scene.selectedItems()
    scene.clearSelection()  # export the drawing, not the selection highlight
    try:
        scene.render(painter, target, source, Qt.AspectRatioMode.KeepAspectRatio)
    finally:
        for item in selected:
            item.setSelected(True)


def export_png(scene: QGraphicsScene, path: Path, scale: float = 2.0) -> bool:
    source = _source_rect(scene)
    size = QSize(max(1, int(source.width() * scale)), max(1, int(source.height() * scale)))
    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.SmoothPixmapTransform
                           | QPainter.RenderHint.TextAntialiasing)
    _render(scene, painter, QRectF(0, 0, size.width(), size.height()), source)
    painter.end()
    return image.save(str(path), "PNG")


def export_svg(scene: QGraphicsScene, path: Path, title: str = "vtopo lab") -> bool:
    source = _source_rect(scene)
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(source.size().toSize())
    generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
    generator.setTitle(title)
    painter = QPainter()
    if not painter.begin(generator):
        return False
    _render(scene, painter, QRectF(0, 0, source.width(), source.height()), source)
    return painter.end()
