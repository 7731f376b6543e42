"""The Measure dock in the main window: targets from the deployed lab, pairs from the canvas, the path on the
canvas while a run goes, the history beside the lab file. A fake executor and a fake deployed lab for the wiring;
the real ones, with iperf3, when root is available."""
from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Callable

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.gui.helpers import answer_next_dialog, click, deploy_or_destroy
from tests.gui.test_deploy import FakeDeployer
from vtopo.gui.main_window import MainWindow
from vtopo.gui.measure.controller import NOT_DEPLOYED
from vtopo.gui.measure.history import PATH_COLUMN
from vtopo.measure import (MeasureEndpoint, IntervalSample, IperfOptions, RunResult, history_path, load_history,
                           save_history)
from vtopo.resources import TOPOLOGIES

ADDRESSES = {"c1": "10.0.0.1", "c2": "10.0.0.2", "c3": "10.0.0.3"}
PATH_LINKS = {("c1", "c2"): ["c1-eth0--br0-p1", "c2-eth0--br0-p2"]}


class FakeDeployedLab:
    """Answers like vtopo.deployed.DeployedLab for bridge-veth, without a kernel."""

    def measurable(self) -> list[tuple[MeasureEndpoint, list[str]]]:
        return [(MeasureEndpoint(name), [address]) for name, address in ADDRESSES.items()]

    def path(self, source: str, destination: str) -> str:
        return "veth → br0 → veth"

    def path_links(self, source: str, destination: str) -> list[str]:
        return PATH_LINKS.get((source, destination), [])

    def target_address(self, source: str, destination: str) -> tuple[str, str]:
        return ADDRESSES[destination], "same segment"


class FakeRun:
    """Follows the IperfRun API: yields a sample every 50 ms until it is done or cancelled."""

    release = threading.Event()  # the run's last sample waits for it, so a test can look while it runs

    def __init__(self, source: MeasureEndpoint, destination: MeasureEndpoint, address: str, options: IperfOptions, *,
                 lab: str = "", path: str = "") -> None:
        self.result = RunResult(source=source.name, destination=destination.name, address=address, options=options,
                                lab=lab, path=path)
        self.has_result = True
        self._cancelled = threading.Event()

    def __iter__(self) -> Iterator[IntervalSample]:
        for second in range(self.result.options.duration_s):
            if second == self.result.options.duration_s - 1:
                FakeRun.release.wait(10)
            if self._cancelled.is_set():
                self.result.status = "cancelled"
                return
            time.sleep(0.05)
            sample = IntervalSample(float(second), float(second + 1), 900e6, 112_500_000, retransmits=0)
            self.result.intervals.append(sample)
            yield sample

    def cancel(self) -> None:
        self._cancelled.set()


@pytest.fixture
def deployed_window(make_window: Callable[..., MainWindow], qtbot: QtBot, tmp_path: Path) -> Iterator[MainWindow]:
    """bridge-veth, from a file of its own, deployed by the fake executor; measured with fake runs."""
    lab = tmp_path / "bridge-veth.vtopo"
    shutil.copy(TOPOLOGIES / "bridge-veth.vtopo", lab)
    window = make_window(lab, deployer_loader=lambda: (FakeDeployer(), ""))
    window.measure.find_lab = lambda name: (FakeDeployedLab(), "") if name == "bridge-veth" else (None, "no")
    window.measure_panel.runner_factory = FakeRun
    FakeRun.release.set()
    qtbot.waitUntil(lambda: not window.deploy.busy)
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        window.menu_actions.deploy.trigger()
    qtbot.waitUntil(lambda: not window.measure.looking_up)
    yield window
    FakeRun.release.set()
    window.measure_panel.shutdown()


def choices(window: MainWindow) -> tuple[str, str, str]:
    form = window.measure_panel.form
    return form.source_box.currentText(), form.destination_box.currentText(), form.address_box.currentText()


def test_without_a_deployed_lab_the_panel_says_to_deploy(make_window: Callable[..., MainWindow]) -> None:
    window = make_window("bridge-veth")
    panel = window.measure_panel
    window.measure_dock.raise_()
    assert panel.notice.isVisible() and panel.notice.text() == NOT_DEPLOYED
    assert not panel.run_button.isEnabled()
    assert panel.form.source_box.count() == 0
    window.editor.scene.select_ids(["c1", "c2"])
    assert not window.menu_actions.iperf_pair.isEnabled()
    menu = window.menu_actions.node_menu_for("c1")
    assert [a.isEnabled() for a in menu.actions() if a.text().startswith("Measure")] == [False, False]


def test_targets_follow_deploy_and_destroy(deployed_window: MainWindow, qtbot: QtBot) -> None:
    window, panel = deployed_window, deployed_window.measure_panel
    assert panel.notice.isHidden()
    assert list(panel.targets) == ["c1", "c2", "c3"]
    assert panel.run_button.isEnabled()
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=5000):
        answer_next_dialog("Destroy")
        window.menu_actions.destroy.trigger()
    assert panel.targets == {} and not panel.run_button.isEnabled()
    assert panel.notice.text() == NOT_DEPLOYED


