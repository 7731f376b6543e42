"""The designer under a flood: how long its GUI thread stalls while a capture lists a 10 s flood at 10,000
packets/s, against the same flood with no capture open, in the same run. Prints figures (the issue's budget is
50 ms, asserted by tests/gui/test_capture_dock.py); asserts no times. Run as root: QT_QPA_PLATFORM=offscreen pytest tests/benchmarks/test_capture_gui_bench.py -s
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox

from benchmarks.report import machine_facts
from floods import TICK_MS, PacedFlood, TickGaps
from vtopo.deployed import DeployedLab
from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels.deploy import load_deployer
from vtopo.lab import registry
from vtopo.resources import TOPOLOGIES

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

BUDGET_MS = 50
PACKETS_PER_S = 10_000


@contextmanager
def deployed_window(qtbot: Any, tmp_path: Path) -> Iterator[MainWindow]:
    """bridge-veth open in the designer and deployed from it; destroyed afterwards."""
    window = MainWindow(registry(), QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                        tmp_path / "autosave", load_deployer)
    assert window.files.open_path(TOPOLOGIES / "bridge-veth.vtopo", as_template=True)
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: not window.deploy.busy, timeout=30_000)  # the status read at start
    window.deploy.deploy()
    try:
        qtbot.waitUntil(lambda: not window.deploy.busy, timeout=120_000)
        assert window.deploy.deployed_lab == "bridge-veth", window.log.toPlainText()[-500:]
        yield window
    finally:
        window.capture.shutdown()
        qtbot.waitUntil(lambda: not window.deploy.busy, timeout=120_000)
        window.deploy.destroy()
        qtbot.waitUntil(lambda: not window.deploy.busy and not window.deploy.deployed_lab, timeout=120_000)
        window.analyzer.shutdown()
        window.deploy.wait()
        window.close()


def flood_gaps(qtbot: Any, window: MainWindow) -> tuple[TickGaps, float]:
    """The GUI thread's ticks while c1 floods c2 with UDP, and the packets/s the flood put on the wire."""
    lab = DeployedLab.find(window.editor.topology.name)
    with TickGaps() as ticks, PacedFlood(lab.command_in, "c1", "c2", "10.0.0.2", PACKETS_PER_S) as flood:
        qtbot.waitUntil(lambda: not flood.running, timeout=30_000)
        rate = flood.packets_per_s()
    return ticks, rate


def test_gui_stall_under_a_flood_with_a_capture_open(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     ) -> None:
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    with deployed_window(qtbot, tmp_path) as window:
        qtbot.wait(1000)  # the designer settles after the deploy (its states read back, the first rates)
        without, rate_without = flood_gaps(qtbot, window)
        tab = window.capture.capture("c1:eth0")
        qtbot.waitUntil(lambda: tab.target is not None, timeout=10_000)
        with_capture, rate_with = flood_gaps(qtbot, window)
        qtbot.wait(1500)  # the agent's last counters
        status, rows = tab.status.text(), len(tab.table.rows)
    print(f"\n10 s UDP flood c1 -> c2 on bridge-veth at {rate_with:,.0f} packets/s ({rate_without:,.0f} without the "
          f"capture), gaps between the GUI thread's {TICK_MS} ms ticks (budget {BUDGET_MS} ms; {machine_facts()}):")
    print(f"  with the capture listing it: {with_capture.describe()}")
    print(f"  baseline, no capture open:   {without.describe()}")
    print(f"  ratio of the longest gaps: {with_capture.longest / without.longest:.2f}")
    print(f"  {status}; {rows} rows kept")
    assert rows
