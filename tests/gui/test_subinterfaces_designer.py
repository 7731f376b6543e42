"""802.1Q subinterfaces in the designer: added, changed and removed at a link's end and in a node's interface table
with the keyboard, refused where a VLAN is out of range, shown on the canvas, each edit one undo step; router-on-a-stick
drawn from nothing; an L3 switch's SVIs set in the inspector."""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QPointF, Qt

from tests.gui.helpers import cell_text, click, drag, drop_kind, edit_cell, focus_canvas, inspected_setting
from tests.gui.test_vlans_designer import cell, click_cell, editing, retype, type_keys, vlans_table
from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels.interface_table import SUBINTERFACES
from vtopo.gui.panels.link_form import EndEditor
from vtopo.gui.panels.port_vlans_table import MODE, VLANS
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model import io
from vtopo.model.problems import Severity
from vtopo.model.topology import Endpoint, Subinterface
from vtopo.resources import TOPOLOGIES

Key, Ctrl = Qt.Key, Qt.KeyboardModifier.ControlModifier
STICK = [Subinterface(10, ["10.0.10.1/24", "2001:db8:10::1/64"]), Subinterface(20, ["10.0.20.1/24", "2001:db8:20::1/64"])]


def end_of(window: MainWindow, node: str) -> Endpoint:
    topology = window.editor.topology
    node_id = topology.node_named(node).id  # type: ignore[union-attr]
    return next(end for link in topology.links_of(node_id) for end in link.ends if end.node == node_id)


def type_lines(qtbot: Any, field: EndEditor, lines: list[str]) -> None:
    """Click into an end's subinterfaces box, replace what it holds by the lines, commit with Ctrl+Enter."""
    box = field.subinterfaces
    qtbot.mouseClick(box.viewport(), Qt.MouseButton.LeftButton)
    qtbot.keyClick(box, Key.Key_A, Ctrl)
    qtbot.keyClick(box, Key.Key_Delete)
    for index, line in enumerate(lines):
        if index:
            qtbot.keyClick(box, Key.Key_Return)
        qtbot.keyClicks(box, line)
    qtbot.keyClick(box, Key.Key_Return, Ctrl)


