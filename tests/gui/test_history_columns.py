"""The measure dock's history: the short columns whole, the long ones readable (elided in the middle, whole in their
tooltips), and the table scrolls sideways rather than squeeze a column to "…"."""
from __future__ import annotations

from typing import Any, Iterator

import pytest
from datetime import date

from PySide6.QtCharts import QBarCategoryAxis
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QFontMetricsF, QHelpEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolTip

from tests.gui.test_measure_panel import fake_run
from vtopo.gui.measure.history import HISTORY_COLUMNS, SHARING_COLUMNS, when
from vtopo.gui.measure.panel import CHARTS_SHARE, MeasurePanel


@pytest.fixture
def panel(qtbot: Any) -> Iterator[MeasurePanel]:
    made = MeasurePanel()
    qtbot.addWidget(made)
    made.set_history([fake_run(100), fake_run(400, source="h3"), fake_run(50, "udp")])
    yield made
    made.shutdown()


def assert_every_column_readable(panel: MeasurePanel, qtbot: Any) -> None:
    view = panel.history_view
    header = view.table.horizontalHeader()
    room = view.table.viewport().width()
    wanted, least = view.content_widths(), view.readable_widths()
    for column, name in enumerate(HISTORY_COLUMNS):
        assert header.sectionSize(column) >= least[column], name
        if column not in SHARING_COLUMNS:
            assert header.sectionSize(column) >= wanted[column], name
    scrolls = header.length() > room
    qtbot.waitUntil(lambda: view.table.horizontalScrollBar().isVisible() == scrolls)
    if not scrolls:
        assert header.sectionViewportPosition(len(HISTORY_COLUMNS) - 1) + header.sectionSize(len(HISTORY_COLUMNS) - 1) <= room


def hover_tooltip(panel: MeasurePanel, row: int, column: int) -> str:
    """Rest the mouse on a cell: the tooltip Qt shows there."""
    table = panel.history_view.table
    table.scrollTo(table.model().index(row, column))
    at = table.visualRect(table.model().index(row, column)).center()
    QTest.mouseMove(table.viewport(), at)
    QApplication.sendEvent(table.viewport(), QHelpEvent(QEvent.Type.ToolTip, at, table.viewport().mapToGlobal(at)))
    return QToolTip.text()


@pytest.mark.parametrize("width", [700, 900, 1100, 1400])
def test_every_column_readable_at_any_width(panel: MeasurePanel, qtbot: Any, width: int) -> None:
    panel.resize(width, 300)
    panel.show()
    qtbot.waitExposed(panel)
    assert_every_column_readable(panel, qtbot)
    view = panel.history_view
    if width == 1400:
        assert view.table.viewport().width() >= sum(view.content_widths())  # room enough: everything whole
    run = panel.history[0]
    when_column, path_column = HISTORY_COLUMNS.index("When"), HISTORY_COLUMNS.index("Path")
    assert hover_tooltip(panel, 0, when_column) == run.started_at.replace("T", " ").replace("+00:00", " UTC")
    assert hover_tooltip(panel, 0, path_column) == f"{run.address}\n{run.path}"


def test_a_run_of_today_shows_its_time_alone() -> None:
    assert when("2026-11-26T03:04:05+00:00", today=date(2026, 11, 26)) == "03:04:05"
    assert when("2026-11-25T03:04:05+00:00", today=date(2026, 11, 26)) == "2026-11-25 03:04"


def test_dragging_the_splitter_keeps_every_column_readable(panel: MeasurePanel, qtbot: Any) -> None:
    panel.resize(1400, 300)
    panel.show()
    qtbot.waitExposed(panel)
    handle = panel._splitter.handle(2)
    middle = handle.rect().center()
    QTest.mousePress(handle, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, middle)
    for step in range(1, 11):
        QTest.mouseMove(handle, middle + QPoint(30 * step, 0))
    QTest.mouseRelease(handle, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, middle + QPoint(300, 0))
    qtbot.waitUntil(lambda: panel.history_view.width() < 500)
    assert_every_column_readable(panel, qtbot)
    panel.set_history([*panel.history, fake_run(10)])  # a new run does not undo the user's choice
    assert panel.history_view.width() < 500
    assert_every_column_readable(panel, qtbot)


def test_two_runs_compared_at_1600_px_read_whole_however_long_the_history(qtbot: Any) -> None:
    made = MeasurePanel()
    qtbot.addWidget(made)
    made.resize(1600, 330)
    made.show()
    qtbot.waitExposed(made)
    try:
        made.set_history([fake_run(100), fake_run(400, source="h3")])
        table = made.history_view.table

        def compare_the_first_two() -> int:
            table.scrollToTop()
            first, second = (table.visualRect(table.model().index(row, 0)).center() for row in (0, 1))
            QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=first)
            QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, second)
            qtbot.waitUntil(made.legend.isVisible)
            return made.chart.width() + made.bars.width()

        charts = compare_the_first_two()
        made.set_history([fake_run(100), fake_run(400, source="h3"),  # the history grows, with long paths
                          *(fake_run(50.0 + n, source=f"host-with-a-long-name-{n}") for n in range(40))])
        assert compare_the_first_two() >= charts, "the chart shrank as the history grew"
        assert charts >= CHARTS_SHARE * (1600 - made._splitter.sizes()[0]) - 20
        names = made.chart.series_names()
        assert names == ["#1 h1→h2", "#2 h3→h2"]
        assert all(name in made.legend.text() for name in names) and made.legend.wordWrap()
        assert not made.chart.chart().legend().isVisible(), "the chart's own legend cuts names to '…'"
        bars = made.bars.chart()
        categories = next(axis for axis in bars.axes() if isinstance(axis, QBarCategoryAxis))
        metrics = QFontMetricsF(categories.labelsFont())
        assert all(metrics.horizontalAdvance(label) < bars.plotArea().width() / 2 for label in ("#1", "#2"))
    finally:
        made.shutdown()
