"""A deployed DHCP server's leases in the inspector: selecting the server lists each lease (address, client node, MAC),
and a client's DHCP interface shows the address it leased, as the agent tells them when the server writes its lease
file (the designer reads the lab's status no more for it)."""
from __future__ import annotations

import ipaddress
import re
from typing import Callable

import pytest
from pytestqt.qtbot import QtBot

from residue import snapshot
from tests.gui.helpers import cell_text, click, deploy_or_destroy, focus_canvas
from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels.interface_table import COLUMNS

MAC = re.compile(r"[0-9a-f]{2}(:[0-9a-f]{2}){5}")
POOLS = {"c1": ipaddress.ip_network("10.0.1.0/24"), "c2": ipaddress.ip_network("10.0.2.0/24")}


def select(window: MainWindow, qtbot: QtBot, name: str) -> None:
    node = window.editor.topology.node_named(name)
    assert node is not None
    focus_canvas(qtbot, window)
    click(window.view, window.editor.scene.nodes[node.id].pos())
    qtbot.waitUntil(lambda: window.inspector.node_form.node_id == node.id)


@pytest.mark.privileged
def test_the_inspector_lists_a_deployed_servers_leases_and_a_clients_leased_address(
        make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    from vtopo.gui.panels.deploy import load_deployer

    before = snapshot()
    window = make_window("dhcp-relay", deployer_loader=load_deployer)
    form = window.inspector.node_form
    try:
        select(window, qtbot, "srv")
        assert not form.leases.isVisible()  # not deployed: no leases to show
        deploy_or_destroy(window, qtbot, True)
        reads: list[None] = []
        window.deploy.status_read.connect(lambda: reads.append(None))
        qtbot.waitUntil(lambda: form.leases.isVisible(), timeout=30_000)
        qtbot.waitUntil(lambda: sorted(row[1] for row in form.leases.rows()) == ["c1", "c2"], timeout=90_000)
        assert reads == [], "the leases are told as the server writes them, not read again"
        leases = {client: (address, mac) for address, client, mac in form.leases.rows()}
        for client, (address, mac) in leases.items():
            assert ipaddress.ip_address(address) in POOLS[client] and MAC.fullmatch(mac), leases

        select(window, qtbot, "c1")
        assert not form.leases.isVisible()  # c1 serves no DHCP
        table = form.interfaces
        state = cell_text(table, 0, COLUMNS.index("State"))
        assert state == f"running, leased {leases['c1'][0]}", state

        deploy_or_destroy(window, qtbot, False)
        select(window, qtbot, "srv")
        qtbot.waitUntil(lambda: not form.leases.isVisible())  # the leases went with the lab
    finally:
        if window.deploy.deployed_lab:
            deploy_or_destroy(window, qtbot, False)
    assert snapshot() - before == {}
