"""GUI figures on a generated lab of 2,000 nodes and 2,000 links. Prints numbers; asserts nothing about time.

Targets: first paint <= 2 s, median frame while zooming/panning <= 33 ms, RSS <= 500 MB, and a smooth drag of
a 200-node selection. Run: QT_QPA_PLATFORM=offscreen pytest tests/benchmarks/test_gui_bench.py -s
"""
from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPointF, QSettings
from PySide6.QtWidgets import QApplication, QMessageBox

from benchmarks.report import machine_facts, write_fragment
from vtopo.gui.main_window import MainWindow
from vtopo.lab import registry
from vtopo.model.topology import Endpoint, Interface, Link, Node, Position, Topology

NODES, LINKS, COLUMNS, SPACING = 2000, 2000, 50, 140.0


def generated_lab() -> Topology:
    """Containers and bridges alternating on a grid, each linked to the next one (a ring of 2,000 links)."""
    topology = Topology(name="bench", prefix="bench")
    for i in range(NODES):
        kind = "container" if i % 2 == 0 else "bridge"
        name = f"c{i}" if kind == "container" else f"br{i}"
        topology.nodes[f"n{i}"] = Node(f"n{i}", name, kind, {},
                                       Position((i % COLUMNS) * SPACING, (i // COLUMNS) * SPACING))
    used: dict[str, int] = {}
    for i in range(LINKS):
        a, b = f"n{i}", f"n{(i + 1) % NODES}"
        ends = []
        for node_id in (a, b):
            index = used.get(node_id, 0)
            used[node_id] = index + 1
            port = f"eth{index}" if topology.nodes[node_id].kind == "container" else f"p{index + 1}"
            addresses = [f"10.{i // 250}.{i % 250}.{1 + len(ends)}/24"] if port.startswith("eth") else []
            ends.append(Endpoint(node_id, port, Interface(addresses=addresses)))
        topology.links[f"l{i}"] = Link(f"l{i}", ends[0], ends[1])
    return topology


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def timed_repaint(window: MainWindow) -> float:
    """One full frame of the canvas: everything visible painted into a pixmap."""
    start = time.perf_counter()
    window.view.viewport().grab()
    return (time.perf_counter() - start) * 1000


def drop_to_idle(window: MainWindow, items: list[Any]) -> tuple[float, float]:
    """Move `items` and drop them; return the ms until the lab is checked again, and the longest GUI stall."""
    for item in items:
        item.moveBy(40, 0)
    dropped = last = time.perf_counter()
    window.editor.commit_moves()
    longest = 0.0
    while window.analyzer.pending:
        QApplication.processEvents()
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
        time.sleep(0.001)
    return (time.perf_counter() - dropped) * 1000, longest * 1000


@pytest.mark.benchmark
def test_gui_with_2000_nodes_and_2000_links(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    topology = generated_lab()
    facts = machine_facts()
    rss_before = rss_mb()
    start = time.perf_counter()
    window = MainWindow(registry(), QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                        tmp_path / "autosave", lambda: (None, "benchmark"))
    qtbot.addWidget(window)
    window.editor.set_topology(topology)
    window.show()
    qtbot.waitExposed(window)
    window.view.fit_to_view()
    window.view.viewport().grab()
    first_paint = time.perf_counter() - start

    view = window.view
    view.reset_zoom()
    view.centerOn(QPointF(COLUMNS * SPACING / 2, 10 * SPACING))
    frames: list[float] = []
    for step in range(40):
        view.zoom_by(0.9 if step < 20 else 1 / 0.9)
        frames.append(timed_repaint(window))
    for step in range(40):
        bar = view.horizontalScrollBar() if step % 2 else view.verticalScrollBar()
        bar.setValue(bar.value() + 60)
        frames.append(timed_repaint(window))
    view.fit_to_view()
    overview = [timed_repaint(window) for _ in range(5)]

    # drag a selection of 200 nodes
    view.reset_zoom()
    ids = [f"n{i}" for i in range(200)]
    window.editor.scene.select_ids(ids)
    items = [window.editor.scene.nodes[i] for i in ids]
    drag_frames: list[float] = []
    for step in range(20):
        begin = time.perf_counter()
        for item in items:
            item.moveBy(3, 2)
        view.viewport().grab()
        drag_frames.append((time.perf_counter() - begin) * 1000)
    begin = time.perf_counter()
    assert window.editor.commit_moves()
    commit_ms = (time.perf_counter() - begin) * 1000
    begin = time.perf_counter()
    window.editor.undo_stack.undo()
    undo_ms = (time.perf_counter() - begin) * 1000
    qtbot.waitUntil(lambda: not window.analyzer.pending, timeout=60_000)
    drop_to_idle_ms, longest_stall_ms = drop_to_idle(window, items[:100])
    rss = rss_mb()

    print(f"\nGUI benchmark: {len(topology.nodes)} nodes, {len(topology.links)} links")
    print(f"  time to first paint        {first_paint * 1000:8.0f} ms   (target <= 2000 ms)")
    print(f"  zoom/pan frame, median     {statistics.median(frames):8.1f} ms   (target <= 33 ms; "
          f"p90 {statistics.quantiles(frames, n=10)[-1]:.1f} ms)")
    print(f"  whole lab in view, median  {statistics.median(overview):8.1f} ms")
    print(f"  drag 200 nodes, per frame  {statistics.median(drag_frames):8.1f} ms median, "
          f"{max(drag_frames):.1f} ms max")
    print(f"  Move step of 200 nodes     {commit_ms:8.1f} ms push, {undo_ms:.1f} ms undo")
    print(f"  drop of 100 moved nodes    {drop_to_idle_ms:8.0f} ms until the Problems panel is idle, "
          f"the GUI thread stalled {longest_stall_ms:.0f} ms at most")
    print(f"  RSS                        {rss:8.0f} MB   (target <= 500 MB; {rss_before:.0f} MB before the window)")
    write_fragment("gui", "\n".join([
        "### The designer with 2,000 nodes", "", facts, "",
        f"A generated lab of {len(topology.nodes)} nodes and {len(topology.links)} links, rendered offscreen.", "",
        "| | measured | target |", "|---|---|---|",
        f"| first paint | {first_paint * 1000:.0f} ms | 1,000 ms |",
        f"| zoom and pan, median frame | {statistics.median(frames):.1f} ms | 16 ms |",
        f"| whole lab in view, median frame | {statistics.median(overview):.1f} ms | 16 ms |",
        f"| dragging 200 nodes, median frame | {statistics.median(drag_frames):.1f} ms | 16 ms |",
        f"| dropping 100 moved nodes, until the checks are done | {drop_to_idle_ms:.0f} ms | - |",
        f"| the same, longest stall of the GUI thread | {longest_stall_ms:.0f} ms | 16 ms |",
        f"| memory (RSS) | {rss:.0f} MB | 500 MB |"]))
