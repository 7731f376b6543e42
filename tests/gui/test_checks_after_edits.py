"""Edits the checks cannot see start no check; the others do, once, a moment after the last one."""
from __future__ import annotations

from PySide6.QtCore import QPointF, Qt

from tests.gui.conftest import wait_analysis
from vtopo.model.topology import Node, Position
from tests.gui.helpers import click, drag


def test_dropping_dragged_nodes_starts_no_check(make_window, qtbot):
    window = make_window()
    checked = window.analyzer.latest
    node = next(iter(window.editor.topology.nodes.values()))
    start = window.editor.scene.nodes[node.id].pos()
    drag(window.view, start, start + QPointF(80, 40))
    assert (node.position.x, node.position.y) != (start.x(), start.y()), "the drop did not move the node"
    assert not window.analyzer.pending
    assert window.analyzer.latest is checked


def test_deleting_a_node_checks_the_lab_again(make_window, qtbot):
    window = make_window()
    checked = window.analyzer.latest
    node = next(iter(window.editor.topology.nodes.values()))
    click(window.view, window.editor.scene.nodes[node.id].pos())
    qtbot.keyClick(window.view, Qt.Key.Key_Delete)
    assert node.id not in window.editor.topology.nodes
    assert window.analyzer.pending
    wait_analysis(qtbot, window)
    assert window.analyzer.latest is not checked


def test_removing_a_node_without_links_checks_the_lab_again(make_window, qtbot):
    window = make_window()
    window.editor.topology.add_node(Node("lonely", "lonely", "container", {}, Position(0, 0)))
    wait_analysis(qtbot, window)
    checked = window.analyzer.latest
    window.editor.topology.remove_node("lonely")
    assert window.analyzer.pending
    wait_analysis(qtbot, window)
    assert window.analyzer.latest is not checked
