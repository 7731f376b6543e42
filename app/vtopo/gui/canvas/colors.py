"""The canvas' colors, derived from the application palette so that light and dark themes both read well."""
from __future__ import annotations

from PySide6.QtGui import QColor, QPalette


def path_color(highlight: QColor, accent: QColor | None) -> QColor:
    """The color of a measured path: the palette's accent, unless it is close to the selection color (as in
    most palettes); then the selection color turned 80° round the color wheel, so that a selected node on the
    path shows both."""
    hue = highlight.hslHue() if highlight.hslHue() >= 0 else 220
    if accent is not None and accent.isValid() and accent.hslHue() >= 0:
        distance = abs(accent.hslHue() - hue) % 360
        if min(distance, 360 - distance) >= 40:
            return QColor(accent)
    return QColor.fromHsl((hue + 80) % 360, max(highlight.hslSaturation(), 140), highlight.lightness())


class Colors:
    """Colors derived from the palette, so light and dark themes both read well."""

    def __init__(self, text: QColor, base: QColor, window: QColor, highlight: QColor, mid: QColor,
                 tooltip_base: QColor, tooltip_text: QColor, accent: QColor | None = None) -> None:
        dark = window.lightness() < 128
        self.text = text
        self.base = base
        self.window = window
        self.highlight = highlight
        self.subtle_text = QColor(text)
        self.subtle_text.setAlpha(200)
        self.link = QColor(text)
        self.link.setAlpha(150)
        self.grid = QColor(text)
        self.grid.setAlpha(28 if dark else 22)
        self.label_background = QColor(base)
        self.label_background.setAlpha(200)
        self.note_background = QColor(tooltip_base)
        self.note_background.setAlpha(235)
        self.note_border = mid
        self.note_text = tooltip_text
        self.impairment = QColor("#f0a202") if dark else QColor("#b35c00")
        self.path = path_color(highlight, accent)
        self.path_glow = QColor(self.path)
        self.path_glow.setAlpha(90 if dark else 70)

    @classmethod
    def from_palette(cls, palette: QPalette) -> Colors:
        role = QPalette.ColorRole
        return cls(palette.color(role.Text), palette.color(role.Base), palette.color(role.Window),
                   palette.color(role.Highlight), palette.color(role.Mid), palette.color(role.ToolTipBase),
                   palette.color(role.ToolTipText), palette.color(role.Accent))
