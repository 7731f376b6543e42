"""Export the canvas as a PNG (bitmap, at twice the screen resolution) or an SVG (vector), in the theme's colours or
in print style (white, no grid)."""
from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QImage, QImageWriter, QPainter
from PySide6.QtSvg import QSvgGenerator

from vtopo.gui.canvas.scene import TopologyScene

MARGIN = 30.0


def _source_rect(scene: TopologyScene) -> QRectF:
    return scene.itemsBoundingRect().adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)


def _render(scene: TopologyScene, painter: QPainter, target: QRectF, source: QRectF, for_print: bool) -> None:
    selected = scene.selectedItems()
    scene.clearSelection()  # export the drawing, not the selection highlight
    try:
        with scene.in_detail(), scene.print_style() if for_print else nullcontext():
            scene.render(painter, target, source, Qt.AspectRatioMode.KeepAspectRatio)
    finally:
        for item in selected:
            item.setSelected(True)


def export_png(scene: TopologyScene, path: Path, scale: float = 2.0, for_print: bool = False) -> bool:
    source = _source_rect(scene)
    size = QSize(max(1, int(source.width() * scale)), max(1, int(source.height() * scale)))
    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.SmoothPixmapTransform
                           | QPainter.RenderHint.TextAntialiasing)
    _render(scene, painter, QRectF(0, 0, size.width(), size.height()), source, for_print)
    painter.end()
    return QImageWriter(str(path), QByteArray(b"PNG")).write(image)


def export_svg(scene: TopologyScene, path: Path, title: str = "vtopo lab", for_print: bool = False) -> bool:
    source = _source_rect(scene)
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(source.size().toSize())
    generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
    generator.setTitle(title)
    painter = QPainter()
    if not painter.begin(generator):
        return False
    _render(scene, painter, QRectF(0, 0, source.width(), source.height()), source, for_print)
    return painter.end()
