"""A switch's VLANs in the designer: set port by port in the inspector and at a link's end with the mouse and the
keyboard, shown on the links (access v10, trunk 10,20), each edit one undo step that Ctrl+Z takes back."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QWidget

from tests.gui.helpers import click, focus_canvas, inspected_setting
from vlan_labs import vlan_lab
from vtopo.gui.main_window import MainWindow
from vtopo.gui.overlays.broadcast_domains import domain_color
from vtopo.gui.panels.port_vlans import PortVlansEditor
from vtopo.model import io

Key, Ctrl = Qt.Key, Qt.KeyboardModifier.ControlModifier


def vlan_window(make_window: Callable[..., MainWindow], tmp_path: Path) -> MainWindow:
    path = tmp_path / "vlans.vtopo"
    io.save(vlan_lab("ovs"), path)
    return make_window(path)


def middles(window: MainWindow) -> dict[str, str]:
    return {link_id: item.middle_text for link_id, item in window.editor.scene.links.items()}


def s1_vlans(window: MainWindow) -> dict[str, str]:
    return dict(window.editor.topology.nodes["s1"].settings.get("vlans", {}))


def retype(qtbot: Any, field: QWidget, text: str) -> None:
    """Click into a field, replace what it holds by `text`, press Enter."""
    qtbot.mouseClick(field, Qt.MouseButton.LeftButton)
    qtbot.keyClick(field, Key.Key_A, Ctrl)
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Key.Key_Return)


def test_links_show_their_vlans_and_the_inspector_sets_each_port_with_undo(
        make_window: Callable[..., MainWindow], qtbot: Any, tmp_path: Path) -> None:
    window = vlan_window(make_window, tmp_path)
    shown = {"link-h1": "v10", "link-h2": "v10", "link-h3": "v20", "link-h4": "v10", "link-h5": "v20",
             "link-trunk": "10,20"}
    assert middles(window) == shown
    scene, view = window.editor.scene, window.view
    click(view, scene.nodes["s1"].pos())
    editor = inspected_setting(qtbot, window, "s1", "vlans")
    assert isinstance(editor, PortVlansEditor)
    rows = editor.widget.rows
    assert list(rows) == ["p1", "p2", "p3", "p4"]
    assert [(row.mode.currentText(), row.vlans.text(), row.native.isEnabled()) for row in rows.values()] == [
        ("access", "10", False), ("access", "10", False), ("access", "20", False), ("trunk", "10,20", True)]

    retype(qtbot, rows["p3"].vlans, "10")  # h3 joins VLAN 10
    qtbot.waitUntil(lambda: s1_vlans(window)["p3"] == "access 10")
    assert middles(window)["link-h3"] == "v10"

    rows["p2"].mode.setFocus()
    qtbot.keyClick(rows["p2"].mode, Key.Key_Down)  # access -> trunk, carrying VLAN 10 tagged
    qtbot.waitUntil(lambda: s1_vlans(window)["p2"] == "trunk 10")
    assert middles(window)["link-h2"] == "10"

    retype(qtbot, rows["p4"].native, "1")  # the trunk's untagged frames in VLAN 1, at s1's end only
    qtbot.waitUntil(lambda: s1_vlans(window)["p4"] == "trunk 10,20 native 1")
    assert middles(window)["link-trunk"] == "10,20 native 1 | 10,20"

    retype(qtbot, rows["p1"].vlans, "5000")  # refused where it is typed, the lab unchanged
    assert rows["p1"].vlans.property("invalid") and "outside 1-4094" in rows["p1"].vlans.toolTip()
    assert s1_vlans(window)["p1"] == "access 10"
    retype(qtbot, rows["p1"].vlans, "10")

    assert window.editor.undo_stack.undoText() == "Edit s1"
    focus_canvas(qtbot, window)
    for undone in ("link-trunk", "link-h2", "link-h3"):
        qtbot.keyClick(view, Key.Key_Z, Ctrl)
        qtbot.waitUntil(lambda undone=undone: middles(window)[undone] == shown[undone])
    assert middles(window) == shown
    assert s1_vlans(window) == vlan_lab("ovs").nodes["s1"].settings["vlans"]
    qtbot.waitUntil(lambda: rows["p3"].vlans.text() == "20" and rows["p2"].mode.currentText() == "access")
    qtbot.keyClick(view, Key.Key_Y, Ctrl)
    qtbot.waitUntil(lambda: middles(window)["link-h3"] == "v10")


def test_a_links_end_at_a_switch_sets_its_ports_vlans_with_undo(make_window: Callable[..., MainWindow], qtbot: Any,
                                                                 tmp_path: Path) -> None:
    window = vlan_window(make_window, tmp_path)
    scene, view = window.editor.scene, window.view
    click(view, scene.links["link-h3"].line.center())
    form = window.inspector.link_form
    qtbot.waitUntil(lambda: form.link_id == "link-h3" and form.isVisible())
    host, switch = form.first, form.second  # the node's end first, the switch's second
    assert not host.vlans.isVisible() and switch.vlans.isVisible()
    assert (switch.vlans.mode.currentText(), switch.vlans.vlans.text()) == ("access", "20")

    switch.vlans.mode.setFocus()
    qtbot.keyClick(switch.vlans.mode, Key.Key_Down)  # access -> trunk, carrying VLAN 20 tagged
    qtbot.waitUntil(lambda: s1_vlans(window)["p3"] == "trunk 20")
    retype(qtbot, switch.vlans.vlans, "10,20")
    qtbot.waitUntil(lambda: s1_vlans(window)["p3"] == "trunk 10,20")
    assert middles(window)["link-h3"] == "10,20"
    assert window.editor.undo_stack.undoText() == "Set the VLANs of s1:p3"

    focus_canvas(qtbot, window)
    qtbot.keyClick(view, Key.Key_Z, Ctrl)
    qtbot.waitUntil(lambda: s1_vlans(window)["p3"] == "trunk 20")
    qtbot.keyClick(view, Key.Key_Z, Ctrl)
    qtbot.waitUntil(lambda: middles(window)["link-h3"] == "v20")
    qtbot.waitUntil(lambda: switch.vlans.mode.currentText() == "access")


def colours_along(window: MainWindow, link_id: str) -> set[str]:
    """The colours painted along a link's line, in a picture of the scene at its scale."""
    line = window.editor.scene.links[link_id].line
    area = QRectF(line.p1(), line.p2()).normalized().adjusted(-4, -4, 4, 4)
    image = QImage(area.size().toSize(), QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    window.editor.scene.render(painter, QRectF(image.rect()), area)
    painter.end()
    points = (line.pointAt(step / 100) - area.topLeft() for step in range(20, 81))
    return {image.pixelColor(int(point.x()), int(point.y())).name() for point in points}


def test_the_broadcast_domains_view_draws_each_vlan_across_the_trunk_which_is_in_both(
        make_window: Callable[..., MainWindow], qtbot: Any, tmp_path: Path) -> None:
    window = vlan_window(make_window, tmp_path)
    focus_canvas(qtbot, window)
    qtbot.keyClick(window.view, Key.Key_B, Ctrl | Qt.KeyboardModifier.ShiftModifier)
    assert window.domains.toggle.isChecked()
    by_vlan = {domain.vlans: domain for domain in window.analyzer.latest.domains()}
    assert set(by_vlan) == {(10,), (20,)}
    ten, twenty = (domain_color(by_vlan[(vlan,)]) for vlan in (10, 20))
    links = window.editor.scene.links
    assert {link: item.tints for link, item in links.items()} == {
        "link-h1": (ten,), "link-h2": (ten,), "link-h4": (ten,), "link-h3": (twenty,), "link-h5": (twenty,),
        "link-trunk": (ten, twenty)}
    assert {ten.name(), twenty.name()} <= colours_along(window, "link-trunk")
    assert twenty.name() not in colours_along(window, "link-h1")
    legend = window.domains.legend.text()
    assert "VLAN 10" in legend and "VLAN 20" in legend and "striped" in legend
    assert "h1:eth0, h2:eth0, h4:eth0 via s1, s2" in legend

    # h3 moves to VLAN 10 in the inspector: the domain of VLAN 20 is h5's alone, the trunk still in both
    click(window.view, window.editor.scene.nodes["s1"].pos())
    form = window.inspector.node_form
    qtbot.waitUntil(lambda: form.node_id == "s1")
    rows = form.fields["vlans"].widget.rows
    retype(qtbot, rows["p3"].vlans, "10")
    qtbot.waitUntil(lambda: {d.vlans: len(d.members) for d in window.analyzer.latest.domains()} == {(10,): 4, (20,): 1})
    assert links["link-h3"].tints == links["link-h1"].tints
    assert len(links["link-trunk"].tints) == 2


def test_a_switchs_port_rows_are_built_once_and_show_the_switch_chosen_after_another_kind(
        make_window: Callable[..., MainWindow], qtbot: Any, tmp_path: Path) -> None:
    """A kind's form is kept while another kind's shows (a bridge of 1,000 ports' rows take a second to build): s1's
    rows come back as they were built, showing s2's ports when s2 is chosen."""
    window = vlan_window(make_window, tmp_path)
    scene, view = window.editor.scene, window.view
    click(view, scene.nodes["s1"].pos())
    rows = inspected_setting(qtbot, window, "s1", "vlans").widget.rows
    row_p1 = rows["p1"]
    click(view, scene.nodes["h1"].pos())
    form = window.inspector.node_form
    qtbot.waitUntil(lambda: form.node_id == "h1" and "vlans" not in form.fields)
    click(view, scene.nodes["s1"].pos())
    again = inspected_setting(qtbot, window, "s1", "vlans").widget.rows
    assert again["p1"] is row_p1 and row_p1.vlans.text() == "10"
    click(view, scene.nodes["s2"].pos())
    ports = sorted({*(end.port for link in window.editor.topology.links_of("s2") for end in link.ends
                      if end.node == "s2"), *window.editor.topology.nodes["s2"].settings.get("vlans", {})})
    shown = inspected_setting(qtbot, window, "s2", "vlans").widget.rows
    assert sorted(shown) == ports and all(row.isVisible() for row in shown.values())
