"""Deploy and destroy from the GUI: a fake executor for the wiring, the real one when root is available."""
from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from typing import Any, Callable

import pytest
from PySide6.QtCore import QPointF, Qt
from pytestqt.qtbot import QtBot

from tests.gui.helpers import answer_next_dialog
from vtopo.gui.canvas.states import NodeState
from vtopo.gui.console import terminal
from vtopo.gui.main_window import MainWindow
from vtopo.lab import registry
from vtopo.reports import DeployReport, Progress


class FakeError(Exception):
    rolled_back = True


class FakeDeployer:
    """Follows the Deployer API; records the thread it was called on."""

    def __init__(self, fail_on: str = "") -> None:
        self.threads: list[threading.Thread] = []
        self.fail_on = fail_on

    def update(self, topology: Any, progress: Callable[[Any], None], consent: Any = None) -> DeployReport:
        self.threads.append(threading.current_thread())
        names = [n.name for n in topology.nodes.values()]
        for index, name in enumerate(names):
            progress(Progress("apply", index + 1, len(names), "create namespace", f"node {name}"))
            if name == self.fail_on:
                raise FakeError(f"create namespace on node {name}: File exists")
        return DeployReport(topology.name, "vtfake", len(names), len(topology.links), len(names), 0.1, ["a notice"])

    def destroy(self, lab: str, progress: Callable[[Any], None]) -> int:
        progress(Progress("destroy", 1, 1, "delete everything"))
        return 1

    def status(self, lab: str | None = None) -> list[Any]:
        return []

    def follow(self, lab: str) -> NoFollowing:
        return NoFollowing()


class NoFollowing:
    """A following that says nothing: no lab runs."""

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def close(self) -> None:
        return


def test_deploy_and_destroy_run_in_a_worker(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    deployer = FakeDeployer()
    window = make_window("bridge-veth", deployer_loader=lambda: (deployer, ""))
    qtbot.waitUntil(lambda: not window.deploy.busy)
    assert window.menu_actions.deploy.isEnabled()
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        window.menu_actions.deploy.trigger()
    assert deployer.threads and deployer.threads[0] is not threading.main_thread()
    assert {n: s for n, s in window.deploy.states.items()} == {name: NodeState.RUNNING
                                                               for name in ("br0", "c1", "c2", "c3")}
    assert window.editor.scene.nodes["c1"].state is NodeState.RUNNING
    log = window.log.toPlainText()
    assert "[apply 2/4] node c1: create namespace" in log and "notice: a notice" in log
    window.editor.scene.select_ids(["c1"])
    expected = terminal.unavailable_reason(window.editor.registry.get("container"), True)
    assert window.menu_actions.terminal.isEnabled() == (expected == "")
    window.editor.scene.select_ids(["br0"])
    assert not window.menu_actions.terminal.isEnabled()
    assert "no shell" in window.menu_actions.terminal.toolTip()
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        answer_next_dialog("Destroy")
        window.menu_actions.destroy.trigger()
    assert window.deploy.states == {}
    assert window.editor.scene.nodes["c1"].state is NodeState.NOT_DEPLOYED


def test_a_failed_deploy_marks_the_node_and_logs_the_error(make_window: Callable[..., MainWindow],
                                                          qtbot: QtBot) -> None:
    window = make_window("bridge-veth", deployer_loader=lambda: (FakeDeployer(fail_on="c2"), ""))
    qtbot.waitUntil(lambda: not window.deploy.busy)
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        window.menu_actions.deploy.trigger()
    assert window.editor.scene.nodes["c2"].state is NodeState.FAILED
    assert window.editor.scene.nodes["c1"].state is NodeState.NOT_DEPLOYED
    assert "FAILED: create namespace on node c2: File exists" in window.log.toPlainText()


def test_without_an_executor_deploy_is_disabled_with_the_reason(make_window: Callable[..., MainWindow]) -> None:
    window = make_window()
    assert not window.menu_actions.deploy.isEnabled()
    assert "no executor" in window.menu_actions.deploy.toolTip()
    window.editor.scene.select_ids(["r1"])
    assert not window.menu_actions.terminal.isEnabled()
    assert "deploy the lab first" in window.menu_actions.terminal.toolTip()


@pytest.mark.privileged
def test_deploy_and_destroy_bridge_veth_for_real(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    from vtopo.gui.panels.deploy import load_deployer

    window = make_window("bridge-veth", deployer_loader=load_deployer)
    qtbot.waitUntil(lambda: not window.deploy.busy, timeout=30_000)
    names = {"br0", "c1", "c2", "c3"}
    try:
        with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=120_000):
            window.menu_actions.deploy.trigger()
        assert window.deploy.states == {name: NodeState.RUNNING for name in names}, window.log.toPlainText()
        with qtbot.waitSignal(window.deploy.status_read, timeout=30_000):
            window.menu_actions.status.trigger()
        assert window.deploy.states == {name: NodeState.RUNNING for name in names}, window.log.toPlainText()
        assert window.drift.text() == ""
        added = window.editor.place_node("container", QPointF(600, 300))
        assert added is not None
        window.editor.connect_nodes(added.id, "br0")
        assert "changed since" in window.drift.text()
        with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=120_000):
            window.menu_actions.deploy.trigger()
        assert "applied only the" in window.log.toPlainText()
        assert window.drift.text() == ""
        names.add(added.name)
        with qtbot.waitSignal(window.deploy.status_read, timeout=30_000):
            window.menu_actions.status.trigger()
        assert window.deploy.states == {name: NodeState.RUNNING for name in names}, window.log.toPlainText()
    finally:
        with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=120_000):
            answer_next_dialog("Destroy")
            window.menu_actions.destroy.trigger()
    assert window.deploy.states == {}
    assert all(item.state is NodeState.NOT_DEPLOYED for item in window.editor.scene.nodes.values())


