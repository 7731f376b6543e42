"""The link rates overlay on a deployed lab: traffic sent over a link draws it wider with its rate in the tooltip, and
draws it plain again once the traffic stops. The agent tells only the rates that changed: a quiet lab is told
nothing. Privileged: the lab is deployed, and pinged from inside a node."""
from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import Callable

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.gui.helpers import deploy_or_destroy, tooltip_at
from tests.residue import snapshot
from vtopo.client.agent_client import AgentClient
from vtopo.deployed import DeployedLab
from vtopo.gui.main_window import MainWindow
from vtopo.gui.canvas.labels import format_rate
from vtopo.gui.overlays.rates import HOLD_S, load_of
from vtopo.reports import STILL, LinkRate
from vtopo.server.agent_server import Agent

PINGED = ("c1-eth0--br0-p1", "c2-eth0--br0-p2")
QUIET_S = HOLD_S + 1.0  # no change told this long, and the last drawn


class Told:
    """What the agent tells a client following the lab's link rates, each with when it came."""

    def __init__(self, lab: str) -> None:
        self.changes: list[tuple[float, dict[str, LinkRate]]] = []
        self._rates = AgentClient().link_rates(lab)
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        for changes in self._rates:
            self.changes.append((time.monotonic(), changes))

    def close(self) -> None:
        self._rates.close()
        self._thread.join(timeout=5)
        assert not self._thread.is_alive(), "closing the rates ends their stream at once"


@pytest.mark.privileged
def test_traffic_draws_a_link_with_its_rate_and_a_quiet_lab_is_told_nothing(make_window: Callable[..., MainWindow],
                                                                           qtbot: QtBot) -> None:
    from vtopo.gui.panels.deploy import load_deployer

    before = snapshot()
    window = make_window("bridge-veth", deployer_loader=load_deployer)
    links = window.editor.scene.links
    try:
        deploy_or_destroy(window, qtbot, True)
        qtbot.waitUntil(lambda: window.rates.latest.keys() == links.keys(), timeout=10_000)  # every link's at once
        told = Told(window.editor.topology.name)
        try:
            qtbot.waitUntil(lambda: len(told.changes) > 0, timeout=5000)
            assert told.changes[0][1].keys() == links.keys()

            def quiet() -> bool:  # the nodes' own first packets (IPv6's router solicitations) are over
                return time.monotonic() - told.changes[-1][0] > QUIET_S

            qtbot.waitUntil(quiet, timeout=30_000)
            # the designer's own stream reads the counters at another moment of the second than `told`'s: it may hear
            # the last packet a second later, and then holds the link's width HOLD_S more
            qtbot.waitUntil(lambda: all(item.load == 0 and item.traffic == STILL for item in links.values()),
                            timeout=int((HOLD_S + 1.0) * 1000))

            lab = DeployedLab.find(window.editor.topology.name)
            ping = subprocess.Popen(lab.command_in("c1", ["ping", "-c", "40", "-i", "0.1", "-s", "1400", "10.0.0.2"]),
                                    stdout=subprocess.DEVNULL)
            try:
                qtbot.waitUntil(lambda: all(window.rates.latest[link].packets_per_second >= 15 for link in PINGED),
                                timeout=5000)
                for link in PINGED:
                    rate = window.rates.latest[link]
                    assert rate.bits_per_second > 100_000 and links[link].load > 0.3
                    shown = tooltip_at(window, links[link].line.center())
                    assert f"traffic: {format_rate(rate.bits_per_second)}, {rate.packets_per_second:,.0f} packets/s" \
                        in shown, shown
            finally:
                assert ping.wait(timeout=20) == 0
            qtbot.waitUntil(lambda: all(window.rates.latest[link] == STILL for link in PINGED), timeout=5000)
            qtbot.waitUntil(lambda: all(links[link].load == 0 for link in PINGED), timeout=int(HOLD_S * 1000) + 2000)
            for link in PINGED:
                assert "traffic: 0.0 Mb/s, 0 packets/s" in tooltip_at(window, links[link].line.center())
            qtbot.waitUntil(quiet, timeout=10_000)
        finally:
            told.close()
    finally:
        if window.deploy.deployed_lab:
            deploy_or_destroy(window, qtbot, False)
    assert snapshot() - before == {}


