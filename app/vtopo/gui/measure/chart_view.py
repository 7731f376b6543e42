"""A chart view whose chart follows the application palette, light or dark."""
from __future__ import annotations

from PySide6.QtCharts import QChart, QChartView
from PySide6.QtCore import QEvent
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QWidget


def chart_theme(palette: QPalette) -> QChart.ChartTheme:
    """The QtCharts theme that matches the palette's lightness."""
    dark = palette.color(QPalette.ColorRole.Window).lightness() < 128
    return QChart.ChartTheme.ChartThemeDark if dark else QChart.ChartTheme.ChartThemeLight


class PaletteChartView(QChartView):
    """Holds one chart, antialiased, and re-themes it when the palette changes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setMinimumHeight(110)
        self._chart = QChart()
        self._chart.setTheme(chart_theme(self.palette()))
        self.setChart(self._chart)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._chart.setTheme(chart_theme(self.palette()))
        super().changeEvent(event)
