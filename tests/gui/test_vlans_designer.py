"""A switch's VLANs in the designer: set port by port in the inspector's table and at a link's end with the mouse and
the keyboard, shown on the links (access v10, trunk 10,20), each edit one undo step that Ctrl+Z takes back."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QModelIndex, QRectF, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QAbstractItemView, QApplication, QComboBox, QLineEdit, QWidget

from tests.gui.helpers import click, edit_cell, focus_canvas, inspected_setting
from vlan_labs import vlan_lab
from vtopo.gui.main_window import MainWindow
from vtopo.gui.overlays.broadcast_domains import domain_color
from vtopo.gui.panels.port_vlans_table import MODE, NATIVE, VLANS, PortVlansEditor, PortVlansTable
from vtopo.model import io
from vtopo.model.topology import Endpoint, Link, Node, Position, Topology

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


def vlans_table(qtbot: Any, window: MainWindow, node_id: str) -> PortVlansTable:
    """The inspector's VLANs table of the switch, clicked on the canvas, once laid out."""
    click(window.view, window.editor.scene.nodes[node_id].pos())
    editor = inspected_setting(qtbot, window, node_id, "vlans")
    assert isinstance(editor, PortVlansEditor)
    return editor.widget


def cell(table: PortVlansTable, port: str, column: int) -> QModelIndex:
    return table.model.index(table.model.ports.index(port), column)


def shown_rows(table: PortVlansTable) -> list[tuple[str, ...]]:
    """Each port's row: its header, then its cells."""
    model = table.model
    return [(str(model.headerData(row, Qt.Orientation.Vertical)),
             *(str(model.index(row, column).data()) for column in range(model.columnCount())))
            for row in range(model.rowCount())]


def click_cell(qtbot: Any, table: PortVlansTable, port: str, column: int) -> None:
    """A click on the port's cell, which makes it the current one (a second click would edit it)."""
    index = cell(table, port, column)
    table.view.scrollTo(index)
    qtbot.mouseClick(table.view.viewport(), Qt.MouseButton.LeftButton, pos=table.view.visualRect(index).center())
    qtbot.waitUntil(lambda: table.view.currentIndex() == index and table.view.hasFocus())


def type_keys(qtbot: Any, text: str, finish: Key | None = Key.Key_Return) -> None:
    """Keys as a keyboard sends them, to whichever widget has the focus: the table's current cell takes the first
    and opens its editor, which takes the rest."""
    for key in text:
        qtbot.keyClicks(QApplication.focusWidget(), key)
    if finish is not None:
        qtbot.keyClick(QApplication.focusWidget(), finish)


def editing(table: PortVlansTable) -> bool:
    return table.view.state() == QAbstractItemView.State.EditingState


