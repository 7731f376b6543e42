"""Light, dark, or the system's palette. Everything on the canvas derives its colors from the palette."""
from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

THEMES = ("system", "light", "dark")


def _palette(dark: bool) -> QPalette:
    role = QPalette.ColorRole
    if dark:
        colors = {role.Window: "#2b2d30", role.WindowText: "#dfe1e5", role.Base: "#1e1f22",
                  role.AlternateBase: "#26282b", role.Text: "#dfe1e5", role.Button: "#35373b",
                  role.ButtonText: "#dfe1e5", role.Highlight: "#3574f0", role.HighlightedText: "#ffffff",
                  role.ToolTipBase: "#3d3f43", role.ToolTipText: "#e8e8e8", role.Mid: "#4e5157",
                  role.PlaceholderText: "#8c8f94", role.Link: "#589df6", role.BrightText: "#ff6b6b"}
    else:
        colors = {role.Window: "#f2f3f5", role.WindowText: "#1f2328", role.Base: "#ffffff",
                  role.AlternateBase: "#f6f8fa", role.Text: "#1f2328", role.Button: "#e9ebee",
                  role.ButtonText: "#1f2328", role.Highlight: "#2f6fde", role.HighlightedText: "#ffffff",
                  role.ToolTipBase: "#fff8c5", role.ToolTipText: "#1f2328", role.Mid: "#b8bcc2",
                  role.PlaceholderText: "#8c959f", role.Link: "#0969da", role.BrightText: "#cf222e"}
    palette = QPalette()
    for color_role, value in colors.items():
        palette.setColor(color_role, QColor(value))
    for color_role in (role.Text, role.WindowText, role.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, color_role, QColor(colors[role.PlaceholderText]))
    return palette


def apply_theme(app: QApplication, name: str) -> None:
    """Apply a theme by name; "system" restores the style's standard palette."""
    if name == "system":
        app.setPalette(app.style().standardPalette())
        return
    fusion = QStyleFactory.create("Fusion")
    if fusion is not None:
        app.setStyle(fusion)
    app.setPalette(_palette(name == "dark"))
