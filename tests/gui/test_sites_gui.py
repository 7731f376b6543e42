"""The designer shows each node's site in a badge, and the inspector places a node on a site (an undo step)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QPointF, Qt

from tests.gui.helpers import click
from spread_labs import LabBuilder, here
from vtopo.gui.main_window import MainWindow
from vtopo.model import io
from vtopo.model.sites import Site
from vtopo.model.topology import Position


def test_the_inspector_places_a_node_on_a_site_and_its_badge_says_so(make_window: Callable[..., MainWindow],
                                                                      qtbot: Any, tmp_path: Path) -> None:
    lab = LabBuilder("placed", [here(), Site("b", "root@198.18.0.2")])
    lab.node("c1", "container")
    lab.node("c2", "container")
    lab.link("c1", "c2", "10.0.0.1/24", "10.0.0.2/24")
    lab.topology.nodes["c2"].position = Position(200, 0)
    path = tmp_path / "placed.vtopo"
    io.save(lab.topology, path)
    window = make_window(path)
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
