"""One idiom for every background job (deploy, measure, checks, lab look-ups), in the spirit of napari's
create_worker: a job runs on a pool thread and reports through signals that arrive on the GUI thread.

    worker = Worker(job)             # job(report) -> result; report(x) emits `yielded` (progress, samples)
    worker.returned.connect(...)     # the job's return value
    worker.errored.connect(...)      # the exception it raised
    worker.finished.connect(...)     # after either
    worker.start(pool)

The job never touches widgets or the live model: it gets copies, and hands results back through the signals.
"""
from __future__ import annotations

import sys
from typing import Any, Callable

from PySide6.QtCore import QObject, QThreadPool, Signal

Report = Callable[[Any], None]
Job = Callable[[Report], Any]
SWITCH_INTERVAL_S = 0.0002
"""How long a job may keep the interpreter once the GUI thread waits for it. Python's default, 5 ms, is paid again
at each of the many calls from Qt into Python that one frame of the canvas makes."""


class Worker(QObject):
    yielded = Signal(object)
    returned = Signal(object)
    errored = Signal(object)
    finished = Signal()

    def __init__(self, job: Job) -> None:
        super().__init__()
        self._job = job

    def start(self, pool: QThreadPool) -> None:
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        pool.start(self._run)

    def _run(self) -> None:
        try:
            result = self._job(self.yielded.emit)
        except Exception as error:  # handed to the GUI thread, which names what failed
            self.errored.emit(error)
        else:
            self.returned.emit(result)
        finally:
            self.finished.emit()


def serial_pool(parent: QObject) -> QThreadPool:
    """A pool that runs its jobs one at a time, in the order they were started."""
    pool = QThreadPool(parent)
    pool.setMaxThreadCount(1)
    return pool
