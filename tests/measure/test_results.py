from __future__ import annotations

import csv
import io
import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from vtopo.measure import (CpuUsage, DirectionTotals, IntervalSample, IperfOptions, RunResult, Totals, history_csv,
                           history_path, load_history, save_history)


def make_result(mbps: float = 100.0, **kw: object) -> RunResult:
    r = RunResult(source="h1", destination="h2", address="10.0.0.2", options=IperfOptions(duration_s=2),
                  lab="lab1", path="h1 - s1 - h2", **kw)  # type: ignore[arg-type]
    r.intervals = [IntervalSample(0, 1, mbps * 1e6, 1000, retransmits=2, cwnd_bytes=9000),
                   IntervalSample(1, 2, mbps * 1e6, 1000, retransmits=1, cwnd_bytes=9000)]
    r.forward = DirectionTotals(sent=Totals(2000, 2.0, mbps * 1e6, retransmits=3),
                                received=Totals(1990, 2.0, mbps * 1e6 * 0.99))
    r.cpu_host = CpuUsage(10.0, 1.0, 9.0)
    r.cpu_remote = CpuUsage(5.0, 1.0, 4.0)
    return r


def test_result_round_trips_through_json() -> None:
    r = make_result()
    again = RunResult.from_json(r.to_json())
    assert again == r
    assert again.mean_bits_per_second == pytest.approx(99e6)
    assert again.retransmits == 3


def test_csv_row_matches_the_header() -> None:
    r = make_result()
    rows = list(csv.reader(io.StringIO(history_csv([r, make_result(50)]))))
    assert rows[0] == list(RunResult.CSV_HEADER)
    assert len(rows) == 3 and all(len(row) == len(rows[0]) for row in rows)
    row = dict(zip(rows[0], rows[1]))
    assert row["mean_mbps"] == "99.000" and row["retransmits"] == "3" and row["options"] == "TCP 2s"


def test_history_save_and_load(data_home: Path) -> None:
    path = history_path("lab1")
    assert path == data_home / "histories" / "lab1.measure.json"
    assert load_history(path) == []
    runs = [make_result(), make_result(10, status="cancelled")]
    save_history(path, runs)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text())["format"] == "vtopo-measure-history"
    assert load_history(path) == runs


def test_loading_something_else_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="not a vtopo measurement history"):
        load_history(bad)


def test_options_problems_and_flags() -> None:
    assert IperfOptions().problems() == []
    assert IperfOptions(reverse=True, bidir=True).problems()
    assert IperfOptions(bitrate="fast").problems()
    o = IperfOptions(protocol="udp", duration_s=5, interval_s=0.5, parallel=4, reverse=True, bitrate="100M",
                     length="1400", window="4M")
    assert o.client_args() == ["-t", "5", "-i", "0.5", "-u", "-P", "4", "-R", "-b", "100M", "-l", "1400",
                               "-w", "4M"]
    assert o.describe() == "UDP 5s -P 4 -R -b 100M -l 1400 -w 4M"


def test_the_measure_layer_does_not_import_qt() -> None:
    code = (
        "import sys, vtopo.measure, vtopo.measure.rr_agent;"
        "bad=[m for m in sys.modules if m.startswith(('PySide6','shiboken6','vtopo.gui'))];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
