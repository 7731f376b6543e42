"""Automatic addressing in the designer, with real mouse and keys: the lab's switch turned on in the inspector, two
LANs and a router drawn link by link take their subnets, addresses and gateways from the pool (each link one undo
step), and the lab deploys as drawn: the hosts ping each other across the router. Privileged: a real deploy."""
from __future__ import annotations

import subprocess
import sys
from typing import Any, Callable

import pytest
from PySide6.QtCore import QPointF, Qt

from residue import snapshot
from tests.gui.helpers import click, deploy_or_destroy, drag, drop_kind, focus_canvas
from vtopo.gui.main_window import MainWindow
from vtopo.model.addressing import AddressPool
from vtopo.model.topology import Endpoint

Key, Ctrl = Qt.Key, Qt.KeyboardModifier.ControlModifier
LAB = "autoaddr"
PLACES = {"h1": ("container", (40, 40)), "h3": ("container", (40, 320)), "br1": ("bridge", (180, 180)),
          "r1": ("router", (320, 180)), "br2": ("bridge", (460, 180)), "h2": ("container", (600, 180))}
LINKS = [("h1", "br1"), ("h3", "br1"), ("r1", "br1"), ("r1", "br2"), ("h2", "br2")]  # in the order they are drawn


def addresses_of(window: MainWindow, names: dict[str, str], node: str) -> list[list[str]]:
    topology = window.editor.topology
    node_id = topology.node_named(names[node]).id  # type: ignore[union-attr]
    ends: list[Endpoint] = [end for link in topology.links_of(node_id) for end in link.ends if end.node == node_id]
    return [end.interface.addresses for end in sorted(ends, key=lambda end: end.port)]


def gateway_of(window: MainWindow, names: dict[str, str], node: str) -> str:
    return str(window.editor.topology.node_named(names[node]).settings.get("default_route", ""))  # type: ignore


def draw_two_lans_and_a_router(window: MainWindow, qtbot: Any) -> dict[str, str]:
    """The nodes dropped from the palette and linked with link-mode drags; the names the designer gave them."""
    editor, view = window.editor, window.view
    for kind, at in PLACES.values():
        drop_kind(window, kind, QPointF(*at))
    qtbot.waitUntil(lambda: len(editor.topology.nodes) == len(PLACES))
    at = {(node.position.x, node.position.y): node.name for node in editor.topology.nodes.values()}
    names = {ours: at[(float(x), float(y))] for ours, (_, (x, y)) in PLACES.items()}
    focus_canvas(qtbot, window)
    qtbot.keyClick(view, Key.Key_L)
    for a, b in LINKS:
        drag(view, QPointF(*PLACES[a][1]), QPointF(*PLACES[b][1]))
    qtbot.keyClick(view, Key.Key_Escape)
    assert len(editor.topology.links) == len(LINKS)
    return names


