"""The Capture dock: menus on the canvas, the packet list with its filter and details, and (privileged) live
captures on a deployed lab, including a flood whose list stays bounded."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Callable

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QTabBar
from pytestqt.qtbot import QtBot
from scapy.layers.inet import ICMP, IP
from scapy.layers.l2 import ARP, Ether

from tests.gui.helpers import (choose, click, deploy_or_destroy, right_click, send, view_point,
                               when_menu_opens)
from tests.residue import snapshot
from vtopo.capture import CaptureError, RawPacket, summarize
from vtopo.gui.capture.tab import CaptureTab
from vtopo.gui.main_window import MainWindow

FLOOD = ("ping", "-f", "-l", "16", "-q", "-w", "10", "-s", "16", "10.0.0.2")
"""10 s of flood ping from c1 to c2; how long the GUI thread stalls meanwhile is a benchmark's figure
(tests/benchmarks/test_capture_gui_bench.py), not an assertion here."""


def cannot_start() -> None:
    raise CaptureError("lab bridge-veth is not deployed")


def packet(number: int, frame: Ether) -> tuple:  # type: ignore[type-arg]
    raw = RawPacket(number, 1000.0 + number / 10, bytes(frame), len(bytes(frame)))
    return summarize(raw), raw


def test_capture_menu_waits_for_a_deployed_lab(make_window: Callable[..., MainWindow]) -> None:
    window = make_window("bridge-veth")
    menu = window.menu_actions.node_menu_for("c1")
    capture_menu = next(a.menu() for a in menu.actions() if a.text() == "Capture on")
    assert not capture_menu.isEnabled()
    assert [a.text() for a in capture_menu.actions()] == ["c1:eth0"]
    bridge_menu = next(a.menu() for a in window.menu_actions.node_menu_for("br0").actions() if a.text() == "Capture on")
    assert [a.text() for a in bridge_menu.actions()] == ["br0 (every port)", "br0:p1", "br0:p2", "br0:p3"]
    assert "No capture yet" in window.capture_panel.empty.text()


def test_right_click_on_a_link_offers_a_capture_on_each_end(make_window: Callable[..., MainWindow],
                                                              qtbot: QtBot) -> None:
    window = make_window("l2-vs-l3")
    window.view.link_context_menu.disconnect(window.menu_actions.link_menu)  # the menu would block the test in exec()
    link = next(l for l in window.editor.topology.links.values()
                if {window.editor.topology.nodes[e.node].name for e in l.ends} == {"h1", "lan1"})
    middle = window.editor.scene.links[link.id].line.center()
    right = Qt.MouseButton.RightButton
    with qtbot.waitSignal(window.view.link_context_menu) as asked:
        send(window.view, QMouseEvent.Type.MouseButtonPress, view_point(window.view, middle), right, right)
    assert asked.args[0] == link.id
    entries = [a.text() for a in window.menu_actions.link_menu_for(link.id).actions() if a.text().startswith("Capture")]
    assert sorted(entries) == ["Capture on h1:eth0", "Capture on lan1:p1"]


def test_a_measurement_ending_keeps_the_links_under_capture_marked(make_window: Callable[..., MainWindow]) -> None:
    window = make_window("bridge-veth")
    scene = window.editor.scene
    scene.highlight_path(["c1-eth0--br0-p1"], "capture")
    scene.highlight_path(["c2", "c2-eth0--br0-p2", "br0", "c3-eth0--br0-p3", "c3"], "measure")
    assert scene.links["c1-eth0--br0-p1"].on_path and scene.nodes["c3"].on_path
    window.measure_panel.run_finished.emit()
    assert scene.links["c1-eth0--br0-p1"].on_path, "the capture's mark outlives the measurement"
    assert not scene.nodes["c3"].on_path and not scene.links["c2-eth0--br0-p2"].on_path


def test_packet_list_filter_and_details(qtbot: QtBot) -> None:
    tab = CaptureTab("c1:eth0", cannot_start)
    qtbot.addWidget(tab)
    tab.show()
    qtbot.waitUntil(lambda: "capture failed" in tab.status.text())
    assert "not deployed" in tab.status.text()
    c1, c2 = "02:00:00:00:00:01", "02:00:00:00:00:02"
    tab._arrived([packet(1, Ether(src=c1, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc="10.0.0.1", pdst="10.0.0.2")),
                  packet(2, Ether(src=c1, dst=c2) / IP(src="10.0.0.1", dst="10.0.0.2") / ICMP(id=7, seq=1)),
                  packet(3, Ether(src=c2, dst=c1) / IP(src="10.0.0.2", dst="10.0.0.1") / ICMP(type=0, id=7, seq=1))])
    assert tab.shown.rowCount() == 3
    qtbot.keyClicks(tab.filter_box, "echo reply")
    assert tab.shown.rowCount() == 1
    row = tab.view.visualRect(tab.shown.index(0, 9)).center()
    qtbot.mouseClick(tab.view.viewport(), Qt.MouseButton.LeftButton, pos=row)
    names = [tab.layers.topLevelItem(i).text(0) for i in range(tab.layers.topLevelItemCount())]
    assert names[:3] == ["Ethernet", "IP", "ICMP"]
    assert "0000" in tab.hex.toPlainText()
    tab.filter_box.clear()
    qtbot.mouseClick(tab.clear, Qt.MouseButton.LeftButton)
    assert tab.shown.rowCount() == 0
    tab.close_capture()


def _in(window: MainWindow, node: str, *argv: str) -> list[str]:
    from vtopo.deployed import DeployedLab

    return DeployedLab.find(window.editor.topology.name).command_in(node, list(argv))


@pytest.mark.privileged
def test_capture_from_the_menu_then_a_flood_keeps_the_list_bounded(make_window: Callable[..., MainWindow],
                                                                   qtbot: QtBot) -> None:
    from vtopo.gui.panels.deploy import load_deployer

    before = snapshot()
    window = make_window("bridge-veth", deployer_loader=load_deployer)
    scene = window.editor.scene
    try:
        deploy_or_destroy(window, qtbot, True)
        menu = window.menu_actions.node_menu_for("c1")
        capture_menu = next(a.menu() for a in menu.actions() if a.text() == "Capture on")
        assert capture_menu.isEnabled()
        capture_menu.actions()[0].trigger()
        tab = window.capture_panel.captures()[0]
        qtbot.waitUntil(lambda: tab.target is not None, timeout=10_000)
        assert scene.links["c1-eth0--br0-p1"].on_path
        subprocess.run(_in(window, "c1", "ping", "-c", "2", "-i", "0.3", "10.0.0.2"), check=True, timeout=10)
        qtbot.waitUntil(lambda: sum("echo" in tab.table.rows[r][0].info for r in range(len(tab.table.rows))) >= 4,
                        timeout=5000)

        flood = subprocess.Popen(_in(window, "c1", *FLOOD), stdout=subprocess.PIPE, text=True)
        captured_before = int(tab.status.text().split(": ")[1].split()[0]) if ": " in tab.status.text() else 0
        link = "c1-eth0--br0-p1"
        qtbot.waitUntil(lambda: link in window.rates.latest and window.rates.latest[link].packets_per_second > 5000,
                        timeout=5000)
        assert scene.links[link].load > 0.3 and "packets/s" in scene.links[link].toolTip()
        qtbot.waitUntil(lambda: flood.poll() is not None, timeout=20_000)
        qtbot.wait(1500)  # the last counters
        captured = int(tab.status.text().split(": ")[1].split()[0])
        assert captured - captured_before > 1000
        assert len(tab.table.rows) <= 5000
        row = tab.view.visualRect(tab.shown.index(0, 0)).center()
        qtbot.mouseClick(tab.view.viewport(), Qt.MouseButton.LeftButton, pos=row)
        assert {i for i, item in scene.links.items() if item.on_path} == {"c1-eth0--br0-p1"}
        tabs = window.capture_panel.tabs
        close = tabs.tabBar().tabButton(0, QTabBar.ButtonPosition.RightSide)
        qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
        assert tabs.count() == 0
        assert not scene.links["c1-eth0--br0-p1"].on_path
    finally:
        window.capture.shutdown()
        if window.deploy.deployed_lab:
            deploy_or_destroy(window, qtbot, False)
    assert snapshot() - before == {}
    assert not list(Path("/tmp").glob("vtopo-capture-*"))


@pytest.mark.privileged
def test_follow_a_ping_from_the_menu_of_two_selected_nodes(make_window: Callable[..., MainWindow],
                                                           qtbot: QtBot) -> None:
    """The teacher's "L2 against L3, seen directly": h1 and h3 selected with the mouse, "Follow a ping" from the
    right-click menu, and a tab per link of the path showing the same echo with the TTL dropping at each router."""
    from vtopo.gui.panels.deploy import load_deployer

    before = snapshot()
    window = make_window("l2-vs-l3", deployer_loader=load_deployer)
    scene, view = window.editor.scene, window.view
    try:
        deploy_or_destroy(window, qtbot, True)
        deadline = time.monotonic() + 30
        while subprocess.run(_in(window, "h1", "ping", "-c", "1", "-W", "1", "10.2.0.10"),
                             capture_output=True).returncode:  # OSPF has converged when h1 reaches h3
            assert time.monotonic() < deadline, "h1 never reached h3"
        click(view, scene.nodes["h1"].pos())
        click(view, scene.nodes["h3"].pos(), Qt.KeyboardModifier.ControlModifier)
        when_menu_opens(choose("Follow a ping from h1 to h3"))
        right_click(view, scene.nodes["h3"].pos())
        tabs = window.capture_panel.captures
        qtbot.waitUntil(lambda: len(tabs()) == 5, timeout=10_000)
        assert [tab.title for tab in tabs()] == ["1. h1:eth0", "2. lan1:p3", "3. r1:eth1", "4. r2:eth0", "5. lan2:p2"]

        def requests(tab: CaptureTab) -> list:  # type: ignore[type-arg]
            rows = (tab.table.packet(row)[0] for row in range(len(tab.table.rows)))
            return [p for p in rows if p.info.startswith("echo request")]

        qtbot.waitUntil(lambda: all(len(requests(tab)) == 3 for tab in tabs()), timeout=15_000)
        first = [requests(tab)[0] for tab in tabs()]
        assert [p.ttl for p in first] == [64, 64, 63, 62, 62]
        assert len({p.echo for p in first}) == 1
        assert first[1].src_mac == first[0].src_mac != first[2].src_mac != first[3].src_mac
        assert {(p.src_ip, p.dst_ip) for p in first} == {("10.1.0.10", "10.2.0.10")}

        router_link = tabs()[2]
        window.capture_panel.tabs.setCurrentWidget(router_link)
        qtbot.mouseClick(router_link.view.viewport(), Qt.MouseButton.LeftButton,
                         pos=router_link.view.visualRect(router_link.shown.index(0, 0)).center())
        assert {i for i, item in [*scene.nodes.items(), *scene.links.items()] if item.on_path} == {
            "r1", "r2", "r1-eth1--r2-eth1"}
    finally:
        window.capture.shutdown()
        if window.deploy.deployed_lab:
            deploy_or_destroy(window, qtbot, False)
    assert snapshot() - before == {}
