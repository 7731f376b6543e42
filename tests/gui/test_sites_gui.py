"""The designer shows each node's site in a badge, and the inspector places a node on a site (an undo step)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QDialogButtonBox, QLineEdit

from tests.gui.helpers import click, click_menu_entry, when_open
from spread_labs import LabBuilder, here
from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels.sites_editor import SitesEditorDialog
from vtopo.gui.panels.sites_placement import SitesPlacementDialog
from vtopo.model import io
from vtopo.model.sites import Site
from vtopo.model.topology import Position


def opened(make_window: Callable[..., MainWindow], lab: LabBuilder, directory: Path) -> MainWindow:
    path = directory / f"{lab.topology.name}.vtopo"
    io.save(lab.topology, path)
    return make_window(path)


def test_the_inspector_places_a_node_on_a_site_and_its_badge_says_so(make_window: Callable[..., MainWindow],
                                                                      qtbot: Any, tmp_path: Path) -> None:
    lab = LabBuilder("placed", [here(), Site("b", "root@198.18.0.2")])
    lab.node("c1", "container")
    lab.node("c2", "container")
    lab.link("c1", "c2", "10.0.0.1/24", "10.0.0.2/24")
    lab.topology.nodes["c2"].position = Position(200, 0)
    window = opened(make_window, lab, tmp_path)
    view, item = window.view, window.editor.scene.nodes["c2"]
    assert item.site == ""
    click(view, QPointF(200, 0))
    site = window.inspector.node_form.site
    qtbot.waitUntil(lambda: site.isVisible() and window.inspector.node_form.node_id == "c2")
    assert [site.itemText(i) for i in range(site.count())] == ["this machine", "b (root@198.18.0.2)"]
    site.setFocus()
    qtbot.keyClick(site, Qt.Key.Key_Down)
    assert window.editor.topology.nodes["c2"].site == "b"
    assert item.site == "b" and item.boundingRect().top() < -30  # the badge sits above the icon
    qtbot.keyClick(view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.editor.topology.nodes["c2"].site == "" and item.site == ""


def test_sites_are_added_in_the_designer_checked_as_the_file_is_and_undone_in_one_step(
        make_window: Callable[..., MainWindow], qtbot: Any, tmp_path: Path) -> None:
    lab = LabBuilder("sited", [])
    lab.node("c1", "container")
    window = opened(make_window, lab, tmp_path)
    seen: list[str] = []

    def fill(dialog: SitesEditorDialog) -> None:
        qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)
        ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
        seen.append(dialog.problems.text())  # "root@" names no host yet
        assert not ok.isEnabled()
        table = dialog.table
        table.setFocus()
        table.setCurrentCell(0, 1)
        qtbot.keyClick(table, Qt.Key.Key_F2)
        editor = table.viewport().findChild(QLineEdit)
        assert editor is not None, "F2 edits the cell"
        qtbot.keyClick(editor, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(editor, "student@198.51.100.7")
        qtbot.keyClick(editor, Qt.Key.Key_Return)
        qtbot.waitUntil(ok.isEnabled)  # the delegate commits the cell once back in the event loop
        assert dialog.problems.text() == ""
        qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)

    when_open(SitesEditorDialog, fill)
    click_menu_entry(qtbot, window, "&Lab", window.menu_actions.edit_sites)
    assert "destination 'root@' is not of the form user@host" in seen[0]
    assert window.editor.topology.sites == {"site1": Site("site1", "student@198.51.100.7")}
    window.activateWindow()  # back from the dialog, as a click on the canvas would
    click(window.view, QPointF(0, 0))
    form = window.inspector.node_form
    qtbot.waitUntil(lambda: form.site.isVisible() and form.node_id == "c1")
    assert [form.site.itemText(i) for i in range(form.site.count())] == \
        ["this machine", "site1 (student@198.51.100.7)"]
    window.view.setFocus()
    qtbot.keyClick(window.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.editor.topology.sites == {}


def test_the_suggested_placement_balances_vm_memory_and_is_accepted_in_one_step(
        make_window: Callable[..., MainWindow], qtbot: Any, tmp_path: Path) -> None:
    lab = LabBuilder("split", [here(), Site("b", "root@198.51.100.9")])
    for side in (1, 2):
        lab.node(f"vm{side}", "vm", memory_mb=512)
        lab.node(f"sw{side}", "bridge")
        lab.link(f"vm{side}", f"sw{side}")
        for index in range(2):
            lab.link(lab.node(f"c{side}{index}", "container"), f"sw{side}")
    lab.link("sw1", "sw2")
    window = opened(make_window, lab, tmp_path)
    shown: list[str] = []

    def accept(dialog: SitesPlacementDialog) -> None:
        shown.append(dialog.summary.text())
        qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)

    steps = window.editor.undo_stack.count()
    when_open(SitesPlacementDialog, accept)
    click_menu_entry(qtbot, window, "&Lab", window.menu_actions.suggest_sites)
    assert shown == ["1 link(s) between the two sites, each a tunnel. VM memory: this machine 512 MiB, "
                     "b (root@198.51.100.9) 512 MiB."]
    placed = {node.name: node.site for node in window.editor.topology.nodes.values()}
    assert placed["vm1"] != placed["vm2"]
    assert all(placed[f"c{side}{index}"] == placed[f"sw{side}"] == placed[f"vm{side}"]
               for side in (1, 2) for index in range(2))
    assert window.editor.undo_stack.count() == steps + 1
    assert window.editor.scene.nodes["vm2" if placed["vm2"] else "vm1"].site == "b"
    window.activateWindow()  # back from the dialog
    qtbot.waitUntil(window.isActiveWindow)
    click(window.view, QPointF(0, 0))
    window.view.setFocus()
    qtbot.keyClick(window.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert all(node.site == "" for node in window.editor.topology.nodes.values())
