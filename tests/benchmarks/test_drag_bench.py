"""Dragging the bridge of a 1,000-port lab (two bridges, 2,000 containers) with the mouse, offscreen: the press's turn
of the event loop and each step's (the move event and the paint it causes), zoomed in to 100% on the bridge and with
the whole lab in view. Baseline, in the same run and the same scene: dragging a container of one link the same way. Target: every
turn within 16 ms. Prints; asserts no times.
Run: QT_QPA_PLATFORM=offscreen pytest tests/benchmarks/test_drag_bench.py -s
"""
from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QMessageBox

from benchmarks.report import machine_facts, write_fragment
from benchmarks.test_designer_live_bench import two_bridges
from benchmarks.test_gui_bench import ms_since, row, shown_window
from tests.gui.helpers import links_settled, send
from vtopo.gui.main_window import MainWindow

COUNT = 2000
STEPS = 40
BRIDGE, CONTAINER = "br0", "c525"  # a container in the middle of the bridge's rows


def step_turns(window: MainWindow, node_id: str) -> tuple[float, list[float]]:
    """Press on the node, move the mouse STEPS times, each followed by a turn of the event loop (which paints the
    step), release, and let the links settle. Returns the press's ms (with its turn) and each step's."""
    view, scene = window.view, window.editor.scene
    start = view.mapFromScene(scene.nodes[node_id].pos())
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    begin = time.perf_counter()
    send(view, QMouseEvent.Type.MouseButtonPress, start, left, left)
    QApplication.processEvents()
    pressed = ms_since(begin)
    turns = []
    for step in range(1, STEPS + 1):
        begin = time.perf_counter()
        send(view, QMouseEvent.Type.MouseMove, start + QPoint(3 * step, 2 * step), none, left)
        QApplication.processEvents()
        turns.append(ms_since(begin))
    send(view, QMouseEvent.Type.MouseButtonRelease, start + QPoint(3 * STEPS, 2 * STEPS), left, none)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (window.analyzer.pending or not links_settled(scene)):
        QApplication.processEvents()
    return pressed, turns


@pytest.mark.benchmark
def test_dragging_a_bridge_of_a_thousand_ports(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    facts = machine_facts()
    window = shown_window(qtbot, tmp_path, two_bridges(COUNT))
    window.resize(1200, 900)
    qtbot.waitUntil(lambda: not window.analyzer.pending, timeout=120_000)
    view, scene = window.view, window.editor.scene
    lines = ["| | bridge of 1,000 ports | container of 1 link | ratio |", "|---|---|---|---|"]
    for name, show in (("whole lab in view", view.fit_to_view), ("zoomed in to 100%", view.reset_zoom)):
        show()
        view.centerOn(scene.nodes[BRIDGE])
        qtbot.waitUntil(lambda: links_settled(scene), timeout=120_000)
        (bridge_pressed, bridge), (container_pressed, container) = step_turns(window, BRIDGE), step_turns(window,
                                                                                                          CONTAINER)
        lines += [row(f"{name}, the press", bridge_pressed, container_pressed),
                  row(f"{name}, median step", statistics.median(bridge), statistics.median(container)),
                  row(f"{name}, slowest step", max(bridge), max(container))]
    print(f"\nDrag benchmark: {len(scene.nodes)} nodes, {len(scene.links)} links; {facts}")
    print("\n".join(lines))
    write_fragment("drag", "\n".join([
        "### Dragging a bridge of 1,000 ports", "", facts, "",
        f"Two bridges and {COUNT:,} containers, rendered offscreen: the turn of the event loop the press and each "
        "mouse move take (the event and the paint it causes), dragging a bridge of 1,000 ports, beside dragging a "
        "container of one link in the same scene. Target: 16 ms a step.", "", *lines]))
