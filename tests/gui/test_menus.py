"""Right-click menus, tooltips, double-click and in-place rename, driven by real mouse and key events."""
from __future__ import annotations

from typing import Any, Callable

import pytest
from PySide6.QtCore import QPointF, Qt

from tests.gui.helpers import choose, dismiss, double_click, right_click, tooltip_at, when_menu_opens
from tests.gui.test_deploy import FakeDeployer
from tests.gui.test_keyboard import focus_canvas
from vtopo.gui.canvas.rename import InlineRename
from vtopo.gui.console import terminal
from vtopo.gui.canvas.context_menus import MenuEntry
from vtopo.gui.main_window import MainWindow


def link_middle(window: MainWindow, link_id: str) -> QPointF:
    return window.editor.scene.links[link_id].line.center()


def two_hosts_and_a_link(window: MainWindow) -> tuple[str, str, str]:
    editor = window.editor
    a = editor.place_node("container", QPointF(0, 0))
    b = editor.place_node("container", QPointF(300, 0))
    assert a and b
    link = editor.connect_nodes(a.id, b.id)
    assert link
    return a.id, b.id, link.id


def test_right_click_on_a_link_opens_its_menu_and_delete_removes_it(make_window: Callable[..., MainWindow],
                                                                     qtbot: Any) -> None:
    window = make_window(None)
    _a, _b, link_id = two_hosts_and_a_link(window)
    seen = when_menu_opens(choose("De&lete"))
    right_click(window.view, link_middle(window, link_id))
    assert seen and seen[0][:2] == ["P&roperties", "De&lete"]
    assert link_id not in window.editor.topology.links
    window.editor.undo_stack.undo()
    assert link_id in window.editor.topology.links


def test_link_properties_selects_it_in_the_inspector(make_window: Callable[..., MainWindow]) -> None:
    window = make_window(None)
    _a, _b, link_id = two_hosts_and_a_link(window)
    window.inspector_dock.hide()
    when_menu_opens(choose("P&roperties"))
    right_click(window.view, link_middle(window, link_id))
    assert window.editor.scene.selected_link_ids() == [link_id]
    assert window.inspector_dock.isVisible()


def test_features_add_entries_to_the_node_and_link_menus(make_window: Callable[..., MainWindow]) -> None:
    window = make_window(None)
    a, _b, link_id = two_hosts_and_a_link(window)
    chosen: list[str] = []
    window.menu_actions.menus.add_link_entry(MenuEntry("Take down", chosen.append, section="state"))
    window.menu_actions.menus.add_node_entry(MenuEntry("Stop", chosen.append, enabled=lambda _id: False))
    when_menu_opens(choose("Take down"))
    right_click(window.view, link_middle(window, link_id))
    seen = when_menu_opens(dismiss)
    right_click(window.view, QPointF(0, 0))
    assert chosen == [link_id]
    assert "Stop" in seen[0] and "Rename" in "".join(seen[0]).replace("&", "")


def test_right_click_on_empty_canvas_still_opens_the_canvas_menu(make_window: Callable[..., MainWindow]) -> None:
    window = make_window(None)
    two_hosts_and_a_link(window)
    seen = when_menu_opens(dismiss)
    right_click(window.view, QPointF(150, 200))
    assert seen and "Add note here" in seen[0]


def test_tooltips_of_nodes_and_links(make_window: Callable[..., MainWindow]) -> None:
    window = make_window()  # l2-vs-l3
    topology = window.editor.topology
    link = next(link for link in topology.links.values() if link.a.interface.addresses)
    text = tooltip_at(window, link_middle(window, link.id))
    assert link.a.interface.addresses[0] in text and link.b.port in text
    assert "impairment" in text
    node = topology.nodes[link.a.node]
    text = tooltip_at(window, window.editor.scene.nodes[node.id].pos())
    assert node.name in text and "not deployed" in text
    assert link.a.interface.addresses[0] in text


def test_f2_and_double_click_rename_in_place(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window(None)
    focus_canvas(qtbot, window)
    a, _b, _link = two_hosts_and_a_link(window)
    window.editor.scene.select_ids([a])
    qtbot.keyClick(window.view, Qt.Key.Key_F2)
    field = window.view.viewport().findChild(InlineRename)
    assert field is not None and field.hasFocus()
    qtbot.keyClicks(field, "web")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert window.editor.topology.nodes[a].name == "web"
    double_click(window.view, QPointF(0, 0))
    field = next(f for f in window.view.viewport().findChildren(InlineRename) if f.isVisible())
    qtbot.keyClicks(field, "other")
    qtbot.keyClick(field, Qt.Key.Key_Escape)
    assert window.editor.topology.nodes[a].name == "web"
    qtbot.keyClick(window.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.editor.topology.nodes[a].name == "c1"


def test_a_refused_name_says_why(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window(None)
    focus_canvas(qtbot, window)
    a, _b, _link = two_hosts_and_a_link(window)
    field = window.view.start_rename(a)
    field.setText("c2")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert window.editor.topology.nodes[a].name == "c1"
    assert "already named c2" in window.statusBar().currentMessage()


def test_double_click_on_a_deployed_node_opens_its_terminal(make_window: Callable[..., MainWindow], qtbot: Any,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # the fake deployer creates nothing: the tab runs `vtopo exec`, which reports that the lab is not deployed
    monkeypatch.setattr(terminal, "unavailable_reason", lambda kind, running: "" if running else "deploy first")
    window = make_window("bridge-veth", deployer_loader=lambda: (FakeDeployer(), ""))
    qtbot.waitUntil(lambda: not window.deploy.busy)
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        window.menu_actions.deploy.trigger()
    double_click(window.view, window.editor.scene.nodes["c1"].pos())
    assert window.terminals.count() == 1 and window.terminals.tabText(0) == "c1"
    opened = window.terminals.terminals()[0]
    container = window.editor.registry.get("container")
    assert opened.process.argv == terminal.node_argv("bridge-veth", "c1", container)
    assert window.terminals.dock is not None and window.terminals.dock.isVisible()
    qtbot.waitUntil(lambda: not opened.process.running, timeout=20_000)
    assert not window.view.viewport().findChildren(InlineRename)