def test_the_deployed_lab_is_read_off_the_gui_thread(deployed_window: MainWindow, qtbot: QtBot) -> None:
    window, threads = deployed_window, []

    def find(name: str) -> tuple[FakeDeployedLab, str]:
        threads.append(threading.current_thread())
        return FakeDeployedLab(), ""

    window.measure.find_lab = find
    window.measure.refresh()
    qtbot.waitUntil(lambda: not window.measure.looking_up)
    assert threads and threads[0] is not threading.main_thread()
    assert list(window.measure_panel.targets) == ["c1", "c2", "c3"]


def test_iperf_between_two_selected_nodes_runs_and_shows_the_path(deployed_window: MainWindow,
                                                                  qtbot: QtBot) -> None:
    window, panel, scene = deployed_window, deployed_window.measure_panel, deployed_window.editor.scene
    window.explain_dock.raise_()
    # c2 first, then c1 with Ctrl: the first selected is the source
    click(window.view, scene.nodes["c2"].pos())
    click(window.view, scene.nodes["c1"].pos(), Qt.KeyboardModifier.ControlModifier)
    assert scene.selected_node_ids() == ["c2", "c1"]
    menu = window.menu_actions.node_menu_for("c1")
    assert window.menu_actions.iperf_pair in menu.actions()
    window.menu_actions.iperf_pair.trigger()
    assert choices(window) == ("c2", "c1", "10.0.0.1")
    assert not panel.visibleRegion().isEmpty()  # the dock was raised over the Explain tab

    scene.select_ids(["c1"])
    scene.nodes["c2"].setSelected(True)
    window.menu_actions.iperf_pair.trigger()
    assert choices(window) == ("c1", "c2", "10.0.0.2")
    panel.form.duration_spin.setValue(3)
    FakeRun.release.clear()
    with qtbot.waitSignal(panel.run_started, timeout=2000):
        assert panel.start_run()
    qtbot.waitUntil(lambda: panel.chart.point_count() >= 2, timeout=5000)
    on_path = {"c1", "c2", *PATH_LINKS[("c1", "c2")]}
    lit = {i for i, item in [*scene.nodes.items(), *scene.links.items()] if item.on_path}
    assert lit == on_path
    with qtbot.waitSignal(panel.run_finished, timeout=5000):
        FakeRun.release.set()
    assert not any(item.on_path for item in [*scene.nodes.values(), *scene.links.values()])
    assert panel.history_view.table.item(0, PATH_COLUMN).text() == "veth → br0 → veth"


def test_measure_from_here_and_to_here(deployed_window: MainWindow) -> None:
    window = deployed_window
    window.measure_panel.select_pair("c1", "c2")

    def pick(node_id: str, text: str) -> None:
        menu = window.menu_actions.node_menu_for(node_id)
        action = next(a for a in menu.actions() if a.text() == text)
        assert action.isEnabled()
        action.trigger()

    pick("c3", "Measure to here")
    assert choices(window) == ("c1", "c3", "10.0.0.3")
    pick("c3", "Measure from here")  # the destination was c3 itself: another node takes its place
    assert choices(window) == ("c3", "c1", "10.0.0.1")
    menu = window.menu_actions.node_menu_for("br0")
    assert not next(a for a in menu.actions() if a.text() == "Measure from here").isEnabled()


def test_history_lives_in_the_data_directory(deployed_window: MainWindow, qtbot: QtBot, tmp_path: Path,
                                            data_home: Path) -> None:
    window, panel = deployed_window, deployed_window.measure_panel
    history = history_path("bridge-veth")
    assert history == data_home / "histories" / "bridge-veth.measure.json"
    assert not history.exists()  # opening a lab writes nothing
    panel.form.duration_spin.setValue(2)
    with qtbot.waitSignal(panel.run_finished, timeout=5000):
        panel.start_run()
    assert [r.source for r in load_history(history)] == ["c1"]

    window.files.new_lab()  # the runs of the lab before stay in the table, to compare with
    assert [r.lab for r in panel.history] == ["bridge-veth"]
    window.files.open_path(tmp_path / "bridge-veth.vtopo")
    assert len(panel.history) == 1
    assert not list(tmp_path.glob("*.measure.json")), "nothing beside the lab's file"


def test_the_comparison_shows_two_runs_from_the_saved_history(make_window: Callable[..., MainWindow],
                                                              tmp_path: Path) -> None:
    lab = tmp_path / "bridge-veth.vtopo"
    shutil.copy(TOPOLOGIES / "bridge-veth.vtopo", lab)
    runs = []
    for mbps in (100.0, 400.0):
        run = RunResult(source="c1", destination="c2", address="10.0.0.2", options=IperfOptions(duration_s=2),
                        lab="bridge-veth", path="veth → br0 → veth")
        run.intervals = [IntervalSample(float(t), float(t + 1), mbps * 1e6, 1000) for t in range(2)]
        runs.append(run)
    save_history(history_path("bridge-veth"), runs)
    window = make_window(lab)
    panel = window.measure_panel
    window.measure_dock.raise_()
    assert len(panel.history) == 2
    panel.history_view.select_rows([0, 1])
    assert panel.bars.isVisible() and panel.bars.values == pytest.approx([100.0, 400.0])
    assert len(panel.chart.series_names()) == 2


