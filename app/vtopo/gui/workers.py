"""One idiom for every background job (deploy, measure, checks, lab look-ups), in the spirit of napari's
create_worker: a job runs on a pool thread and reports through signals that arrive on the GUI thread.

    worker = Worker(job)             # job(report) -> result; report(x) emits `yielded` (progress, samples)
    worker.returned.connect(...)     # the job's return value
    worker.errored.connect(...)      # the exception it raised
    worker.finished.connect(...)     # after either
    worker.start(pool)

The job never touches widgets or the live model: it gets copies, and hands results back through the signals. Once
its worker is deleted, or the program exits, a job emits nothing more: its next `report` ends it (see `Outlet`).
Nor does a job free what the GUI thread made: cycles are collected on the GUI thread only (see `GuiThreadCollector`).
"""
from __future__ import annotations

import atexit
import gc
import sys
import threading
import weakref
from typing import Any, Callable

from PySide6.QtCore import QCoreApplication, QObject, QThreadPool, QTimer, Signal, SignalInstance

Report = Callable[[Any], None]
Job = Callable[[Report], Any]
SWITCH_INTERVAL_S = 0.0002
"""How long a job may keep the interpreter once the GUI thread waits for it. Python's default, 5 ms, is paid again
at each of the many calls from Qt into Python that one frame of the canvas makes."""


COLLECTION_CHECK_MS = 500


class JobEnded(BaseException):
    """Raised by `report` once no one listens: it ends the job the way GeneratorExit ends a generator, through
    `except Exception` blocks, and is no error."""


class Outlet:
    """The way out of a job's thread into its worker's signals, closed once the worker's QObject is deleted or the
    program exits. At exit PySide deletes every QObject Python owns while pool threads still run; a job emitting
    then raised "Signal source has been deleted" (and a job that reports forever kept the exit waiting for it)."""

    _open_outlets: weakref.WeakSet[Outlet] = weakref.WeakSet()

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open = True
        Outlet._open_outlets.add(self)

    def emit(self, signal: SignalInstance, *value: object) -> bool:
        """Emit `signal` unless the outlet is closed; say whether it was."""
        with self._lock:  # held while emitting, so that close() returns only once no emit is under way
            if self._open:
                signal.emit(*value)
            return self._open

    def close(self) -> None:
        with self._lock:
            self._open = False

    @classmethod
    def close_all(cls) -> None:
        for outlet in list(cls._open_outlets):
            outlet.close()


atexit.register(Outlet.close_all)  # registered after PySide's own exit handler (QtCore is imported), so it runs first


class Worker(QObject):
    """Alive from `start` until its signals have been handled, whether or not its starter keeps it: the pool holds
    no reference to it, and a worker collected half-way lost its job's results (the link rates' job met a deleted
    worker at its next report)."""

    yielded = Signal(object)
    returned = Signal(object)
    errored = Signal(object)
    finished = Signal()
    _started: set[Worker] = set()

    def __init__(self, job: Job) -> None:
        super().__init__()
        self._job = job
        self._outlet = outlet = Outlet()
        self.destroyed.connect(outlet.close)
        self.finished.connect(self._let_go)

    def start(self, pool: QThreadPool) -> None:
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        Worker._started.add(self)
        pool.start(self._run)

    def start_alone(self) -> None:
        """Run a job that lasts as long as its window (following a lab through the agent) on a thread of its own, which
        the program's exit does not wait for: a pool's would, while the job waits for the agent's next word."""
        Worker._started.add(self)
        threading.Thread(target=self._run, name="vtopo worker", daemon=True).start()

    def _let_go(self) -> None:
        """After the other handlers of `finished`, on the GUI thread, where it is then freed."""
        QTimer.singleShot(0, lambda: Worker._started.discard(self))

    def _report(self, value: object) -> None:
        if not self._outlet.emit(self.yielded, value):
            raise JobEnded

    def _run(self) -> None:
        try:
            result = self._job(self._report)
        except JobEnded:
            return
        except Exception as error:  # handed to the GUI thread, which names what failed
            self._outlet.emit(self.errored, error)
        else:
            self._outlet.emit(self.returned, result)
        self._outlet.emit(self.finished)


def serial_pool(parent: QObject) -> QThreadPool:
    """A pool that runs its jobs one at a time, in the order they were started."""
    pool = QThreadPool(parent)
    pool.setMaxThreadCount(1)
    return pool


class GuiThreadCollector(QObject):
    """Python's cycle collector, run on the GUI thread only (as pyqtgraph and OpenCue's GUIs do). Left automatic, a
    collection runs on whichever thread happens to allocate, a job's too, and frees there the canvas items, fonts and
    pixmaps that sat in cycles: Qt then crashed, or deadlocked against the GUI thread (a force-directed layout on a
    pool thread). So automatic collection is off while the designer runs, and a timer on the GUI thread collects as
    the interpreter would have (`collect_due`)."""

    def __init__(self, app: QCoreApplication) -> None:
        super().__init__(app)
        gc.disable()
        self._long_lived = len(gc.get_objects(generation=2))
        self._young_collections_checked = 0
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.collect_due)
        self._timer.start(COLLECTION_CHECK_MS)

    @staticmethod
    def installed() -> GuiThreadCollector | None:
        app = QCoreApplication.instance()
        return None if app is None else app.findChild(GuiThreadCollector)

    @staticmethod
    def install() -> None:
        """Once per application: every window shares the interpreter's one collector."""
        app = QCoreApplication.instance()
        if app is not None and GuiThreadCollector.installed() is None:
            GuiThreadCollector(app)

    def collect_due(self) -> None:
        """Collect the oldest generation whose count passed its threshold, if any; the oldest (a full collection,
        tens of ms with a 2,000-node lab open) only once it holds a quarter more objects than after the last one,
        the interpreter's own rule. Counting the oldest generation walks every long-lived object (14 ms for a
        million): once it is found too small, it is counted again only after another threshold's worth of
        collections of the middle generation, not at every tick until a full collection comes."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        for generation in (2, 1, 0):
            if counts[generation] <= thresholds[generation]:
                continue
            if generation == 2 and not self._full_collection_due(counts[2], thresholds[2]):
                continue
            gc.collect(generation)
            if generation == 2:
                self._long_lived = len(gc.get_objects(generation=2))
                self._young_collections_checked = 0
            return

    def _full_collection_due(self, young_collections: int, threshold: int) -> bool:
        """`young_collections`: how many collections of the middle generation ran since the last full one (fewer
        than at the last count once something else collected everything)."""
        if 0 < self._young_collections_checked <= young_collections <= self._young_collections_checked + threshold:
            return False
        self._young_collections_checked = young_collections
        return len(gc.get_objects(generation=2)) - self._long_lived > self._long_lived // 4
