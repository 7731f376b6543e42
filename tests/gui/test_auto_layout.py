"""Auto-layout from the keyboard and the canvas menu: rows by role, one undo step, notes where they were."""
from __future__ import annotations

import itertools
from typing import Any, Callable

from PySide6.QtCore import QPointF, Qt

from tests.gui.helpers import choose, right_click, when_menu_opens
from tests.gui.test_keyboard import focus_canvas
from vtopo.gui.document.layout import FORCE_DIRECTED_LIMIT
from vtopo.gui.main_window import MainWindow
from vtopo.model.topology import Node, Position

Key = Qt.Key
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def positions(window: MainWindow) -> dict[str, tuple[float, float]]:
    topology = window.editor.topology
    return {**{n.name: (n.position.x, n.position.y) for n in topology.nodes.values()},
            **{a.id: (a.position.x, a.position.y) for a in topology.annotations.values()}}


def scene_positions(window: MainWindow) -> dict[str, tuple[float, float]]:
    return {window.editor.topology.nodes[i].name: (item.pos().x(), item.pos().y())
            for i, item in window.editor.scene.nodes.items()}


def test_ctrl_shift_l_puts_routers_over_switches_over_hosts_and_ctrl_z_undoes_it(
        make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window("l2-vs-l3")
    focus_canvas(qtbot, window)
    before = positions(window)
    steps = window.editor.undo_stack.count()
    qtbot.keyClick(window.view, Key.Key_L, CTRL_SHIFT)
    after = positions(window)
    assert window.editor.undo_stack.count() == steps + 1
    assert window.editor.undo_stack.undoText() == "Auto-layout"
    y = {name: after[name][1] for name in ("r1", "r2", "lan1", "lan2", "h1", "h2", "h3")}
    assert max(y["r1"], y["r2"]) < min(y["lan1"], y["lan2"])
    assert max(y["lan1"], y["lan2"]) < min(y["h1"], y["h2"], y["h3"])
    assert {k: v for k, v in after.items() if k.startswith("note")} == \
        {k: v for k, v in before.items() if k.startswith("note")}
    assert scene_positions(window) == {k: v for k, v in after.items() if not k.startswith("note")}
    xs = sorted(after[name][0] for name in ("h1", "h2", "h3"))
    assert xs[1] - xs[0] >= 100 and xs[2] - xs[1] >= 100  # a row does not pile its nodes up
    qtbot.keyClick(window.view, Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert positions(window) == before
    assert scene_positions(window) == {k: v for k, v in before.items() if not k.startswith("note")}


def test_force_directed_from_the_canvas_menu_spreads_the_nodes(make_window: Callable[..., MainWindow],
                                                               qtbot: Any) -> None:
    window = make_window("host-routed-bridges")
    focus_canvas(qtbot, window)
    before = positions(window)
    empty = window.view.mapToScene(window.view.viewport().rect().bottomRight()) - QPointF(20, 20)
    when_menu_opens(choose("Auto-layout: &force-directed"))
    right_click(window.view, empty)
    after = positions(window)
    assert after != before and window.editor.undo_stack.undoText() == "Auto-layout"
    nodes = [after[n.name] for n in window.editor.topology.nodes.values()]
    closest = min(((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5 for a, b in itertools.combinations(nodes, 2))
    assert closest > 60, closest


def test_force_directed_declines_a_lab_too_big_for_it(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window(None)
    topology = window.editor.topology
    for index in range(FORCE_DIRECTED_LIMIT + 1):
        topology.nodes[f"n{index}"] = Node(f"n{index}", f"c{index}", "container", {}, Position(index * 10.0, 0))
    window.editor.set_topology(topology)
    before = positions(window)
    when_menu_opens(choose("Auto-layout: &force-directed"))
    right_click(window.view, window.view.mapToScene(window.view.viewport().rect().bottomRight()) - QPointF(5, 5))
    assert positions(window) == before
    assert "use the layered layout" in window.statusBar().currentMessage()