def test_runs_of_two_labs_are_compared_and_each_saved_with_its_own_lab(make_window: Callable[..., MainWindow],
                                                                         tmp_path: Path) -> None:
    files = {}
    for lab, mbps in (("bridge-veth", 9000.0), ("macvlan-bridge", 7000.0)):
        files[lab] = tmp_path / f"{lab}.vtopo"
        shutil.copy(TOPOLOGIES / f"{lab}.vtopo", files[lab])
        run = RunResult(source="c1", destination="c2", address="10.0.0.2", options=IperfOptions(duration_s=2),
                        lab=lab, path=lab)
        run.intervals = [IntervalSample(float(t), float(t + 1), mbps * 1e6, 1000) for t in range(2)]
        save_history(history_path(lab), [run])
    window = make_window(files["bridge-veth"])
    window.files.open_path(files["macvlan-bridge"])
    panel = window.measure_panel
    assert [r.lab for r in panel.history] == ["bridge-veth", "macvlan-bridge"]
    panel.history_view.select_rows([0, 1])
    assert panel.bars.values == pytest.approx([9.0, 7.0])
    assert panel.chart.series_names() == ["#1 bridge-veth c1→c2", "#2 macvlan-bridge c1→c2"]
    panel.history_view.select_rows([0])
    panel.history_view.delete_selected()
    assert [r.lab for r in load_history(history_path("macvlan-bridge"))] == ["macvlan-bridge"]
    assert [r.lab for r in load_history(history_path("bridge-veth"))] == ["bridge-veth"]


def _deployed(window: MainWindow, qtbot: QtBot, deploy: bool) -> None:
    deploy_or_destroy(window, qtbot, deploy)
    qtbot.waitUntil(lambda: not window.measure.looking_up)  # the panel reads the deployed lab off the GUI thread


@pytest.mark.privileged
def test_bridge_against_macvlan_from_the_gui_for_real(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    """The issue's "done": deploy the bridge lab and the macvlan lab in turn, iperf between two containers in
    each while the chart grows and the path is lit, then compare the two runs side by side."""
    from vtopo.gui.panels.deploy import load_deployer

    window = make_window("bridge-veth", deployer_loader=load_deployer)
    panel, scene = window.measure_panel, window.editor.scene
    qtbot.waitUntil(lambda: not window.deploy.busy, timeout=30_000)
    lit = lambda: {i for i, item in [*scene.nodes.items(), *scene.links.items()] if item.on_path}  # noqa: E731
    try:
        _deployed(window, qtbot, True)
        assert {"c1", "c2", "c3"} <= set(panel.targets), panel.notice.text() + window.log.toPlainText()
        scene.select_ids(["c1"])
        scene.nodes["c2"].setSelected(True)
        menu = window.menu_actions.node_menu_for("c2")
        assert window.menu_actions.iperf_pair in menu.actions() and window.menu_actions.iperf_pair.isEnabled()
        window.menu_actions.iperf_pair.trigger()
        assert choices(window) == ("c1", "c2", "10.0.0.2")
        assert not panel.visibleRegion().isEmpty()
        panel.form.duration_spin.setValue(2)
        with qtbot.waitSignal(panel.run_started, timeout=5000):
            qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
        path = {"c1", "c2", *PATH_LINKS[("c1", "c2")]}
        qtbot.waitUntil(lambda: panel.chart.point_count() >= 1 and lit() == path, timeout=10_000)
        qtbot.waitUntil(lambda: not panel.running, timeout=30_000)
        assert lit() == set()
        result = panel.history[-1]
        assert result.status == "ok", panel.status_label.text()
        assert result.mean_bits_per_second and result.mean_bits_per_second > 1e6
        assert panel.history_view.table.item(0, PATH_COLUMN).text() == "veth → br0 → veth"
        _deployed(window, qtbot, False)
        assert panel.targets == {} and panel.notice.text() == NOT_DEPLOYED

        assert window.files.open_path(TOPOLOGIES / "macvlan-bridge.vtopo", as_template=True)
        _deployed(window, qtbot, True)
        window.measure.between("c1", "c2")
        with qtbot.waitSignal(panel.run_started, timeout=5000):
            qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: panel.chart.point_count() >= 1 and {"c1", "c2"} <= lit(), timeout=10_000)
        qtbot.waitUntil(lambda: not panel.running, timeout=30_000)
        assert [(r.lab, r.status) for r in panel.history] == [("bridge-veth", "ok"), ("macvlan-bridge", "ok")]
        assert panel.history_view.table.item(1, PATH_COLUMN).text() == "macvlan bridge mode"
        panel.history_view.select_rows([0, 1])
        assert len(panel.bars.values) == 2 and all(value > 0 for value in panel.bars.values)
        assert len(panel.chart.series_names()) == 2
    finally:
        panel.shutdown()
        if window.deploy.deployed_lab:
            _deployed(window, qtbot, False)
    assert panel.targets == {}
