"""Live traffic on the canvas: each deployed link drawn wider with its load, its bits/s and packets/s in the
tooltip. A worker thread samples the kernel's counters once a second; View ▸ Link rates hides them."""
from __future__ import annotations

import math
import threading
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot
from PySide6.QtGui import QAction

from vtopo.gui.deploy_panel import DeployController
from vtopo.gui.measure_format import format_rate
from vtopo.gui.measure_link import find_deployed
from vtopo.gui.scene import TopologyScene

SAMPLE_S = 1.0
FULL_LOAD_BITS = 1e10  # 10 Gb/s draws a link at full width; the width grows with the logarithm of the rate


def load_of(bits_per_second: float) -> float:
    return min(1.0, math.log10(1 + bits_per_second) / math.log10(FULL_LOAD_BITS))


class RateSampler(QObject):
    sampled = Signal(object)  # link id -> LinkRate
    failed = Signal(str)
    finished = Signal()

    def __init__(self, lab: str) -> None:
        super().__init__()
        self._lab = lab
        self._stop = threading.Event()

    @Slot()
    def work(self) -> None:
        from vtopo.host.rates import LinkRates, RatesUnavailable  # the host layer, only once a lab is deployed

        deployed, why = find_deployed(self._lab)
        if deployed is None:
            self.failed.emit(why)
            self.finished.emit()
            return
        rates = LinkRates.of_lab(deployed.context)
        try:
            rates.sample()
            while not self._stop.wait(SAMPLE_S):
                self.sampled.emit(rates.sample())
        except RatesUnavailable as error:
            self.failed.emit(f"cannot read the interface counters of lab {self._lab}: {error}")
        finally:
            rates.close()
            self.finished.emit()

    def stop(self) -> None:
        self._stop.set()


class RateView(QObject):
    message = Signal(str)

    def __init__(self, scene: TopologyScene, deploy: DeployController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._scene = scene
        self._deploy = deploy
        self.toggle = QAction("Link &rates", self, checkable=True, checked=True)
        self.toggle.toggled.connect(self._toggled)
        self._sampler: RateSampler | None = None
        self._thread: QThread | None = None
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
        self._sampler = RateSampler(self._deploy.deployed_lab)
        self._thread = QThread(self)
        self._sampler.moveToThread(self._thread)
        self._thread.started.connect(self._sampler.work)
        self._sampler.sampled.connect(self._sampled)
        self._sampler.failed.connect(self.message)
        self._sampler.finished.connect(self._thread.quit)
        self._thread.start()

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
        if self._sampler is not None and self._thread is not None:
            self._sampler.stop()
            self._thread.quit()
            self._thread.wait()
        self._sampler = self._thread = None
        self._show({})
