"""The Checks dock: run all with a click, pass or fail per check, every check's result marked on the canvas and the
failing pair lit; and checks added from the right-click menu of two selected nodes, undoable."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QPointF, Qt, QTimer
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot

from fake_lab import FakeLab
from tests.gui.helpers import click, deploy_or_destroy, send, view_point
from tests.gui.test_first_day import HostDeployer
from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels.checks import FAIL, PASS


def _run(window: MainWindow, qtbot: QtBot) -> list[tuple[str, str]]:
    panel = window.checks_panel
    with qtbot.waitSignal(window.checks.finished, timeout=10000):
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    return [(panel.tree.topLevelItem(i).text(0), panel.tree.topLevelItem(i).text(1))
            for i in range(panel.tree.topLevelItemCount())]


def test_run_checks_marks_every_result_on_the_canvas_and_lights_the_failing_pair(make_window: Callable[..., MainWindow],
                                                                   qtbot: QtBot) -> None:
    window = make_window()
    lab = FakeLab()
    window.checks.probe_for = lambda topology: lab
    rows = _run(window, qtbot)
    assert len(rows) == 20 and {result for _, result in rows} == {"pass"}
    assert window.checks_panel.summary.text() == "All 20 checks pass."
    scene = window.editor.scene
    items = {**scene.nodes, **scene.links}
    assert {item_id for item_id, item in items.items() if item.verdict == PASS} == set(items)

    lab.unreachable[("h2", "h3")] = "h2 cannot reach 10.2.0.10 (h3): host unreachable (no answer to ARP/ND)"
    rows = _run(window, qtbot)
    assert [name for name, result in rows if result == "FAIL"] == ["h2 reaches h3"]
    current = window.checks_panel.tree.currentItem()
    assert current.text(0) == "h2 reaches h3" and "Expected: Like h1, h2 needs a /24 mask" in current.text(2)
    failed = {item_id for item_id, item in items.items() if item.verdict == FAIL}
    assert {"h2", "h3", "r1-eth1--r2-eth1"} <= failed and "h1" not in failed
    assert items["h1"].verdict == PASS
    lit = {item_id for item_id, item in [*scene.nodes.items(), *scene.links.items()] if item.on_path}
    assert {"h2", "h3", "r1-eth1--r2-eth1"} <= lit and "h1" not in lit


def test_expect_reachable_from_the_menu_of_two_selected_nodes(make_window: Callable[..., MainWindow],
                                                              qtbot: QtBot) -> None:
    window = make_window()
    editor, view = window.editor, window.view
    before = len(editor.topology.checks)
    h1, h3 = editor.scene.nodes["h1"].pos(), editor.scene.nodes["h3"].pos()
    click(view, h1)
    click(view, h3, Qt.KeyboardModifier.ControlModifier)
    assert editor.scene.selected_node_ids() == ["h1", "h3"]

    def choose() -> None:
        menu = QApplication.activePopupWidget()
        assert isinstance(menu, QMenu)
        menu.setActiveAction(next(a for a in menu.actions() if a.text() == "Expect unreachable"))
        qtbot.keyClick(menu, Qt.Key.Key_Return)

    QTimer.singleShot(50, choose)
    right = Qt.MouseButton.RightButton
    at = view_point(view, QPointF(h3))
    send(view, QMouseEvent.Type.MouseButtonPress, at, right, right)
    send(view, QMouseEvent.Type.MouseButtonRelease, at, right, Qt.MouseButton.NoButton)
    assert len(editor.topology.checks) == before + 1
    added = editor.topology.checks[-1]
    assert (added.name, added.params) == ("h1 cannot reach h3", {"source": "h1", "destination": "h3",
                                                                 "expect": False})
    assert window.checks_panel.tree.topLevelItemCount() == before + 1
    assert editor.undo_stack.undoText() == "Add check h1 cannot reach h3"
    qtbot.keyClick(view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert len(editor.topology.checks) == before
    assert window.checks_panel.tree.topLevelItemCount() == before


def test_the_checks_dock_asks_for_a_deploy_only_while_the_lab_is_not_deployed(
        make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window("bridge-veth", deployer_loader=lambda: (HostDeployer(), ""))
    summary = window.checks_panel.summary
    assert summary.text().endswith("Deploy the lab, then run them."), summary.text()
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        qtbot.keyClick(window.view, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: summary.text().endswith("The lab runs: run them."), timeout=5000)
    deploy_or_destroy(window, qtbot, False)
    qtbot.waitUntil(lambda: summary.text().endswith("Deploy the lab, then run them."), timeout=5000)
