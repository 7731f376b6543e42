"""Iterates one iperf3 run in a worker thread; the panel hears each sample through a signal."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

from vtopo.measure import IperfRun, MeasureError

RunnerFactory = Callable[..., IperfRun]
"""Makes the run: (source Endpoint, destination Endpoint, address, IperfOptions, lab=, path=) -> IperfRun."""


class MeasureWorker(QObject):
    """Iterates one run in its thread and reports each sample, then the result or the failure."""

    sample = Signal(object)
    done = Signal(object)
    failed = Signal(str, object)

    def __init__(self, run: IperfRun) -> None:
        super().__init__()
        self.measurement = run

    @Slot()
    def work(self) -> None:
        try:
            for sample in self.measurement:
                self.sample.emit(sample)
        except MeasureError as e:
            self.failed.emit(str(e), self.measurement.result if self.measurement.has_result else None)
            return
        self.done.emit(self.measurement.result)
