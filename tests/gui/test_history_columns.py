"""The measure dock's history: every column stays in view, the short ones whole, however narrow the panel."""
from __future__ import annotations

from typing import Any, Iterator

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from tests.gui.test_measure_panel import fake_run
from vtopo.gui.measure.history import HISTORY_COLUMNS, SHARING_COLUMNS
from vtopo.gui.measure.panel import MeasurePanel


@pytest.fixture
def panel(qtbot: Any) -> Iterator[MeasurePanel]:
    made = MeasurePanel()
    qtbot.addWidget(made)
    made.set_history([fake_run(100), fake_run(400, source="h3"), fake_run(50, "udp")])
    yield made
    made.shutdown()


def assert_no_column_clipped(panel: MeasurePanel) -> None:
    view = panel.history_view
    header = view.table.horizontalHeader()
    room = view.table.viewport().width()
    wanted = view.content_widths()
    for column, name in enumerate(HISTORY_COLUMNS):
        assert header.sectionViewportPosition(column) + header.sectionSize(column) <= room, (name, room)
        if column not in SHARING_COLUMNS:
            assert header.sectionSize(column) >= wanted[column], name
    assert not view.table.horizontalScrollBar().isVisible()


@pytest.mark.parametrize("width", [900, 1100, 1400])
def test_every_column_in_view_at_any_width(panel: MeasurePanel, qtbot: Any, width: int) -> None:
    panel.resize(width, 300)
    panel.show()
    qtbot.waitExposed(panel)
    assert_no_column_clipped(panel)
    view = panel.history_view
    if width == 1400:
        assert view.table.viewport().width() >= sum(view.content_widths())  # room enough: everything whole
    when = view.table.item(0, HISTORY_COLUMNS.index("When"))
    assert when.toolTip() == when.text()  # an elided cell says it all in its tooltip


def test_dragging_the_splitter_keeps_every_column_in_view(panel: MeasurePanel, qtbot: Any) -> None:
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
    assert_no_column_clipped(panel)
    panel.set_history([*panel.history, fake_run(10)])  # a new run does not undo the user's choice
    assert panel.history_view.width() < 500
    assert_no_column_clipped(panel)