def agent_streams_of_rates() -> int:
    """How many of the agent's threads serve a stream of link rates now (the agent runs in the suite's process for
    root), each reading the lab's counters every second."""
    streaming = 0
    for frame in sys._current_frames().values():  # pylint: disable=protected-access
        while frame is not None and frame.f_code is not Agent.link_rates.__code__:
            frame = frame.f_back  # type: ignore[assignment]
        streaming += frame is not None
    return streaming


@pytest.mark.privileged
def test_hidden_rates_are_not_measured_and_shown_again_they_are_back_at_once(make_window: Callable[..., MainWindow],
                                                                            qtbot: QtBot) -> None:
    """Ctrl+Shift+T hides the rates, and the agent stops reading the lab's counters for the designer; pressed again,
    the links are drawn with the rates last told at once, and the agent reads them again."""
    from vtopo.gui.panels.deploy import load_deployer

    before = snapshot()
    window = make_window("bridge-veth", deployer_loader=load_deployer)
    links = window.editor.scene.links
    rates_key = (Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    try:
        deploy_or_destroy(window, qtbot, True)
        qtbot.waitUntil(lambda: window.rates.latest.keys() == links.keys(), timeout=10_000)
        assert agent_streams_of_rates() == 1
        told = dict(window.rates.latest)
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow)
        qtbot.keyClick(window.view, *rates_key)
        assert not window.rates.toggle.isChecked()
        qtbot.waitUntil(lambda: agent_streams_of_rates() == 0, timeout=3000)
        assert all(item.traffic is None for item in links.values())
        qtbot.keyClick(window.view, *rates_key)
        assert all(item.traffic == told[link_id] for link_id, item in links.items())
        qtbot.waitUntil(lambda: agent_streams_of_rates() == 1, timeout=3000)
    finally:
        if window.deploy.deployed_lab:
            deploy_or_destroy(window, qtbot, False)
    qtbot.waitUntil(lambda: agent_streams_of_rates() == 0, timeout=3000)  # the lab's end ends its stream
    assert snapshot() - before == {}


def test_a_rate_that_wanders_within_its_tenfold_keeps_the_links_width() -> None:
    """Router solicitations flooded to every port of a switch, one to nine a second (70 bytes each), are drawn at
    one width, whichever came first; a tenfold rise is drawn wider, and no traffic plain."""
    flooded = [packets * 70 * 8.0 for packets in (1, 9, 2, 5, 3, 8, 1)]
    drawn = load_of(flooded[0])
    assert drawn > 0
    for bits in flooded:
        assert load_of(bits, drawn) == drawn
    assert load_of(flooded[0] * 100, drawn) > drawn
    assert load_of(0.0, drawn) == 0.0


def test_a_link_is_drawn_wider_at_once_and_narrower_only_once_its_rate_stayed_lower(
        make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    """Router solicitations a second or two apart keep an idle link's width: no gap between them draws the lab
    again. The tooltip tells the rate as it is."""
    window = make_window("bridge-veth")
    link_id, link = next(iter(window.editor.scene.links.items()))
    chatter, still = LinkRate(3 * 70 * 8.0, 3.0), LinkRate(0.0, 0.0)
    window.rates.show_changes({link_id: chatter})
    drawn = link.load
    assert drawn == load_of(chatter.bits_per_second) > 0
    started = time.monotonic()
    window.rates.show_changes({link_id: still})
    assert link.load == drawn and link.traffic == still
    qtbot.wait(int(HOLD_S * 1000 / 2))
    window.rates.show_changes({link_id: chatter})
    again = time.monotonic()
    window.rates.show_changes({link_id: still})  # held anew
    assert link.load == drawn
    qtbot.waitUntil(lambda: link.load == 0, timeout=int(HOLD_S * 1000) + 2000)
    assert time.monotonic() - again >= HOLD_S > again - started
