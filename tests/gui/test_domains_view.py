"""View ▸ Broadcast domains on l2-vs-l3: the two LANs in two colours, the routers' link in a third, a legend."""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from vtopo.gui.main_window import MainWindow


def test_the_two_lans_light_up_in_two_colours(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window("l2-vs-l3")
    links = window.editor.scene.links
    assert all(item.tint is None for item in links.values())
    qtbot.keyClick(window.view, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.domains.toggle.isChecked()
    topology = window.editor.topology
    colour = {topology.describe_link(link): links[link.id].tint.name() for link in topology.links.values()}
    lan1 = {colour[name] for name in colour if "lan1" in name}
    lan2 = {colour[name] for name in colour if "lan2" in name}
    routers = {colour[name] for name in colour if "lan" not in name}
    assert len(lan1) == len(lan2) == len(routers) == 1 and len(lan1 | lan2 | routers) == 3
    legend = window.domains.legend.text()
    assert "10.1.0.0/24" in legend and "h1:eth0, h2:eth0, r1:eth0 via lan1" in legend and "10.0.12.0/30" in legend
    qtbot.keyClick(window.view, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert all(item.tint is None for item in links.values())
