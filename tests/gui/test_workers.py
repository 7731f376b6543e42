"""A job never emits on a deleted worker: once its worker is gone, or the program exits, its next report ends it.
At exit PySide deletes every QObject Python owns while pool threads still run; the link rates' job, which reports
once a second for as long as a lab runs, then raised "Signal source has been deleted" (issue 27)."""
from __future__ import annotations

import gc
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Callable

import pytest
import shiboken6
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QGraphicsScene
from pytestqt.qtbot import QtBot

from vtopo.gui.main_window import MainWindow
from vtopo.gui.workers import GuiThreadCollector, Report, Worker

REPOSITORY = Path(__file__).parents[2]


def test_a_job_ends_at_its_next_report_once_its_worker_is_deleted(qtbot: QtBot,
                                                                 capfd: pytest.CaptureFixture[str]) -> None:
    pool = QThreadPool()
    reports: list[object] = []
    ended = threading.Event()

    def job(report: Report) -> None:
        try:
            while True:
                report(len(reports))
                time.sleep(0.005)
        finally:
            ended.set()

    worker = Worker(job)
    worker.yielded.connect(reports.append)
    worker.start(pool)
    qtbot.waitUntil(lambda: len(reports) > 3)
    shiboken6.delete(worker)
    assert ended.wait(5), "the job went on reporting to a deleted worker"
    assert pool.waitForDone(5000)
    assert "Signal source has been deleted" not in capfd.readouterr().err


def test_a_worker_its_starter_lets_go_of_still_hands_back_the_result(qtbot: QtBot) -> None:
    """The link rates' overlay keeps no reference to its worker: collected half-way, it lost the job's reports."""
    pool = QThreadPool()
    results: list[object] = []

    def start() -> None:
        worker = Worker(lambda _report: time.sleep(0.2) or "measured")
        worker.returned.connect(results.append)
        worker.start(pool)

    start()
    gc.collect()
    qtbot.waitUntil(lambda: results == ["measured"], timeout=5000)
    assert pool.waitForDone(5000)


EXITING = """
import sys, time
from PySide6.QtCore import QObject, QThreadPool
from PySide6.QtWidgets import QApplication, QMainWindow
from PySide6.QtTest import QTest
from vtopo.gui.workers import Worker

def forever(report):
    while True:
        report(time.monotonic())
        time.sleep(0.01)

app = QApplication([])
window = QMainWindow()
holder = QObject(window)
pool = QThreadPool(holder)
for _ in range(3):
    worker = Worker(forever)
    worker.yielded.connect(lambda _value: None)
    worker.start(pool)
window.show()
QTest.qWait(200)
print("leaving", flush=True)
"""


def test_the_program_exits_at_once_while_jobs_still_report() -> None:
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-c", EXITING], capture_output=True, text=True, timeout=30,
                         env={"QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(REPOSITORY / "app")})
    assert run.returncode == 0 and run.stdout.strip() == "leaving", run.stderr
    assert "Signal source has been deleted" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert time.monotonic() - started < 15


def test_a_job_frees_no_cycle_the_gui_thread_made_and_the_gui_thread_collects_it(
        make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    """A collection started on a pool thread freed canvas items, fonts and pixmaps there: the suite crashed in the
    force-directed layout of 2,000 nodes, and a thread collecting while the GUI thread made a window deadlocked."""
    make_window()
    collecting_threads: set[int] = set()

    def heard(phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            collecting_threads.add(threading.get_ident())

    freed_on: list[int] = []
    scene = QGraphicsScene()
    scene.cycle = scene  # type: ignore[attr-defined]
    weakref.finalize(scene, lambda: freed_on.append(threading.get_ident()))
    del scene
    gc.callbacks.append(heard)
    try:
        def allocate(_report: Report) -> int:
            chains = []
            for _ in range(200_000):
                chain: list[object] = []
                chain.append(chain)
                chains.append(chain)
            return len(chains)

        worker = Worker(allocate)
        results: list[object] = []
        worker.returned.connect(results.append)
        worker.start(QThreadPool.globalInstance())
        qtbot.waitUntil(lambda: results == [200_000] and freed_on != [], timeout=30_000)
    finally:
        gc.callbacks.remove(heard)
    assert collecting_threads == {threading.get_ident()}, "the job's allocations started a collection"
    assert freed_on == [threading.get_ident()]


def test_the_collector_counts_the_long_lived_objects_once_per_threshold_of_younger_collections(
        make_window: Callable[..., MainWindow]) -> None:
    """Counting the oldest generation walks every long-lived object: with a 2,000-container lab open (about a million)
    the designer did so at every tick once that generation's count passed its threshold, only to learn that a full
    collection was not due, and idled at 2.45% of a core. It still collects everything once the long-lived objects
    grew by a quarter."""
    make_window()
    collector = GuiThreadCollector.installed()
    assert collector is not None
    long_lived = [[number] for number in range(100_000)]
    walks, young_collections, full_collections = [0], [0], [0]

    def heard(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            young_collections[0] += info["generation"] == 1
            full_collections[0] += info["generation"] == 2

    def seen(_frame: object, event: str, function: object) -> None:
        if event == "c_call" and function is gc.get_objects:
            walks[0] += 1

    def tick(survivors: int) -> None:
        for _ in range(gc.get_threshold()[0] + 100):  # cycles, freed by the youngest generation's collection
            cycle: list[object] = []
            cycle.append(cycle)
        long_lived.extend([number] for number in range(survivors))
        collector.collect_due()

    gc.callbacks.append(heard)
    try:
        for _ in range(20 * gc.get_threshold()[1] * gc.get_threshold()[2]):
            tick(survivors=0)
        full_collections[0] = young_collections[0] = 0
        sys.setprofile(seen)
        for _ in range(20 * gc.get_threshold()[1] * gc.get_threshold()[2]):
            tick(survivors=0)
        sys.setprofile(None)
        assert full_collections[0] == 0
        assert 0 < walks[0] <= young_collections[0] // gc.get_threshold()[2] + 1
        while full_collections[0] == 0 and len(long_lived) < 400_000:
            tick(survivors=1000)
        assert full_collections[0] == 1, "no full collection once the long-lived objects grew by a quarter"
    finally:
        sys.setprofile(None)
        gc.callbacks.remove(heard)