def test_router_on_a_stick_is_drawn_from_nothing_with_the_mouse_and_the_keyboard(
        make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window(None)
    editor, view = window.editor, window.view
    for kind, at in (("router", (300, 40)), ("ovs", (300, 200)), ("container", (120, 360)),
                     ("container", (480, 360))):
        drop_kind(window, kind, QPointF(*at))
    qtbot.waitUntil(lambda: len(editor.topology.nodes) == 4)
    names = {node.kind + str(node.position.x): node.name for node in editor.topology.nodes.values()}
    r1, s1, h1, h2 = (names[key] for key in ("router300.0", "ovs300.0", "container120.0", "container480.0"))
    focus_canvas(qtbot, window)
    qtbot.keyClick(view, Key.Key_L)
    for start in ((120, 360), (480, 360), (300, 40)):  # h1 -> s1 p1, h2 -> s1 p2, r1 -> s1 p3
        drag(view, QPointF(*start), QPointF(300, 200))
    qtbot.keyClick(view, Key.Key_Escape)
    assert len(editor.topology.links) == 3

    s1_id = editor.topology.node_named(s1).id  # type: ignore[union-attr]
    table = vlans_table(qtbot, window, s1_id)
    assert table.model.ports == ["p1", "p2", "p3"]
    modes = {"a": "access", "t": "trunk"}

    def switch_vlans() -> dict[str, str]:
        return dict(editor.topology.nodes[s1_id].settings.get("vlans", {}))

    for port, mode, vlans in (("p1", "a", "10"), ("p2", "a", "20"), ("p3", "t", "10,20")):
        click_cell(qtbot, table, port, MODE)
        type_keys(qtbot, mode, finish=None)  # access or trunk typed over "not set": the VLANs are edited next
        qtbot.waitUntil(lambda port=port: editing(table) and table.view.currentIndex() == cell(table, port, VLANS))
        type_keys(qtbot, vlans)
        qtbot.waitUntil(lambda port=port, mode=mode, vlans=vlans: switch_vlans().get(port) == f"{modes[mode]} {vlans}")
    switch = editor.topology.node_named(s1)
    assert switch is not None
    qtbot.waitUntil(lambda: switch.settings["vlans"] == {"p1": "access 10", "p2": "access 20", "p3": "trunk 10,20"})

    link_form = window.inspector.link_form
    for host, address in ((h1, "10.0.10.11/24"), (h2, "10.0.20.12/24")):
        link = next(iter(editor.topology.links_of(editor.topology.node_named(host).id)))  # type: ignore[union-attr]
        focus_canvas(qtbot, window)  # as a click on the canvas gives it the focus
        click(view, editor.scene.links[link.id].line.center())
        qtbot.waitUntil(lambda link_id=link.id: link_form.link_id == link_id and link_form.isVisible())
        box = link_form.first.addresses
        qtbot.mouseClick(box.viewport(), Qt.MouseButton.LeftButton)
        qtbot.keyClicks(box, address)
        qtbot.keyClick(box, Key.Key_Return, Ctrl)
        qtbot.waitUntil(lambda host=host, address=address: end_of(window, host).interface.addresses == [address])

    trunk = next(iter(editor.topology.links_of(editor.topology.node_named(r1).id)))  # type: ignore[union-attr]
    focus_canvas(qtbot, window)
    click(view, editor.scene.links[trunk.id].line.center())
    qtbot.waitUntil(lambda: link_form.link_id == trunk.id and link_form.isVisible())
    router_end = link_form.first
    assert router_end.title() == f"{r1} : eth0" and router_end.subinterfaces.isVisible()
    type_lines(qtbot, router_end, ["vlan 10 = 10.0.10.1/24, 2001:db8:10::1/64", "vlan 5000 = 10.0.20.1/24"])
    assert router_end.subinterfaces.property("invalid") and "outside 1-4094" in router_end.subinterfaces.toolTip()
    assert end_of(window, r1).interface.subinterfaces == []  # refused where it is typed: the lab unchanged
    type_lines(qtbot, router_end, ["vlan 10 = 10.0.10.1/24, 2001:db8:10::1/64",
                                   "vlan 20 = 10.0.20.1/24, 2001:db8:20::1/64"])
    qtbot.waitUntil(lambda: end_of(window, r1).interface.subinterfaces == STICK)
    assert not router_end.subinterfaces.property("invalid")
    label = editor.scene.links[trunk.id].end_texts
    assert "eth0.10 10.0.10.1/24 2001:db8:10::1/64" in label[0] + label[1]
    assert "eth0.20 10.0.20.1/24 2001:db8:20::1/64" in label[0] + label[1]

    errors = [p for p in resolve(editor.topology, registry()).problems if p.severity == Severity.ERROR]
    assert errors == []
    reference = io.load(TOPOLOGIES / "router-on-a-stick.vtopo")
    assert reference.links["link-trunk"].a.interface.subinterfaces == STICK
    assert {port: text for port, text in reference.nodes["s1"].settings["vlans"].items() if port in ("p1", "p2")} \
        == {port: text for port, text in editor.topology.node_named(s1).settings["vlans"].items()  # type: ignore
            if port in ("p1", "p2")}
    assert reference.nodes["s1"].settings["vlans"]["p4"] == "trunk 10,20"  # the router's port, p3 here

    assert editor.undo_stack.undoText().startswith("Edit link")
    focus_canvas(qtbot, window)
    qtbot.keyClick(view, Key.Key_Z, Ctrl)  # the subinterfaces, both, in one step
    qtbot.waitUntil(lambda: end_of(window, r1).interface.subinterfaces == [])
    assert "eth0.10" not in "".join(editor.scene.links[trunk.id].end_texts)
    assert end_of(window, h2).interface.addresses == ["10.0.20.12/24"]
    qtbot.keyClick(view, Key.Key_Y, Ctrl)
    qtbot.waitUntil(lambda: end_of(window, r1).interface.subinterfaces == STICK)


def test_the_interface_table_adds_changes_and_removes_subinterfaces_with_undo(
        make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window("router-on-a-stick")
    click(window.view, window.editor.scene.nodes["r1"].pos())
    table = window.inspector.node_form.interfaces
    qtbot.waitUntil(lambda: table.isVisible() and table.rows.rowCount() == 1)
    assert cell_text(table, 0, SUBINTERFACES) == ("vlan 10 = 10.0.10.1/24, 2001:db8:10::1/64; "
                                                   "vlan 20 = 10.0.20.1/24, 2001:db8:20::1/64")

    edit_cell(qtbot, table, 0, SUBINTERFACES, "vlan 10 = 10.0.10.1/24; vlan 30 = 10.0.30.1/24")  # 20 removed, 30 added
    qtbot.waitUntil(lambda: end_of(window, "r1").interface.subinterfaces
                    == [Subinterface(10, ["10.0.10.1/24"]), Subinterface(30, ["10.0.30.1/24"])])
    qtbot.waitUntil(lambda: cell_text(table, 0, SUBINTERFACES) == "vlan 10 = 10.0.10.1/24; vlan 30 = 10.0.30.1/24")
    assert "eth0.30 10.0.30.1/24" in "".join(window.editor.scene.links["link-trunk"].end_texts)

    edit_cell(qtbot, table, 0, SUBINTERFACES, "vlan 4095 = 10.0.30.1/24")  # refused, and said so
    refused = table.rows.index(0, SUBINTERFACES)
    qtbot.waitUntil(lambda: "eth0: " in str(refused.data(Qt.ItemDataRole.ToolTipRole))
                    and "outside 1-4094" in str(refused.data(Qt.ItemDataRole.ToolTipRole)))
    assert cell_text(table, 0, SUBINTERFACES) == "vlan 10 = 10.0.10.1/24; vlan 30 = 10.0.30.1/24"
    assert [sub.vlan for sub in end_of(window, "r1").interface.subinterfaces] == [10, 30]

    focus_canvas(qtbot, window)
    qtbot.keyClick(window.view, Key.Key_Z, Ctrl)
    qtbot.waitUntil(lambda: end_of(window, "r1").interface.subinterfaces == STICK)


def test_an_l3_switchs_svis_are_set_in_the_inspector_with_undo(make_window: Callable[..., MainWindow],
                                                               qtbot: Any) -> None:
    window = make_window("l3-switch")
    switch = next(node for node in window.editor.topology.nodes.values() if node.settings.get("svis"))
    before = dict(switch.settings["svis"])
    click(window.view, window.editor.scene.nodes[switch.id].pos())
    box = inspected_setting(qtbot, window, switch.id, "svis").widget
    assert "vlan 10 = " in box.toPlainText()
    qtbot.mouseClick(box.viewport(), Qt.MouseButton.LeftButton)
    qtbot.keyClick(box, Key.Key_End, Ctrl)
    qtbot.keyClick(box, Key.Key_Return)
    qtbot.keyClicks(box, "vlan 30 = 10.0.30.1/24")
    qtbot.keyClick(box, Key.Key_Return, Ctrl)
    qtbot.waitUntil(lambda: window.editor.topology.nodes[switch.id].settings["svis"]
                    == {**before, "vlan 30": "10.0.30.1/24"})
    focus_canvas(qtbot, window)
    qtbot.keyClick(window.view, Key.Key_Z, Ctrl)
    qtbot.waitUntil(lambda: window.editor.topology.nodes[switch.id].settings["svis"] == before)
