"""GUI figures on a generated lab of 2,000 nodes and 2,000 links. Prints numbers; asserts nothing about time.

Each figure is printed beside a baseline measured in the same run: a plain QGraphicsScene holding the same number
of Qt's own items (a rectangle per node, a line per link, no Python in its paint path), driven the same way.
Targets: first paint <= 1 s, median frame <= 16 ms with the whole lab in view, <= 16 ms per frame while dragging,
and no stall of the GUI thread while the lab is checked after an edit (with the Explain dock's script open too) or
after dropping 100 moved nodes.
Run: QT_QPA_PLATFORM=offscreen pytest tests/benchmarks/test_gui_bench.py -s (and again with a busy CPU beside it).
"""
from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, QSettings, Qt
from PySide6.QtGui import QBrush, QColor, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import (QApplication, QGraphicsLineItem, QGraphicsRectItem, QGraphicsScene, QGraphicsView,
                               QMessageBox)

from benchmarks.report import machine_facts, write_fragment
from tests.gui.helpers import send
from vtopo.gui.canvas.items import ICON_SIZE
from vtopo.gui.main_window import MainWindow
from vtopo.lab import registry
from vtopo.model.topology import Endpoint, Interface, Link, Node, Position, Topology

NODES, LINKS, COLUMNS, SPACING = 2000, 2000, 50, 140.0
DRAGGED, DROPPED, DRAG_STEPS = 200, 100, 20
MIN_TURNS = 5


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


def ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def timed_frame(view: QGraphicsView) -> float:
    """One full frame of the canvas: everything visible painted into a pixmap."""
    start = time.perf_counter()
    view.viewport().grab()
    return ms_since(start)


def fit_whole(view: QGraphicsView) -> None:
    view.fitInView(view.scene().itemsBoundingRect(), Qt.AspectRatioMode.KeepAspectRatio)


class PlainScene:
    """The baseline: Qt's own items, a rectangle per node and a line per link, in a view like vtopo's."""

    def __init__(self, topology: Topology, size: Any) -> None:
        self.scene = QGraphicsScene()
        self.rects: dict[str, QGraphicsRectItem] = {}
        self.lines: dict[str, tuple[QGraphicsLineItem, str, str]] = {}
        brush, pen = QBrush(QColor("#4a90d9")), QPen(QColor("#888888"), 2)
        for node in topology.nodes.values():
            rect = QGraphicsRectItem(QRectF(-ICON_SIZE / 2, -ICON_SIZE / 2, ICON_SIZE, ICON_SIZE))
            rect.setBrush(brush)
            rect.setPos(node.position.x, node.position.y)
            rect.setFlags(QGraphicsRectItem.GraphicsItemFlag.ItemIsSelectable
                          | QGraphicsRectItem.GraphicsItemFlag.ItemIsMovable)
            self.scene.addItem(rect)
            self.rects[node.id] = rect
        for link in topology.links.values():
            line = QGraphicsLineItem()
            line.setPen(pen)
            self.scene.addItem(line)
            self.lines[link.id] = (line, link.a.node, link.b.node)
            self.follow(link.id)
        self.view = QGraphicsView(self.scene)
        self.view.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.SmoothPixmapTransform)
        self.view.resize(size)
        self.view.show()

    def follow(self, link_id: str) -> None:
        line, a, b = self.lines[link_id]
        line.setLine(self.rects[a].x(), self.rects[a].y(), self.rects[b].x(), self.rects[b].y())

    def drag(self, ids: list[str], links: set[str]) -> list[float]:
        """The same drag as vtopo's: each step moves the nodes, then the links touching them follow."""
        frames = []
        for _ in range(DRAG_STEPS):
            begin = time.perf_counter()
            for node_id in ids:
                self.rects[node_id].moveBy(3, 2)
            for link_id in links:
                self.follow(link_id)
            self.view.viewport().grab()
            frames.append(ms_since(begin))
        return frames


