"""Experiment results and validation, without a deployed lab: statistics, ratios, CSV, JSON, the PNG chart."""
from __future__ import annotations

import csv
import io as text_io
import json
import math

import pytest

from vtopo.experiment.chart import png_of
from vtopo.experiment.results import Cell, ExperimentResult, Ratio
from vtopo.lab import expectation_problems, registry
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

MACVLAN_VS_VETH = TOPOLOGIES / "macvlan-vs-veth.vtopo"


def _result() -> ExperimentResult:
    veth = Cell("veth+bridge/tcp", "veth+bridge", "tcp", "iperf", "Mbit/s", values=[900.0, 1000.0, 1100.0])
    macvlan = Cell("macvlan bridge/tcp", "macvlan bridge", "tcp", "iperf", "Mbit/s", values=[1200.0, 1200.0])
    rr = Cell("veth+bridge/rr", "veth+bridge", "rr", "rr", "transactions/s", values=[20000.0])
    return ExperimentResult("macvlan-vs-veth", "2026-01-01T00:00:00+00:00", {"kernel": "6.1", "vhost-net": "no"},
                            repeats=3, warmup=1, cells=[veth, macvlan, rr],
                            ratios=[Ratio("macvlan vs veth", macvlan.name, veth.name, 1.2, "94.033 / 94.016 = 1.000")])


def test_cell_statistics():
    veth = _result().cells[0]
    assert (veth.mean, veth.stdev, veth.minimum, veth.maximum) == (1000.0, 100.0, 900.0, 1100.0)
    assert _result().cells[2].stdev == 0.0
    empty = Cell("x/y", "x", "y", "iperf", "Mbit/s")
    assert math.isnan(empty.mean) and not empty.complete


def test_table_shows_each_cell_the_ratio_beside_the_published_figure_and_the_host():
    table = _result().table()
    assert "veth+bridge/tcp     Mbit/s" in table and "1,000.0" in table and "100.0" in table
    assert "macvlan vs veth: macvlan bridge/tcp / veth+bridge/tcp = 1.200   (published: 94.033 / 94.016 = 1.000)" in table
    assert table.splitlines()[-1] == "host: kernel 6.1, vhost-net no"


def test_csv_and_json_carry_the_figures():
    result = _result()
    rows = list(csv.reader(text_io.StringIO(result.to_csv())))
    assert rows[0][:8] == ["cell", "pair", "test", "tool", "unit", "runs", "mean", "stdev"]
    assert rows[1][:8] == ["veth+bridge/tcp", "veth+bridge", "tcp", "iperf", "Mbit/s", "3", "1000", "100"]
    assert ["macvlan vs veth", "macvlan bridge/tcp", "veth+bridge/tcp", "1.2", "94.033 / 94.016 = 1.000"] in rows
    data = json.loads(result.to_json())
    assert data["cells"][1]["mean"] == 1200.0 and data["host"]["kernel"] == "6.1" and result.complete


def test_the_chart_is_a_png_drawn_without_qt():
    assert png_of(_result())[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_new_lab_has_a_full_matrix_and_valid_comparisons():
    topology = io.load(MACVLAN_VS_VETH)
    assert expectation_problems(topology, registry()) == []
    assert len(topology.experiment.cells()) == 6
    assert topology.experiment.comparisons[0].cell == "macvlan bridge/tcp"


@pytest.mark.parametrize("change, message", [
    (lambda e: e["tests"][0]["options"].update(speed=1), "test tcp at $.experiment.tests[0].options.speed: iperf has "
                                                         "no option 'speed'"),
    (lambda e: e["tests"][1]["options"].update(python="/tmp/evil"), "test tcp_rr at $.experiment.tests[1].options."
                                                                     "python: rr has no option 'python'"),
    (lambda e: e["tests"][0]["options"].update(duration_s="5"), "test tcp at $.experiment.tests[0].options."
                                                               "duration_s: duration_s must be a number"),
    (lambda e: e["tests"][0]["options"].update(duration_s=0), "test tcp at $.experiment.tests[0].options: duration "
                                                             "must be between 1 s and 1 day"),
    (lambda e: e["tests"][0].update(tool="netperf"), "test tcp at $.experiment.tests[0].tool: tool must be one of"),
    (lambda e: e["pairs"][0].update(source="nowhere"), "pair loopback at $.experiment.pairs[0].source: source names "
                                                       "node 'nowhere'"),
    (lambda e: e["comparisons"][0].update(cell="veth/udp"), "comparison macvlan bridge vs veth+bridge at "
                                                            "$.experiment.comparisons[0].cell: cell 'veth/udp' is not"),
])
def test_bad_experiments_are_reported_by_name_and_field(change, message):
    document = json.loads(MACVLAN_VS_VETH.read_text())
    change(document["experiment"])
    problems = [str(p) for p in expectation_problems(io.from_document(document), registry())]
    assert any(p.startswith(f"error: {message}") for p in problems), problems


def test_a_quick_run_caps_durations_and_ping_counts():
    from vtopo.experiment.runner import shortened
    from vtopo.model.expectations import Test

    assert shortened(Test("tcp", "iperf", {"duration_s": 5, "length": "64"}), 1) == {"duration_s": 1, "length": "64"}
    assert shortened(Test("rr", "rr", {"duration_s": 3}), 1) == {"duration_s": 1.0}
    assert shortened(Test("ping", "ping", {"count": 20}), 1) == {"count": 5}
    assert shortened(Test("tcp", "iperf", {"duration_s": 5}), None) == {"duration_s": 5}


def test_a_failed_run_gives_no_figure():
    from types import SimpleNamespace

    from vtopo.experiment.runner import value_of

    assert math.isnan(value_of("iperf", SimpleNamespace(status="failed", mean_bits_per_second=1e9)))
    assert value_of("iperf", SimpleNamespace(status="ok", mean_bits_per_second=2e9)) == 2000.0
    assert value_of("ping", SimpleNamespace(status="ok", rtt_avg_ms=0.05)) == 0.05
    assert math.isnan(value_of("rr", SimpleNamespace(status="ok", transactions_per_second=0)))
