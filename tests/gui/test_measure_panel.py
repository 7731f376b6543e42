"""The live iperf3 panel, driven through its widgets."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette

from vtopo.gui.measure.chart_view import PaletteChartView
from vtopo.gui.measure.form import MeasureTarget
from vtopo.gui.measure.panel import MeasurePanel
from vtopo.measure import (
    DirectionTotals,
    IntervalSample,
    IperfOptions,
    MeasureEndpoint,
    RunResult,
    Totals,
    save_history,
)
from netns_pairs import NetnsPair, netns_pair, standing_iperf3_server


@pytest.fixture
def panel(qtbot: Any) -> Iterator[MeasurePanel]:
    made = MeasurePanel()
    qtbot.addWidget(made)
    made.resize(700, 900)
    made.show()
    yield made
    made.shutdown()


@pytest.fixture(scope="module")
def pair() -> Iterator[NetnsPair]:
    with netns_pair("g", "10.252") as made:
        yield made


def fake_run(mbps: float, protocol: str = "tcp", source: str = "h1") -> RunResult:
    options = IperfOptions(protocol=protocol, duration_s=3)  # type: ignore[arg-type]
    r = RunResult(source=source, destination="h2", address="10.0.0.2", options=options, lab="lab", path="h1-s1-h2")
    r.intervals = [IntervalSample(float(t), float(t + 1), mbps * 1e6 * (1 + 0.01 * t), 1000, retransmits=t,
                                  lost_packets=t if protocol == "udp" else None,
                                  packets=100 if protocol == "udp" else None) for t in range(3)]
    udp = protocol == "udp"
    r.forward = DirectionTotals(
        Totals(3000, 3.0, mbps * 1e6, retransmits=None if udp else 3),
        Totals(3000, 3.0, mbps * 1e6, lost_packets=0 if udp else None, packets=300 if udp else None,
               lost_percent=0.0 if udp else None),
    )
    return r


def targets(p: NetnsPair) -> list[MeasureTarget]:
    return [MeasureTarget(p.a, [p.address_a]), MeasureTarget(p.b, [p.address_b])]


def test_targets_fill_the_pair_boxes(panel: MeasurePanel) -> None:
    panel.set_targets([(MeasureEndpoint("h1"), ["10.0.0.1"]), (MeasureEndpoint("h2"), ["10.0.0.2", "fd00::2"])], lab="lab")
    assert [panel.form.source_box.itemText(i) for i in range(panel.form.source_box.count())] == ["h1", "h2"]
    assert panel.form.source_box.currentText() == "h1" and panel.form.destination_box.currentText() == "h2"
    assert [panel.form.address_box.itemText(i) for i in range(panel.form.address_box.count())] == ["10.0.0.2", "fd00::2"]
    panel.form.destination_box.setCurrentText("h1")
    assert panel.form.address_box.currentText() == "10.0.0.1"


def test_bad_options_are_reported_not_run(panel: MeasurePanel, qtbot: Any) -> None:
    panel.set_targets([(MeasureEndpoint("h1"), ["10.0.0.1"]), (MeasureEndpoint("h2"), ["10.0.0.2"])])
    panel.form.bitrate_edit.setText("lots")
    with qtbot.assertNotEmitted(panel.run_started):
        assert not panel.start_run()
    assert "bitrate" in panel.status_label.text()


def test_selecting_two_history_rows_compares_them(panel: MeasurePanel, qtbot: Any, tmp_path: Path) -> None:
    history = tmp_path / "lab.measure.json"
    save_history(history, [fake_run(100), fake_run(400, source="h3"), fake_run(50, "udp")])
    panel.load_history(history)
    assert panel.history_view.table.rowCount() == 3
    assert panel.history_view.table.item(1, 6).text() == "400.0 Mb/s"
    assert panel.history_view.table.item(2, 7).text() == "0.00% loss"

    panel.history_view.select_rows([0])
    assert panel.bars.isHidden()
    assert panel.chart.point_count() == 3

    panel.history_view.select_rows([0, 1])
    assert panel.bars.isVisible()
    assert panel.bars.values == pytest.approx([100.0, 400.0])
    assert panel.chart.point_count() == 6
    assert len(panel.chart.series_names()) == 2

    png = tmp_path / "chart.png"
    assert panel.history_view.export_chart_png(png) and png.stat().st_size > 1000
    csv_path = tmp_path / "runs.csv"
    panel.history_view.export_csv(csv_path)
    assert len(csv_path.read_text().splitlines()) == 3  # the two selected runs
    panel.history_view.table.clearSelection()
    json_path = tmp_path / "runs.json"
    panel.history_view.export_json(json_path)
    assert len(json.loads(json_path.read_text())["runs"]) == 3

    saved = tmp_path / "again.json"
    panel.save_history(saved)
    other = MeasurePanel()
    qtbot.addWidget(other)
    other.load_history(saved)
    assert other.history == panel.history


@pytest.mark.privileged
def test_a_run_from_the_panel_charts_live_and_joins_the_history(
    panel: MeasurePanel, qtbot: Any, pair: NetnsPair
) -> None:
    panel.set_targets(targets(pair), lab="gui-lab", describe_path=lambda s, d, a: f"{s} - veth - {d}")
    panel.form.duration_spin.setValue(3)
    with qtbot.waitSignal(panel.run_started, timeout=2000) as started:
        qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    assert started.args == ["a", "b"]
    assert not panel.run_button.isEnabled() and panel.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: panel.chart.point_count() >= 1, timeout=5000)
    first = panel.chart.point_count()
    qtbot.waitUntil(lambda: panel.chart.point_count() > first, timeout=5000)  # it grows while running
    assert panel.running
    with qtbot.waitSignal(panel.run_finished, timeout=10000):
        pass
    assert len(panel.history) == 1
    result = panel.history[0]
    assert result.status == "ok" and result.lab == "gui-lab" and result.path == "a - veth - b"
    assert panel.history_view.table.item(0, 3).text() == "a → b"
    assert pair.pids() == set()


@pytest.mark.privileged
def test_a_vm_is_measured_against_its_standing_server(panel: MeasurePanel, qtbot: Any, pair: NetnsPair) -> None:
    with standing_iperf3_server(pair, 5298) as vm:
        panel.set_targets([MeasureTarget(pair.a, [pair.address_a]), MeasureTarget(vm, [pair.address_b])])
        panel.select_pair("a", "b")
        panel.form.duration_spin.setValue(2)
        with qtbot.waitSignal(panel.run_finished, timeout=15000):
            assert panel.start_run()
    result = panel.history[-1]
    assert result.status == "ok", result.error
    assert result.port == 5298 and result.forward is not None
    assert panel.chart.point_count() >= 2


@pytest.mark.privileged
def test_cancel_from_the_panel(panel: MeasurePanel, qtbot: Any, pair: NetnsPair) -> None:
    panel.set_targets(targets(pair))
    panel.form.duration_spin.setValue(60)
    panel.form.protocol_box.setCurrentText("UDP")
    panel.form.bitrate_edit.setText("10M")
    assert panel.start_run()
    qtbot.waitUntil(lambda: panel.chart.point_count() >= 1, timeout=5000)
    with qtbot.waitSignal(panel.run_finished, timeout=5000):
        qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    assert panel.status_label.text() == "cancelled"
    assert panel.history and panel.history[-1].status == "cancelled"
    assert panel.run_button.isEnabled()
    assert pair.pids() == set()


@pytest.mark.privileged
def test_unreachable_destination_is_shown(panel: MeasurePanel, qtbot: Any, pair: NetnsPair) -> None:
    panel.set_targets(targets(pair))
    panel.form.address_box.setCurrentText("10.77.0.1")
    with qtbot.waitSignal(panel.run_finished, timeout=5000):
        assert panel.start_run()
    assert "a has no route to 10.77.0.1" in panel.status_label.text()
    assert panel.history == []


def test_the_charts_follow_a_dark_palette(panel: MeasurePanel) -> None:
    def corner_lightness(view: PaletteChartView) -> int:
        return view.grab().toImage().pixelColor(12, 12).lightness()

    views = panel.findChildren(PaletteChartView)
    assert len(views) >= 2
    for view in views:
        view.setPalette(QPalette(QColor("#2b2d30")))
        assert corner_lightness(view) < 100
        view.setPalette(QPalette(QColor("#f2f3f5")))
        assert corner_lightness(view) > 150