def mouse_drag(window: MainWindow, node_id: str, steps: int, per_step: Callable[[], None]) -> tuple[list[float], float]:
    """Press on a node, move the mouse `steps` times (each a frame: the move, then `per_step`), release.
    Returns the frames' times and the release's (the drop: one Move step on the undo stack)."""
    view = window.view
    start = view.mapFromScene(window.editor.scene.nodes[node_id].pos())
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send(view, QMouseEvent.Type.MouseButtonPress, start, left, left)
    frames = []
    for step in range(1, steps + 1):
        begin = time.perf_counter()
        send(view, QMouseEvent.Type.MouseMove, start + QPoint(3 * step, 2 * step), none, left)
        per_step()
        frames.append(ms_since(begin))
    begin = time.perf_counter()
    send(view, QMouseEvent.Type.MouseButtonRelease, start + QPoint(3 * steps, 2 * steps), left, none)
    return frames, ms_since(begin)


def until_idle(window: MainWindow, frame: Callable[[], Any]) -> tuple[float, float]:
    """Keep the event loop turning, with a frame of the canvas in each turn, until the lab is checked again, and
    for at least MIN_TURNS turns (an edit that starts no check still has its repaint to come).
    Returns the ms it took and the longest turn (how long the window was unresponsive at most)."""
    start = last = time.perf_counter()
    longest = 0.0
    turns = 0
    while window.analyzer.pending or turns < MIN_TURNS:
        turns += 1
        QApplication.processEvents()
        frame()
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
        time.sleep(0.001)
    return ms_since(start), longest * 1000


def shown_window(qtbot: Any, tmp_path: Path, topology: Topology) -> MainWindow:
    """The designer shown with `topology` open, with no deployer behind it."""
    window = MainWindow(registry(), QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                        tmp_path / "autosave", lambda: (None, "benchmark"))
    qtbot.addWidget(window)
    window.editor.set_topology(topology)
    window.show()
    qtbot.waitExposed(window)
    return window


def row(name: str, ours: float, plain: float | None, unit: str = "ms") -> str:
    ratio = f"{ours / plain:.2f}" if plain else "-"
    plain_text = f"{plain:.1f} {unit}" if plain is not None else "-"
    return f"| {name} | {ours:.1f} {unit} | {plain_text} | {ratio} |"