@pytest.mark.privileged
def test_two_lans_and_a_router_drawn_with_the_mouse_are_addressed_and_ping_across(
        make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    from vtopo.gui.panels.deploy import load_deployer

    window = make_window(None, deployer_loader=load_deployer)
    window.resize(1200, 800)
    form = window.inspector.lab_form
    qtbot.waitUntil(form.isVisible)
    qtbot.mouseClick(form.name, Qt.MouseButton.LeftButton)
    qtbot.keyClick(form.name, Key.Key_A, Ctrl)
    qtbot.keyClicks(form.name, LAB)
    qtbot.keyClick(form.name, Key.Key_Return)
    qtbot.mouseClick(form.addressing.automatic, Qt.MouseButton.LeftButton)
    assert window.editor.topology.addressing == AddressPool(ipv4="10.0.0.0/16")
    qtbot.waitUntil(lambda: form.addressing.networks[4].text() == "10.0.0.0/16")

    names = draw_two_lans_and_a_router(window, qtbot)
    assert [addresses_of(window, names, node) for node in ("h1", "h3", "r1", "h2")] == [
        [["10.0.0.1/24"]], [["10.0.0.2/24"]], [["10.0.0.3/24"], ["10.0.1.1/24"]], [["10.0.1.2/24"]]]
    assert addresses_of(window, names, "br1") == [[], [], []]
    assert [gateway_of(window, names, host) for host in ("h1", "h3", "h2")] == ["10.0.0.3", "10.0.0.3", "10.0.1.1"]

    undo_text = window.editor.undo_stack.undoText()
    assert undo_text.startswith(f"Link {names['h2']}:eth0-{names['br2']}"), undo_text
    focus_canvas(qtbot, window)
    qtbot.keyClick(window.view, Key.Key_Z, Ctrl)  # the last link, its address and h2's gateway: one step
    assert len(window.editor.topology.links) == len(LINKS) - 1 and gateway_of(window, names, "h2") == ""
    qtbot.keyClick(window.view, Key.Key_Y, Ctrl)
    assert addresses_of(window, names, "h2") == [["10.0.1.2/24"]] and gateway_of(window, names, "h2") == "10.0.1.1"

    before = snapshot()
    deploy_or_destroy(window, qtbot, True)
    assert window.deploy.deployed_lab == LAB, window.log.toPlainText()[-3000:]
    try:
        for source, target in (("h1", "10.0.1.2"), ("h3", "10.0.1.2"), ("h2", "10.0.0.2")):
            pinged = subprocess.run([sys.executable, "-m", "vtopo", "exec", LAB, names[source], "--", "ping", "-c", "1",
                                     "-W", "2", target], capture_output=True, text=True, timeout=60)
            assert pinged.returncode == 0, f"{source} -> {target}: {pinged.stdout}{pinged.stderr}"
            assert " 0% packet loss" in pinged.stdout
    finally:
        deploy_or_destroy(window, qtbot, False)
    assert snapshot() - before == {}


def test_a_lab_without_a_pool_draws_links_without_addresses(make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window(None)
    names = draw_two_lans_and_a_router(window, qtbot)
    assert all(addresses == [[]] for addresses in (addresses_of(window, names, node) for node in ("h1", "h3", "h2")))
    click(window.view, QPointF(900, 600))  # nothing selected: the lab's form, its switch off
    assert not window.inspector.lab_form.addressing.automatic.isChecked()


def test_the_pool_is_typed_in_the_inspector_and_a_wrong_one_is_refused_where_it_is_typed(
        make_window: Callable[..., MainWindow], qtbot: Any) -> None:
    window = make_window(None)
    pool = window.inspector.lab_form.addressing
    qtbot.waitUntil(pool.isVisible)
    qtbot.mouseClick(pool.automatic, Qt.MouseButton.LeftButton)
    network = pool.networks[4]
    for typed in ("172.16.0.1/16", "172.16.0.0/16"):
        qtbot.mouseClick(network, Qt.MouseButton.LeftButton)
        qtbot.keyClick(network, Key.Key_A, Ctrl)
        qtbot.keyClicks(network, typed)
        qtbot.keyClick(network, Key.Key_Return)
        if typed.endswith("1/16"):
            assert network.property("invalid") and "has host bits set" in network.toolTip()
            assert window.editor.topology.addressing == AddressPool(ipv4="10.0.0.0/16")  # unchanged
    assert not network.property("invalid")
    assert window.editor.topology.addressing == AddressPool(ipv4="172.16.0.0/16")
    focus_canvas(qtbot, window)
    qtbot.keyClick(window.view, Key.Key_Z, Ctrl)
    assert window.editor.topology.addressing == AddressPool(ipv4="10.0.0.0/16")
    qtbot.keyClick(window.view, Key.Key_Z, Ctrl)
    assert window.editor.topology.addressing.empty
    qtbot.waitUntil(lambda: not pool.automatic.isChecked())
