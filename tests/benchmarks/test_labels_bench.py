"""Zooming in on a class-sized lab: the designer places every link's labels, those in view first, a turn of the event
loop at a time. Prints; asserts no times.

COUNT containers on one bridge (a switch of COUNT ports: each label there is placed among the labels of all the other
links at the bridge), against a ring of as many containers and links (each node with two links) in the same run:
the time until every label has its place, the CPU it took, and the longest turn of the event loop meanwhile (how
long the window did not answer; target: 16 ms, a frame): the zoom's own turn (the zoom and the first paint of the
view zoomed in), and the longest of the turns after it, which place the labels and paint them.
Run: QT_QPA_PLATFORM=offscreen pytest tests/benchmarks/test_labels_bench.py -s
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from benchmarks.report import machine_facts, write_fragment
from benchmarks.test_designer_live_bench import ROW, SPACING, two_bridges
from benchmarks.test_deploy_bench import address
from vtopo.gui.main_window import MainWindow
from vtopo.lab import registry
from vtopo.model.topology import Endpoint, Interface, Link, Node, Position, Topology

COUNT = 1000

pytestmark = pytest.mark.benchmark


def ring(count: int) -> Topology:
    """`count` containers laid out as two_bridges lays them, each linked to the next."""
    topology = Topology(name=f"ring{count}", prefix="rg")
    for i in range(count):
        topology.add_node(Node(id=f"c{i}", name=f"c{i}", kind="container",
                               position=Position(i % ROW * SPACING, 4 * SPACING + i // ROW * SPACING)))
    for i in range(count):
        after = (i + 1) % count
        topology.add_link(Link(id=f"l{i}", a=Endpoint(f"c{i}", "eth0", Interface(addresses=[address(2 * i)])),
                               b=Endpoint(f"c{after}", "eth1", Interface(addresses=[address(2 * i + 1)]))))
    return topology


def zoomed_in(qtbot: Any, tmp_path: Path, topology: Topology) -> tuple[float, float, float, float]:
    """Open `topology` showing the whole lab, zoom in to 100%: the seconds until every link's labels are placed,
    the CPU seconds, the zoom's own turn of the event loop and the longest turn after it, in ms."""
    window = MainWindow(registry(), QSettings(str(tmp_path / f"{topology.name}.ini"), QSettings.Format.IniFormat),
                        tmp_path / "autosave", lambda: (None, "benchmark"))
    qtbot.addWidget(window)
    window.resize(1200, 900)
    window.editor.set_topology(topology)
    window.show()
    qtbot.waitExposed(window)
    window.view.fit_to_view()
    qtbot.waitUntil(lambda: not window.analyzer.pending, timeout=120_000)
    links = window.editor.scene.links.values()
    started, cpu = time.perf_counter(), time.process_time()
    window.view.reset_zoom()
    QApplication.processEvents()
    last = time.perf_counter()
    zoom, longest = last - started, 0.0
    while not all(link.placed for link in links):
        QApplication.processEvents()
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    placed_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu
    window.close()
    return placed_s, cpu_s, zoom * 1000, longest * 1000


def test_labels_of_a_switch_with_a_thousand_ports_are_placed_without_stalling(qtbot: Any, tmp_path: Path) -> None:
    facts = machine_facts()
    switch = zoomed_in(qtbot, tmp_path, two_bridges(COUNT))
    baseline = zoomed_in(qtbot, tmp_path, ring(COUNT))
    names = ("until every label is placed", "CPU", "the zoom's own turn of the event loop",
             "longest turn of the event loop after it")
    units = ("s", "s", "ms", "ms")
    lines = ["| | one bridge, 1,000 ports | a ring | ratio |", "|---|---|---|---|",
             *(f"| {name} | {ours:.2f} {unit} | {plain:.2f} {unit} | {ours / plain:.1f} |"
               for name, ours, plain, unit in zip(names, switch, baseline, units))]
    print(f"\nlabels of {COUNT} links zoomed in; {facts}\n" + "\n".join(lines))
    write_fragment("labels", "\n".join([
        "### Zooming in on a switch of 1,000 ports", "", facts, "",
        f"{COUNT} containers on one bridge, opened showing the whole lab, then zoomed in to 100%: the designer places "
        "each link's labels clear of the other labels at its nodes, those in view first, a turn of the event loop at "
        f"a time. Against a ring of {COUNT} containers in the same run (two links at each node). Target: no turn "
        "longer than a frame (16 ms); the zoom's own turn (the zoom, and the first paint zoomed in) is shown apart "
        "from the turns that place the labels.", "", *lines]))
