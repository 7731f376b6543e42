"""Experiment results and validation, without a deployed lab: statistics, ratios and how far they hold between
rounds, comparisons this host cannot make, CSV, JSON, the PNG chart."""
from __future__ import annotations

import csv
import io as text_io
import json
import math

import pytest

from vtopo.experiment.chart import png_of
from vtopo.experiment.results import Cell, ExperimentResult, Ratio, merged
from vtopo.lab import expectation_problems, registry
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

MACVLAN_VS_VETH = TOPOLOGIES / "macvlan-vs-veth.vtopo"


def _result() -> ExperimentResult:
    veth = Cell("veth+bridge/tcp", "veth+bridge", "tcp", "iperf", "Mbit/s", values=[900.0, 1000.0, 1100.0],
                round_means=[1000.0])
    macvlan = Cell("macvlan bridge/tcp", "macvlan bridge", "tcp", "iperf", "Mbit/s", values=[1200.0, 1200.0],
                   round_means=[1200.0])
    rr = Cell("veth+bridge/rr", "veth+bridge", "rr", "rr", "transactions/s", values=[20000.0], round_means=[20000.0])
    return ExperimentResult("macvlan-vs-veth", "2026-01-01T00:00:00+00:00", {"kernel": "6.1", "vhost-net": "no"},
                            repeats=3, warmup=1, cells=[veth, macvlan, rr],
                            ratios=[Ratio("macvlan vs veth", macvlan.name, veth.name, 1.2, "94.033 / 94.016 = 1.000",
                                          [1.2])])


def _round(tap: list[float], macvtap: list[float], *, why: str = "") -> ExperimentResult:
    """One round of a two-cell experiment, as the runner leaves it."""
    cells = [Cell("tap/tcp", "tap", "tcp", "iperf", "Mbit/s", values=tap),
             Cell("macvtap/tcp", "macvtap", "tcp", "iperf", "Mbit/s", values=macvtap)]
    for cell in cells:
        cell.end_round(0)
    value = math.nan if why else cells[1].mean / cells[0].mean
    return ExperimentResult("vm-tap-vs-macvtap", "2026-01-01T00:00:00+00:00", {"kernel": "6.1"}, repeats=len(tap),
                            warmup=0, cells=cells, ratios=[Ratio("macvtap vs tap", "macvtap/tcp", "tap/tcp", value,
                                                                 "93.1 / 93.1 Mb/s = 1.00", [value], why)])


def test_cell_statistics():
    veth = _result().cells[0]
    assert (veth.mean, veth.stdev, veth.minimum, veth.maximum) == (1000.0, 100.0, 900.0, 1100.0)
    assert _result().cells[2].stdev == 0.0
    empty = Cell("x/y", "x", "y", "iperf", "Mbit/s")
    assert math.isnan(empty.mean) and not empty.complete


def test_table_shows_each_cell_the_ratio_beside_the_published_figure_and_the_host():
    table = _result().table()
    assert "veth+bridge/tcp     Mbit/s" in table and "1,000.0" in table and "100.0" in table
    assert ("macvlan vs veth: macvlan bridge/tcp / veth+bridge/tcp = 1.200 (one round: how far it holds is not "
            "measured)   (published: 94.033 / 94.016 = 1.000)") in table
    assert table.splitlines()[-1] == "host: kernel 6.1, vhost-net no"


def test_csv_and_json_carry_the_figures():
    result = _result()
    rows = list(csv.reader(text_io.StringIO(result.to_csv())))
    assert rows[0][:8] == ["cell", "pair", "test", "tool", "unit", "runs", "mean", "stdev"]
    assert rows[1][:8] == ["veth+bridge/tcp", "veth+bridge", "tcp", "iperf", "Mbit/s", "3", "1000", "100"]
    assert rows[1][10] == "1000"  # the round means
    assert ["macvlan vs veth", "macvlan bridge/tcp", "veth+bridge/tcp", "1.2", "1.2",
            "1.200 (one round: how far it holds is not measured)", "94.033 / 94.016 = 1.000"] in rows
    data = json.loads(result.to_json())
    assert data["cells"][1]["mean"] == 1200.0 and data["host"]["kernel"] == "6.1" and result.complete


def test_rounds_merge_into_one_result_with_the_spread_of_each_cell_and_ratio():
    result = merged([_round([500.0, 520.0], [600.0, 640.0]), _round([400.0, 400.0], [420.0, 460.0]),
                     _round([450.0], [495.0])])
    tap, macvtap = result.cells
    assert result.rounds == 3 and tap.values == [500.0, 520.0, 400.0, 400.0, 450.0]
    assert tap.round_means == [510.0, 400.0, 450.0] and macvtap.round_means == [620.0, 440.0, 495.0]
    ratio = result.ratios[0]
    assert ratio.rounds == pytest.approx([620 / 510, 1.1, 1.1])
    assert ratio.value == pytest.approx(macvtap.mean / tap.mean)
    assert not ratio.no_difference and ratio.verdict() == f"{ratio.value:.3f} (1.100–1.216 over 3 rounds)"
    table = result.table()
    assert "round means" in table.splitlines()[0] and "400.0–510.0" in table
    assert "macvtap vs tap: macvtap/tcp / tap/tcp = 1.1" in table and result.complete


