"""Live traffic on the canvas: each deployed link drawn wider with its load, its bits/s and packets/s in the
tooltip. A worker job has the agent sample the kernel's counters once a second; View ▸ Link rates hides them."""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Iterator

from PySide6.QtCore import QObject, QThreadPool, Signal
from PySide6.QtGui import QAction

from vtopo.gui.canvas.scene import TopologyScene
from vtopo.gui.measure.format import format_rate
from vtopo.gui.panels.deploy import DeployController
from vtopo.gui.workers import Report, Worker
from vtopo.reports import LinkRate, LinkTotals, RateMeter

SAMPLE_S = 1.0
FULL_LOAD_BITS = 1e10  # 10 Gb/s draws a link at full width; the width grows with the logarithm of the rate
LOAD_STEPS = 40  # the width grows in steps: a link whose rate wanders within one is not drawn again


def load_of(bits_per_second: float) -> float:
    return round(min(1.0, math.log10(1 + bits_per_second) / math.log10(FULL_LOAD_BITS)) * LOAD_STEPS) / LOAD_STEPS


class RateSampling:
    """The job: reports each link's LinkRate once a second until `stop()`. The agent reads the counters (a member of
    the group cannot enter the lab's namespaces); in a lab spread over sites, each site's agent those of its links."""

    def __init__(self, lab: str) -> None:
        self._lab = lab
        self._stop = threading.Event()

    def __call__(self, report: Report) -> None:
        meter = RateMeter()
        for totals in self._readings():
            if self._stop.is_set():
                return
            report(meter.rates(totals, time.monotonic()))

    def _readings(self) -> Iterator[LinkTotals]:
        from vtopo.client.agent_client import AgentError, AgentRefused, AgentUnavailable
        from vtopo.sites.spread_operations import SitesOperator
        from vtopo.sites.spread import SitesFailed

        try:
            yield from SitesOperator().link_counters(self._lab, SAMPLE_S)
        except (AgentError, AgentRefused, AgentUnavailable, SitesFailed) as error:
            raise LookupError(str(error)) from error

    def stop(self) -> None:
        """The job ends at its next reading, within SAMPLE_S."""
        self._stop.set()


class RateView(QObject):
    message = Signal(str)

    def __init__(self, scene: TopologyScene, deploy: DeployController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._scene = scene
        self._deploy = deploy
        self.toggle = QAction("Link &rates", self, checkable=True, checked=True)
        self.toggle.toggled.connect(self._toggled)
        self._pool = QThreadPool(self)
        self._sampling: RateSampling | None = None
        self.latest: dict[str, LinkRate] = {}
        self._lab = ""  # the lab sampled
        deploy.busy_changed.connect(self._deploy_busy)
        deploy.states_changed.connect(self._lab_changed)

    def _toggled(self, on: bool) -> None:
        self._show(self.latest if on else {})

    def _deploy_busy(self, busy: bool) -> None:
        if not busy:
            self.follow()

    def _lab_changed(self) -> None:
        """A lab found deployed (by a read of its state) or gone, without a job of this window's."""
        if self._deploy.deployed_lab != self._lab and not self._deploy.busy:
            self.follow()

    def follow(self) -> None:
        """Sample the lab that is deployed now (or stop sampling when none is)."""
        self.shutdown()
        self._lab = self._deploy.deployed_lab
        if not self._lab:
            return
        self._sampling = sampling = RateSampling(self._deploy.deployed_lab)
        worker = Worker(sampling)
        worker.yielded.connect(lambda rates: self._sampled(sampling, rates))
        worker.errored.connect(lambda error: self._failed(sampling, error))
        worker.start(self._pool)

    def _failed(self, sampling: RateSampling, error: object) -> None:
        if sampling is self._sampling:
            self.message.emit(str(error))

    def _sampled(self, sampling: RateSampling, rates: dict[str, LinkRate]) -> None:
        if sampling is not self._sampling:  # a job stopped since, ending at its next reading
            return
        changed = {link_id for link_id in rates.keys() | self.latest.keys()
                   if rates.get(link_id) != self.latest.get(link_id)}
        self.latest = rates
        if self.toggle.isChecked():
            self._show(rates, changed)

    def _show(self, rates: dict[str, LinkRate], links: Iterable[str] | None = None) -> None:
        """Draw `links` (every link: None) with their rates; an idle lab's sample changes none."""
        for link_id in self._scene.links if links is None else links:
            item = self._scene.links.get(link_id)
            if item is None:
                continue
            rate = rates.get(link_id)
            item.set_load(load_of(rate.bits_per_second) if rate else 0.0)
            tip = f"{format_rate(rate.bits_per_second)}, {rate.packets_per_second:,.0f} packets/s" if rate else ""
            if tip != item.toolTip():
                item.setToolTip(tip)

    def shutdown(self) -> None:
        """Stop sampling; the job ends by itself at its next reading (its readings are no longer shown)."""
        if self._sampling is not None:
            self._sampling.stop()
        self._sampling = None
        self.latest = {}
        self._show({})