def test_terminals_open_a_shell_vtysh_or_a_vms_console() -> None:
    kinds = registry()
    container = terminal.terminal_argv("lab", "c1", kinds.get("container"))
    assert container[-5:] == ["exec", "lab", "c1", "--", "bash"]
    assert terminal.terminal_argv("lab", "r1", kinds.get("router"))[-1] == "vtysh"
    assert terminal.terminal_argv("lab", "vm1", kinds.get("vm"))[-3:] == ["console", "lab", "vm1"]
    assert "no shell" in terminal.unavailable_reason(kinds.get("bridge"), True)
    assert "deploy the lab first" in terminal.unavailable_reason(kinds.get("vm"), False)


def test_destroy_hangs_up_the_labs_terminals(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    window = make_window("bridge-veth", deployer_loader=lambda: (FakeDeployer(), ""))
    qtbot.waitUntil(lambda: not window.deploy.busy)
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        window.menu_actions.deploy.trigger()
    shell = window.terminals.open("c1", ["bash", "--norc", "-i"]).process
    window.view.setFocus()
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        answer_next_dialog("Destroy")
        qtbot.keyClick(window.view, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)
    assert window.terminals.count() == 0
    assert shell.process.returncode is not None


@pytest.mark.privileged
def test_a_link_deleted_by_hand_shows_as_degraded_on_the_canvas(make_window: Callable[..., MainWindow],
                                                                qtbot: QtBot) -> None:
    from residue import snapshot
    from vtopo import ops as o
    from vtopo.gui.canvas.tooltips import link_tooltip
    from vtopo.gui.panels.deploy import load_deployer
    from vtopo.compile.compiler import compile_plan
    from vtopo.compile.resolve import resolve

    before = snapshot()
    window = make_window("bridge-veth", deployer_loader=load_deployer)
    qtbot.waitUntil(lambda: not window.deploy.busy, timeout=30_000)
    try:
        with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=120_000):
            window.menu_actions.deploy.trigger()
        topology = window.editor.topology
        veth = next(op for op in compile_plan(resolve(topology, registry())).ops if isinstance(op, o.CreateVeth) and op.netns is None)
        subprocess.run(["ip", "link", "del", veth.name], check=True)
        with qtbot.waitSignal(window.deploy.status_read, timeout=30_000):
            window.menu_actions.status.trigger()
        broken = {link_id: item.fault for link_id, item in window.editor.scene.links.items() if item.fault}
        assert len(broken) == 1, window.log.toPlainText()
        link_id, fault = broken.popitem()
        assert fault.startswith("degraded; missing: ") and veth.name in fault
        assert veth.name in link_tooltip(topology, link_id, fault)
        # the nodes at its ends still run (the port the bridge lost was made with the link, on the bridge)
        assert set(window.deploy.states.values()) == {NodeState.RUNNING}
        assert "lab bridge-veth: degraded" in window.log.toPlainText()
    finally:
        with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=120_000):
            answer_next_dialog("Destroy")
            window.menu_actions.destroy.trigger()
    assert not any(item.fault for item in window.editor.scene.links.values())
    assert snapshot() - before == {}