def test_links_show_their_vlans_and_the_inspector_sets_each_port_with_undo(
        make_window: Callable[..., MainWindow], qtbot: Any, tmp_path: Path) -> None:
    window = vlan_window(make_window, tmp_path)
    shown = {"link-h1": "v10", "link-h2": "v10", "link-h3": "v20", "link-h4": "v10", "link-h5": "v20",
             "link-trunk": "10,20"}
    assert middles(window) == shown
    view = window.view
    table = vlans_table(qtbot, window, "s1")
    assert shown_rows(table) == [("p1", "access", "10", ""), ("p2", "access", "10", ""), ("p3", "access", "20", ""),
                                 ("p4", "trunk", "10,20", "none")]
    assert not cell(table, "p1", NATIVE).flags() & Qt.ItemFlag.ItemIsEnabled  # an access port has no native VLAN

    click_cell(qtbot, table, "p3", VLANS)
    type_keys(qtbot, "10")  # typed over the cell: h3 joins VLAN 10
    qtbot.waitUntil(lambda: s1_vlans(window)["p3"] == "access 10")
    assert middles(window)["link-h3"] == "v10"

    click_cell(qtbot, table, "p2", MODE)
    qtbot.keyClick(table.view, Key.Key_F2)  # the mode's list, then the next entry: access -> trunk, VLAN 10 tagged
    qtbot.waitUntil(lambda: isinstance(QApplication.focusWidget(), QComboBox))
    qtbot.keyClick(QApplication.focusWidget(), Key.Key_Down)
    qtbot.waitUntil(lambda: s1_vlans(window)["p2"] == "trunk 10")
    assert middles(window)["link-h2"] == "10"

    click_cell(qtbot, table, "p4", NATIVE)
    type_keys(qtbot, "1")  # the trunk's untagged frames in VLAN 1, at s1's end only
    qtbot.waitUntil(lambda: s1_vlans(window)["p4"] == "trunk 10,20 native 1")
    assert middles(window)["link-trunk"] == "10,20 native 1 | 10,20"

    edit_cell(qtbot, table.view, 0, VLANS, "5000")  # p1, double-clicked: refused where it is typed, the lab unchanged
    p1 = cell(table, "p1", VLANS)
    qtbot.waitUntil(lambda: not editing(table))
    assert p1.data(Qt.ItemDataRole.BackgroundRole) is not None
    assert p1.data(Qt.ItemDataRole.ToolTipRole) == "p1: VLAN 5000 is outside 1-4094 (0 means no VLAN, 4095 is reserved)"
    assert s1_vlans(window)["p1"] == "access 10"
    edit_cell(qtbot, table.view, 0, VLANS, "10")
    qtbot.waitUntil(lambda: p1.data(Qt.ItemDataRole.BackgroundRole) is None)

    assert window.editor.undo_stack.undoText() == "Edit s1"
    focus_canvas(qtbot, window)
    for undone in ("link-trunk", "link-h2", "link-h3"):
        qtbot.keyClick(view, Key.Key_Z, Ctrl)
        qtbot.waitUntil(lambda undone=undone: middles(window)[undone] == shown[undone])
    assert middles(window) == shown
    assert s1_vlans(window) == vlan_lab("ovs").nodes["s1"].settings["vlans"]
    qtbot.waitUntil(lambda: shown_rows(table)[1:3] == [("p2", "access", "10", ""), ("p3", "access", "20", "")])
    qtbot.keyClick(view, Key.Key_Y, Ctrl)
    qtbot.waitUntil(lambda: middles(window)["link-h3"] == "v10")


def test_the_keyboard_moves_through_the_vlans_table_and_edits_it(make_window: Callable[..., MainWindow], qtbot: Any,
                                                                  tmp_path: Path) -> None:
    """Arrows move the current cell, typing edits it, Tab takes what was typed and edits the next cell; a mode chosen
    for a port without VLANs edits its VLANs next (the choice kept, shown again, until they are typed), and what is
    typed there is red while it cannot be taken."""
    window = vlan_window(make_window, tmp_path)
    table = vlans_table(qtbot, window, "s1")
    click_cell(qtbot, table, "p1", MODE)
    qtbot.keyClick(table.view, Key.Key_Down)
    qtbot.keyClick(table.view, Key.Key_Right)
    assert table.view.currentIndex() == cell(table, "p2", VLANS) and not editing(table)

    type_keys(qtbot, "20", finish=Key.Key_Tab)  # p2 into VLAN 20, then the next cell it can edit: past its native
    # VLAN (an access port has none), p3's mode
    qtbot.waitUntil(lambda: s1_vlans(window)["p2"] == "access 20")
    qtbot.waitUntil(lambda: editing(table) and table.view.currentIndex() == cell(table, "p3", MODE))
    qtbot.keyClick(QApplication.focusWidget(), Key.Key_Escape)

    click_cell(qtbot, table, "p3", MODE)
    type_keys(qtbot, "n", finish=None)  # not set: the port leaves the setting
    qtbot.waitUntil(lambda: "p3" not in s1_vlans(window))
    qtbot.waitUntil(lambda: shown_rows(table)[2] == ("p3", "not set: VLAN 1 untagged", "", ""))
    assert table.view.currentIndex() == cell(table, "p3", MODE)  # typed over again, p3 still the current cell
    type_keys(qtbot, "a", finish=None)  # access, with no VLAN yet: its VLANs cell is edited next
    qtbot.waitUntil(lambda: editing(table) and table.view.currentIndex() == cell(table, "p3", VLANS))
    window.inspector.refresh()  # as when a deployed node's state changes: the choice is kept while p3 is unchanged
    assert "p3" not in s1_vlans(window) and shown_rows(table)[2][1] == "access"
    field = QApplication.focusWidget()
    assert isinstance(field, QLineEdit) and field.placeholderText() == "VLAN, e.g. 10"
    type_keys(qtbot, "10,20", finish=None)
    assert field.property("invalid") and "one VLAN" in field.toolTip()
    field.selectAll()
    type_keys(qtbot, "30")
    qtbot.waitUntil(lambda: s1_vlans(window).get("p3") == "access 30")
    assert middles(window)["link-h3"] == "v30"


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
    table = vlans_table(qtbot, window, "s1")
    edit_cell(qtbot, table.view, table.model.ports.index("p3"), VLANS, "10")
    qtbot.waitUntil(lambda: {d.vlans: len(d.members) for d in window.analyzer.latest.domains()} == {(10,): 4, (20,): 1})
    assert links["link-h3"].tints == links["link-h1"].tints
    assert len(links["link-trunk"].tints) == 2