@pytest.mark.benchmark
def test_gui_with_2000_nodes_and_2000_links(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    topology = generated_lab()
    facts = machine_facts()
    rss_before = rss_mb()
    start = time.perf_counter()
    window = shown_window(qtbot, tmp_path, topology)
    window.view.fit_to_view()
    window.view.viewport().grab()
    first_paint = ms_since(start)
    view, scene = window.view, window.editor.scene
    qtbot.waitUntil(lambda: not window.analyzer.pending, timeout=60_000)

    start = time.perf_counter()
    plain = PlainScene(generated_lab(), view.viewport().size())
    qtbot.addWidget(plain.view)
    fit_whole(plain.view)
    plain.view.viewport().grab()
    plain_first_paint = ms_since(start)

    def zoom_and_pan(target: QGraphicsView, zoom: Callable[[float], None]) -> list[float]:
        target.resetTransform()
        target.centerOn(QPointF(COLUMNS * SPACING / 2, 10 * SPACING))
        frames = []
        for step in range(40):
            zoom(0.9 if step < 20 else 1 / 0.9)
            frames.append(timed_frame(target))
        for step in range(40):
            bar = target.horizontalScrollBar() if step % 2 else target.verticalScrollBar()
            bar.setValue(bar.value() + 60)
            frames.append(timed_frame(target))
        return frames

    frames = zoom_and_pan(view, view.zoom_by)
    plain_frames = zoom_and_pan(plain.view, lambda factor: plain.view.scale(factor, factor))
    view.fit_to_view()
    overview = [timed_frame(view) for _ in range(9)]
    fit_whole(plain.view)
    plain_overview = [timed_frame(plain.view) for _ in range(9)]

    # drag a selection of 200 nodes with the mouse, at zoom 1
    view.reset_zoom()
    ids = [f"n{i}" for i in range(DRAGGED)]
    scene.select_ids(ids)
    view.centerOn(scene.nodes["n10"])
    view.viewport().grab()  # the lab at this zoom and the selection are on screen before the drag starts
    drag_frames, _drop_ms = mouse_drag(window, "n10", DRAG_STEPS, view.viewport().grab)
    plain.view.resetTransform()
    plain.view.centerOn(plain.rects["n10"])
    plain.view.viewport().grab()
    touched = {link.id for link in topology.links.values() if {link.a.node, link.b.node} & set(ids)}
    plain_drag_frames = plain.drag(ids, touched)
    qtbot.waitUntil(lambda: not window.analyzer.pending, timeout=60_000)
    begin = time.perf_counter()
    window.editor.undo_stack.undo()
    undo_ms = ms_since(begin)

    # drop 100 dragged nodes with the whole lab in view: how long until the Problems panel is idle
    view.fit_to_view()
    qtbot.waitUntil(lambda: not window.analyzer.pending, timeout=60_000)
    scene.select_ids([f"n{i}" for i in range(DROPPED)])
    QApplication.processEvents()
    view.viewport().grab()  # the zoomed-out lab and the selection are on screen before the drag starts
    moved_from = scene.nodes["n0"].pos()
    _frames, drop_ms = mouse_drag(window, "n10", 4, lambda: None)
    assert scene.nodes["n0"].pos() != moved_from, "the drag did not move the selection"
    idle_ms, drop_stall_ms = until_idle(window, view.viewport().grab)
    drop_to_idle_ms, drop_stall_ms = drop_ms + idle_ms, max(drop_ms, drop_stall_ms)

    # an edit the checks read (a rename): frames of the whole lab while the check runs on its worker thread
    qtbot.waitUntil(lambda: not window.analyzer.pending, timeout=60_000)
    assert window.editor.rename_node("n1", "core") == ""  # a valid name: the check goes on to the plan
    checking: list[float] = []
    check_ms, check_stall_ms = until_idle(window, lambda: checking.append(timed_frame(view)))

    # the same with the Explain dock open: its script of the whole lab (60,000 lines) follows the rename
    window.explain_dock.show()
    window.explain_dock.raise_()
    qtbot.waitUntil(lambda: window.explain.text.toPlainText() == window.analyzer.latest.explanation, timeout=60_000)
    assert window.editor.rename_node("n3", "edge") == ""
    explained_ms, explained_stall_ms = until_idle(window, view.viewport().grab)
    while window.explain.text.toPlainText() != window.analyzer.latest.explanation:  # its changes come a moment later
        more_ms, more_stall_ms = until_idle(window, view.viewport().grab)
        explained_ms, explained_stall_ms = explained_ms + more_ms, max(explained_stall_ms, more_stall_ms)
    rss = rss_mb()

    lines = [
        "| | vtopo | plain QGraphicsScene | ratio |", "|---|---|---|---|",
        row("first paint", first_paint, plain_first_paint),
        row("zoom and pan, median frame", statistics.median(frames), statistics.median(plain_frames)),
        row("zoom and pan, 90th percentile frame", statistics.quantiles(frames, n=10)[-1],
            statistics.quantiles(plain_frames, n=10)[-1]),
        row("whole lab in view, median frame", statistics.median(overview), statistics.median(plain_overview)),
        row(f"dragging {DRAGGED} nodes, median frame", statistics.median(drag_frames),
            statistics.median(plain_drag_frames)),
        row(f"dragging {DRAGGED} nodes, slowest frame", max(drag_frames), max(plain_drag_frames)),
        row(f"undo of the move of {DRAGGED} nodes", undo_ms, None),
        row(f"dropping {DROPPED} moved nodes, until the checks are idle", drop_to_idle_ms, None),
        row("the same, longest stall of the GUI thread", drop_stall_ms, None),
        row("renaming a node, until the whole lab is checked", check_ms, None),
        row("the same, median frame of the whole lab meanwhile",
            statistics.median(checking) if checking else 0.0, statistics.median(plain_overview)),
        row("the same, longest stall of the GUI thread", check_stall_ms, None),
        row("renaming a node with the Explain dock open, until its script shows it", explained_ms, None),
        row("the same, longest stall of the GUI thread", explained_stall_ms, None),
        row("memory (RSS)", rss, rss_before, "MB"),
    ]
    print(f"\nGUI benchmark: {len(topology.nodes)} nodes, {len(topology.links)} links; {facts}")
    print("\n".join(lines))
    write_fragment("gui", "\n".join([
        "### The designer with 2,000 nodes", "", facts, "",
        f"A generated lab of {len(topology.nodes)} nodes and {len(topology.links)} links, rendered offscreen, beside "
        "a plain QGraphicsScene with as many of Qt's own items (RSS: before the window). Targets: first paint "
        "1,000 ms, 16 ms per frame with the whole lab in view and while dragging, no stall while checking.", "",
        *lines]))
