"""Live traffic on the canvas: each deployed link drawn wider with its load, its bits/s and packets/s in the
tooltip. A worker job samples the kernel's counters once a second; View ▸ Link rates hides them."""
from __future__ import annotations

import math
import threading
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal
from PySide6.QtGui import QAction

from vtopo.gui.canvas.scene import TopologyScene
from vtopo.gui.measure.controller import find_deployed
from vtopo.gui.measure.format import format_rate
from vtopo.gui.panels.deploy import DeployController
from vtopo.gui.workers import Report, Worker

SAMPLE_S = 1.0
FULL_LOAD_BITS = 1e10  # 10 Gb/s draws a link at full width; the width grows with the logarithm of the rate


def load_of(bits_per_second: float) -> float:
    return min(1.0, math.log10(1 + bits_per_second) / math.log10(FULL_LOAD_BITS))


class RateSampling:
    """The job: reports each link's LinkRate once a second until `stop()`."""

    def __init__(self, lab: str) -> None:
        self._lab = lab
        self._stop = threading.Event()

    def __call__(self, report: Report) -> None:
        from vtopo.host.rates import LinkRates, RatesUnavailable  # the host layer, only once a lab is deployed

        deployed, why = find_deployed(self._lab)
        if deployed is None:
            raise LookupError(why)
        rates = LinkRates.of_lab(deployed.context)
        try:
            rates.sample()
            while not self._stop.wait(SAMPLE_S):
                report(rates.sample())
        except RatesUnavailable as error:
            raise LookupError(f"cannot read the interface counters of lab {self._lab}: {error}") from error

    def stop(self) -> None:
        self._stop.set()


class RateView(QObject):
    message = Signal(str)

    def __init__(self, scene: TopologyScene, deploy: DeployController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._scene = scene
        self._deploy = deploy
        self.toggle = QAction("Link &rates", self, checkable=True, checked=True)
        self.toggle.setShortcut("Ctrl+Shift+T")
        self.toggle.toggled.connect(self._toggled)
        self._pool = QThreadPool(self)
        self._sampling: RateSampling | None = None
        self.latest: dict[str, Any] = {}
        deploy.busy_changed.connect(self._deploy_busy)

    def _toggled(self, on: bool) -> None:
        self._show(self.latest if on else {})

    def _deploy_busy(self, busy: bool) -> None:
        if not busy:
            self.follow()

    def follow(self) -> None:
        """Sample the lab that is deployed now (or stop sampling when none is)."""
        self.shutdown()
        if not self._deploy.deployed_lab:
            return
        self._sampling = RateSampling(self._deploy.deployed_lab)
        worker = Worker(self._sampling)
        worker.yielded.connect(self._sampled)
        worker.errored.connect(self._failed)
        worker.start(self._pool)

    def _failed(self, error: object) -> None:
        self.message.emit(str(error))

    def _sampled(self, rates: dict[str, Any]) -> None:
        self.latest = rates
        if self.toggle.isChecked():
            self._show(rates)

    def _show(self, rates: dict[str, Any]) -> None:
        for link_id, item in self._scene.links.items():
            rate = rates.get(link_id)
            item.set_load(load_of(rate.bits_per_second) if rate else 0.0)
            item.setToolTip(f"{format_rate(rate.bits_per_second)}, {rate.packets_per_second:,.0f} packets/s"
                            if rate else "")

    def shutdown(self) -> None:
        if self._sampling is not None:
            self._sampling.stop()
            self._pool.waitForDone()
        self._sampling = None
        self.latest = {}
        self._show({})