def test_a_switchs_table_is_built_once_and_shows_the_switch_chosen_after_another_kind(
        make_window: Callable[..., MainWindow], qtbot: Any, tmp_path: Path) -> None:
    """A kind's form is kept while another kind's shows: s1's table comes back as it was built, showing s2's ports
    when s2 is chosen."""
    window = vlan_window(make_window, tmp_path)
    table = vlans_table(qtbot, window, "s1")
    click(window.view, window.editor.scene.nodes["h1"].pos())
    form = window.inspector.node_form
    qtbot.waitUntil(lambda: form.node_id == "h1" and "vlans" not in form.fields)
    assert vlans_table(qtbot, window, "s1") is table and shown_rows(table)[0] == ("p1", "access", "10", "")
    ports = sorted({*(end.port for link in window.editor.topology.links_of("s2") for end in link.ends
                      if end.node == "s2"), *window.editor.topology.nodes["s2"].settings.get("vlans", {})})
    assert vlans_table(qtbot, window, "s2") is table
    assert table.model.ports == ports and table.view.isVisible()


def test_a_bridge_of_many_ports_shows_a_dozen_rows_and_the_keyboard_reaches_the_last(
        make_window: Callable[..., MainWindow], qtbot: Any, tmp_path: Path) -> None:
    """The VLANs and interfaces of a bridge of 200 ports are tables as tall as a dozen rows; Ctrl+End takes the last
    port, which typing sets."""
    topology = Topology(name="many", id="lab-many")
    topology.add_node(Node("br", "br", "bridge", {}, Position(0, 0)))
    for index in range(1, 201):
        topology.add_node(Node(f"h{index}", f"h{index}", "container", {}, Position(10 * index, 200)))
        topology.add_link(Link(f"l{index}", Endpoint(f"h{index}", "eth0"), Endpoint("br", f"p{index}")))
    io.save(topology, tmp_path / "many.vtopo")
    window = make_window(tmp_path / "many.vtopo")
    table = vlans_table(qtbot, window, "br")
    interfaces = window.inspector.node_form.interfaces
    assert table.model.rowCount() == interfaces.rows.rowCount() == 200
    assert table.view.height() < 16 * table.view.rowHeight(0) and interfaces.height() < 16 * interfaces.rowHeight(0)

    click_cell(qtbot, table, "p1", MODE)
    qtbot.keyClick(table.view, Key.Key_End, Ctrl)
    last = cell(table, "p200", MODE)
    assert table.view.currentIndex() == last
    qtbot.waitUntil(lambda: table.view.viewport().rect().intersects(table.view.visualRect(last)))  # in sight
    type_keys(qtbot, "a", finish=None)  # access: its VLAN next
    qtbot.waitUntil(lambda: editing(table) and table.view.currentIndex() == cell(table, "p200", VLANS))
    type_keys(qtbot, "30")
    qtbot.waitUntil(lambda: window.editor.topology.nodes["br"].settings.get("vlans") == {"p200": "access 30"})
    assert shown_rows(table)[0] == ("p1", "not set: VLAN 1 untagged", "", "")
