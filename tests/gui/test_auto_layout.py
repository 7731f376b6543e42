"""Auto-layout from the keyboard and the canvas menu: rows by role, one undo step, notes where they were."""
from __future__ import annotations

import itertools
from typing import Any, Callable

import numpy as np
from PySide6.QtCore import QPointF, Qt

from tests.gui.helpers import choose, right_click, when_menu_opens
from tests.gui.test_keyboard import focus_canvas
from vtopo.gui.main_window import MainWindow
from vtopo.model.topology import Endpoint, Link, Node, Position, Topology

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


def campus(routers: int = 50, bridges: int = 4, hosts: int = 9) -> Topology:
    """Routers in a chain, each with bridges of hosts: 2,050 nodes by default."""
    topology = Topology(name="campus")
    ports: dict[str, int] = {}

    def add(node_id: str, kind: str) -> None:
        topology.nodes[node_id] = Node(node_id, node_id, kind, {}, Position(len(topology.nodes) % 50 * 140.0,
                                                                           len(topology.nodes) // 50 * 140.0))

    def link(a: str, b: str) -> None:
        ends = []
        for node_id in (a, b):
            ports[node_id] = ports.get(node_id, 0) + 1
            ends.append(Endpoint(node_id, f"eth{ports[node_id]}"))
        topology.links[f"l{len(topology.links)}"] = Link(f"l{len(topology.links)}", ends[0], ends[1])

    for r in range(routers):
        add(f"r{r}", "container")
        if r:
            link(f"r{r - 1}", f"r{r}")
        for b in range(bridges):
            add(f"br{r}-{b}", "bridge")
            link(f"r{r}", f"br{r}-{b}")
            for h in range(hosts):
                add(f"h{r}-{b}-{h}", "container")
                link(f"br{r}-{b}", f"h{r}-{b}-{h}")
    return topology


def test_force_directed_lays_out_2000_nodes_as_one_undo_step(make_window: Callable[..., MainWindow],
                                                              qtbot: Any) -> None:
    window = make_window(None)
    window.editor.set_topology(campus())
    before = positions(window)
    steps = window.editor.undo_stack.count()
    empty = window.editor.scene.itemsBoundingRect().bottomRight() + QPointF(400, 400)
    window.view.centerOn(empty)
    when_menu_opens(choose("Auto-layout: &force-directed"))
    right_click(window.view, empty)
    after = positions(window)
    assert window.editor.undo_stack.count() == steps + 1 and window.editor.undo_stack.undoText() == "Auto-layout"
    assert sum(after[name] != before[name] for name in before) > 2000
    points = np.array(list(after.values()))
    nearest = np.array([np.hypot(*np.delete(points - point, i, axis=0).T).min() for i, point in enumerate(points)])
    assert np.mean(nearest < 140) <= 0.05, "nodes are a column apart"
    assert np.mean(nearest < 60) < 0.01, "hardly any node lies on another"
    nodes = window.editor.topology.nodes
    lengths = [float(np.hypot(nodes[link.a.node].position.x - nodes[link.b.node].position.x,
                              nodes[link.a.node].position.y - nodes[link.b.node].position.y))
               for link in window.editor.topology.links.values()]
    assert np.median(lengths) < 4 * 150, "linked nodes end up near each other"
    focus_canvas(qtbot, window)
    qtbot.keyClick(window.view, Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert positions(window) == before