def test_a_ratio_whose_rounds_fall_on_both_sides_of_one_is_no_difference_measurable_here():
    """The tap/macvtap runs of the reference page under TCG: 0.57, then 1.21, then 0.95."""
    result = merged([_round([700.0], [399.0]), _round([500.0], [605.0]), _round([600.0], [570.0])])
    ratio = result.ratios[0]
    assert ratio.rounds == pytest.approx([0.57, 1.21, 0.95]) and ratio.no_difference
    assert ratio.verdict() == "no difference measurable here (0.570–1.210 over 3 rounds)"
    assert "macvtap vs tap: macvtap/tcp / tap/tcp = no difference measurable here (0.570–1.210 over 3 rounds)   " \
           "(published: 93.1 / 93.1 Mb/s = 1.00)" in result.table()
    data = json.loads(result.to_json())["ratios"][0]
    assert data["no_difference"] and data["verdict"] == ratio.verdict() and data["low"] == pytest.approx(0.57)


def test_a_comparison_this_host_cannot_make_gives_no_ratio_but_why():
    why = "neither guest uses vhost-net (this host's kernel has no vhost-net)"
    result = merged([_round([500.0], [900.0], why=why), _round([510.0], [500.0], why=why)])
    ratio = result.ratios[0]
    assert math.isnan(ratio.value) and ratio.verdict() == f"not measurable here: {why}"
    line = next(line for line in result.table().splitlines() if line.startswith("macvtap vs tap"))
    assert line == f"macvtap vs tap: macvtap/tcp / tap/tcp = not measurable here: {why}   (published: 93.1 / 93.1 " \
                   "Mb/s = 1.00)"
    assert result.complete, "a comparison that cannot be made is said, not a failed run"


@pytest.mark.parametrize("kernel, von_fd, voff_fd, why", [
    (False, False, False, "neither guest uses vhost-net (this host's kernel has no vhost-net)"),
    (True, False, False, "neither guest uses vhost-net (QEMU, pid 101, does not hold /dev/vhost-net)"),
    (True, True, True, "both guests use vhost-net"),
    (True, True, False, ""),  # the difference is made: a ratio
    (True, None, False, ""),  # a member's client cannot see root's QEMU: it cannot tell, so the ratio stands
])
def test_whether_the_host_makes_the_vhost_difference(kernel, von_fd, voff_fd, why):
    from vtopo.experiment.conditions import vhost_unmade
    from vtopo.host.vhost import VhostState

    von = VhostState("qemu", 101, von_fd, (), (), kernel, asked=True)
    voff = VhostState("qemu", 102, voff_fd, (), (), kernel, asked=False)
    assert vhost_unmade([[von], [voff]]) == why
    assert vhost_unmade([[voff], [von]]) == why
    assert vhost_unmade([[von], [von]]) == "", "both asked alike: the comparison is about something else"
    assert vhost_unmade([[], [voff]]) == "", "a pair without a VM"


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


@pytest.mark.parametrize("options, message", [
    ({"link": "r1"}, "test r1-r3 down at $.experiment.tests[0].options: link must name the two ends of a link, as in "
                     "\"r1 r3\" or \"r1:eth1 r3:eth1\", not 'r1'"),
    ({"link": "r1 r9"}, "test r1-r3 down at $.experiment.tests[0].options.link: link names node 'r9', which is not in "
                        "the lab"),
    ({"link": "r1 r3", "interval_s": 0.0001}, "test r1-r3 down at $.experiment.tests[0].options: interval must be "
                                              "between 0.002 s and 1 s"),
])
def test_a_bad_reconvergence_test_is_reported_by_name_and_field(options, message):
    document = json.loads((TOPOLOGIES / "ospf-reconvergence.vtopo").read_text())
    document["experiment"]["tests"][0]["options"] = options
    problems = [str(p) for p in expectation_problems(io.from_document(document), registry())]
    assert any(p.startswith(f"error: {message}") for p in problems), problems


def test_the_reconvergence_lab_is_valid():
    assert expectation_problems(io.load(TOPOLOGIES / "ospf-reconvergence.vtopo"), registry()) == []


def test_a_quick_run_caps_durations_and_ping_counts():
    from vtopo.experiment.runner import shortened
    from vtopo.model.measurements import Test

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
