"""Inspector, problems, explain: edit through the widgets, see the model; break the lab, see the problem."""
from __future__ import annotations

from typing import Any, Callable, TypeVar

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QCheckBox, QDoubleSpinBox, QLineEdit, QWidget
from pytestqt.qtbot import QtBot

from tests.gui.conftest import wait_analysis
from tests.gui.helpers import click
from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels.explain import SELECTION
from vtopo.model import io
from vtopo.model.topology import Interface

F = TypeVar("F", bound=QWidget)


def inspect(window: MainWindow, item_id: str, form: F) -> F:
    """Select one node or link and show it in the inspector, which must show it in `form`."""
    window.editor.scene.select_ids([item_id])
    window.inspector.refresh()
    assert window.inspector.stack.currentWidget() is form
    return form


def test_inspector_edits_node_settings_and_name(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window()
    editor, form = window.editor, inspect(window, "lan1", window.inspector.node_form)
    stp = form.fields["stp"].widget
    assert isinstance(stp, QCheckBox)
    qtbot.mouseClick(stp, Qt.MouseButton.LeftButton, pos=QPoint(8, stp.height() // 2))
    assert editor.topology.nodes["lan1"].settings == {"stp": True}
    delay = form.fields["forward_delay"].widget
    assert isinstance(delay, QDoubleSpinBox) and delay.maximum() == 30
    delay.setValue(4)
    assert editor.topology.nodes["lan1"].settings == {"stp": True, "forward_delay": 4.0}
    hosts = form.fields["host_addresses"].widget
    hosts.setFocus()
    hosts.setPlainText("10.1.0.254/24\n\n 10.9.0.1/24 ")
    form.fields["host_addresses"].widget.editing_finished.emit()
    assert editor.topology.nodes["lan1"].settings["host_addresses"] == ["10.1.0.254/24", "10.9.0.1/24"]
    # rename: invalid and duplicate names turn the field red and change nothing
    name = form.name
    name.setFocus()
    name.selectAll()
    qtbot.keyClicks(name, "lan2")
    assert name.property("invalid") is True
    name.selectAll()
    qtbot.keyClicks(name, "core")
    qtbot.keyClick(name, Qt.Key.Key_Return)
    assert editor.topology.nodes["lan1"].name == "core"
    assert editor.scene.nodes["lan1"].name == "core"
    for _ in range(4):
        editor.undo_stack.undo()
    assert editor.topology.nodes["lan1"].name == "lan1"
    assert editor.topology.nodes["lan1"].settings == {}
    window.inspector.refresh()
    assert not stp.isChecked()


def test_dict_settings_are_key_value_lines(make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    editor, form = window.editor, inspect(window, "h1", window.inspector.node_form)
    sysctls = form.fields["sysctls"]
    sysctls.widget.setPlainText("net.ipv4.ip_forward = 1\nnet.ipv6.conf.all.disable_ipv6=1")
    sysctls.widget.editing_finished.emit()
    assert editor.topology.nodes["h1"].settings["sysctls"] == {"net.ipv4.ip_forward": "1",
                                                                "net.ipv6.conf.all.disable_ipv6": "1"}
    sysctls.widget.setPlainText("not a pair")
    sysctls.widget.editing_finished.emit()
    assert sysctls.widget.property("invalid") is True
    assert len(editor.topology.nodes["h1"].settings["sysctls"]) == 2


def test_link_inspector_validates_addresses_as_you_type(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window()
    editor, form = window.editor, inspect(window, "h1-eth0--lan1-p1", window.inspector.link_form)
    addresses = form.first.addresses
    assert addresses.toPlainText() == "10.1.0.10/24"
    addresses.setPlainText("10.1.0.300/24")
    assert addresses.property("invalid") is True
    addresses.editing_finished.emit()
    assert editor.topology.links["h1-eth0--lan1-p1"].a.interface.addresses == ["10.1.0.10/24"]
    addresses.setPlainText("10.1.0.20/24\nfd00::20/64")
    assert addresses.property("invalid") is False
    addresses.editing_finished.emit()
    assert editor.topology.links["h1-eth0--lan1-p1"].a.interface.addresses == ["10.1.0.20/24", "fd00::20/64"]
    assert "10.1.0.20/24" in editor.scene.links["h1-eth0--lan1-p1"]._texts[0]
    form.delay.setValue(25)
    form.loss.setValue(1.5)
    impairment = editor.topology.links["h1-eth0--lan1-p1"].impairment
    assert (impairment.delay_ms, impairment.loss_pct) == (25, 1.5)
    mac: QLineEdit = form.second.mac
    mac.setFocus()
    qtbot.keyClicks(mac, "02:00:00:00:00:zz")
    assert mac.property("invalid") is True
    editor.undo_stack.undo()
    editor.undo_stack.undo()
    editor.undo_stack.undo()
    assert editor.topology.links["h1-eth0--lan1-p1"].a.interface == Interface(addresses=["10.1.0.10/24"])
    assert not editor.topology.links["h1-eth0--lan1-p1"].impairment.active


def test_an_interface_is_set_to_dhcp_by_a_click_and_undone(make_window: Callable[..., MainWindow], qtbot: QtBot
                                                           ) -> None:
    window = make_window()
    editor, form = window.editor, inspect(window, "h1-eth0--lan1-p1", window.inspector.link_form)
    form.first.addresses.setPlainText("")
    form.first.addresses.editing_finished.emit()
    qtbot.mouseClick(form.first.dhcp, Qt.MouseButton.LeftButton, pos=form.first.dhcp.rect().center())
    assert editor.topology.links["h1-eth0--lan1-p1"].a.interface == Interface(dhcp=True)
    editor.undo_stack.undo()
    assert not editor.topology.links["h1-eth0--lan1-p1"].a.interface.dhcp
    window.inspector.refresh()
    assert not form.first.dhcp.isChecked()


def test_annotations_are_edited_and_undone(make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    editor = window.editor
    window.menu_actions.add_rect.trigger()
    (new_id,) = set(editor.topology.annotations) - {"note-1", "note-2"}
    assert editor.topology.annotations[new_id].shape == "rect"
    window.inspector.refresh()
    text = window.inspector.annotation_form.text
    text.setPlainText("Area 1")
    text.editing_finished.emit()
    assert editor.topology.annotations[new_id].text == "Area 1"
    editor.resize_annotation(new_id, 300, 200)
    assert editor.scene.annotations[new_id].size.width() == 300
    editor.undo_stack.undo()
    editor.undo_stack.undo()
    editor.undo_stack.undo()
    assert new_id not in editor.topology.annotations and new_id not in editor.scene.annotations


def test_undo_and_redo_everything(make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    editor = window.editor
    start = io.dumps(editor.topology)
    c = editor.place_node("container", QPointF(500, 500))
    assert c is not None
    editor.connect_nodes(c.id, "lan2")
    editor.rename_node(c.id, "web")
    editor.set_node_settings("r1", {"hello_interval": 2, "dead_interval": 8})
    editor.scene.select_ids(["h3"])
    editor.delete_selection()
    editor.scene.select_ids(["h1", "lan1"])
    editor.duplicate_selection()
    editor.add_annotation("note", QPointF(0, 0), "hello")
    end = io.dumps(editor.topology)
    steps = editor.undo_stack.count()
    while editor.undo_stack.canUndo():
        window.menu_actions.undo.trigger()
    assert io.dumps(editor.topology) == start
    assert set(editor.scene.nodes) == set(editor.topology.nodes)
    assert set(editor.scene.links) == set(editor.topology.links)
    for _ in range(steps):
        window.menu_actions.redo.trigger()
    assert io.dumps(editor.topology) == end
    assert set(editor.scene.links) == set(editor.topology.links)
    assert editor.scene.nodes[c.id].name == "web"


def test_problems_are_listed_marked_and_select_their_subject(make_window: Callable[..., MainWindow],
                                                             qtbot: QtBot) -> None:
    window = make_window()
    problems = window.problems
    assert problems.model.rowCount() == 0
    window.editor.set_node_settings("r1", {"hello_interval": 5, "dead_interval": 4, "passive": ["eth0"]})
    qtbot.waitUntil(lambda: problems.model.rowCount() > 0, timeout=3000)
    where, message = (problems.model.index(0, column).data() for column in (0, 1))
    assert where == "node r1" and "dead interval" in message
    assert window.editor.scene.nodes["r1"].severity == "error"
    assert window.editor.scene.nodes["r2"].severity == ""
    row = problems.table.visualRect(problems.model.index(0, 1)).center()
    qtbot.mouseClick(problems.table.viewport(), Qt.MouseButton.LeftButton, pos=row)
    assert window.editor.scene.selected_node_ids() == ["r1"]
    assert "dead interval" in problems.current.text()  # the clicked problem, whole
    window.explain_dock.raise_()
    assert "does not compile" in window.explain.text.toPlainText()
    window.editor.undo_stack.undo()
    wait_analysis(qtbot, window)
    assert problems.model.rowCount() == 0 and problems.current.text() == ""
    assert window.editor.scene.nodes["r1"].severity == ""


def test_a_node_deleted_with_its_error_is_marked_again_when_the_delete_is_undone(
        make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window()
    editor, view = window.editor, window.view
    editor.set_node_settings("r1", {"hello_interval": 5, "dead_interval": 4})
    wait_analysis(qtbot, window)
    assert editor.scene.nodes["r1"].severity == "error"
    click(view, editor.scene.nodes["r1"].pos())
    qtbot.keyClick(view, Qt.Key.Key_Delete)
    assert "r1" not in editor.scene.nodes
    qtbot.keyClick(view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # back before the lab is checked again
    wait_analysis(qtbot, window)
    assert editor.scene.nodes["r1"].severity == "error", "the node came back unmarked"
    assert {item.severity for node_id, item in editor.scene.nodes.items() if node_id != "r1"} == {""}


def test_explain_shows_the_plan_for_the_lab_or_the_selection(make_window: Callable[..., MainWindow],
                                                               qtbot: Any) -> None:
    window = make_window()
    text = window.explain.text
    window.explain_dock.raise_()
    assert text.toPlainText().startswith("#!/bin/sh")
    assert "# ---- node h1" in text.toPlainText()
    window.explain.scope.setCurrentIndex(SELECTION)
    assert "Select one or more nodes" in text.toPlainText()
    window.editor.scene.select_ids(["r1"])  # the checker, which holds the plan, writes the selection's script
    qtbot.waitUntil(lambda: "Select one or more nodes" not in text.toPlainText(), timeout=5000)
    script = text.toPlainText()
    assert "# ---- node r1" in script and "# ---- link r1:eth1-r2:eth1" in script
    assert "# ---- node h1" not in script


def test_editing_a_trunked_port_in_the_link_inspector_keeps_its_subinterfaces(
        make_window: Callable[..., MainWindow]) -> None:
    window = make_window("router-on-a-stick")
    [trunk] = [link for link in window.editor.topology.links.values() if link.b.port == "p4"]
    kept = trunk.a.interface.subinterfaces
    form = inspect(window, trunk.id, window.inspector.link_form)
    form.first.mtu.setValue(1400)
    assert window.editor.topology.links[trunk.id].a.interface.mtu == 1400
    assert window.editor.topology.links[trunk.id].a.interface.subinterfaces == kept != []
