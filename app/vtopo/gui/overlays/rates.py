"""Live traffic on the canvas: each deployed link drawn wider with its load, its bits/s and packets/s in its
tooltip (written when it is asked for). A worker job follows the rates the agent reads from the kernel's counters once a second, told only when
they change, so an idle lab costs nothing here; View ▸ Link rates hides them, and while they are hidden the agent reads
no counters."""
from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction

from vtopo.gui.canvas.scene import TopologyScene
from vtopo.gui.panels.deploy import DeployController
from vtopo.gui.workers import Report, Worker
from vtopo.reports import LinkRate

if TYPE_CHECKING:  # the agent's client loads when a lab is deployed
    from vtopo.client.agent_client import Stream

SAMPLE_S = 1.0
FULL_LOAD_BITS = 1e10  # 10 Gb/s draws a link at full width; the width grows with the logarithm of the rate
LOAD_STEPS = 10  # the width grows a step for each tenfold rate (the tooltip tells the rate itself)
LOAD_KEPT = 0.75  # a link keeps its width while its rate strays less than this many steps from the width's own
HOLD_S = 3.0
"""A link drawn narrower only once its rate stayed lower this long: the router solicitations an idle lab's links
carry come every few seconds, and each gap would draw the whole lab again, twice."""


@functools.lru_cache(maxsize=1024)  # a packet flooded through a switch gives its thousand links one rate
def load_of(bits_per_second: float, drawn: float = 0.0) -> float:
    """The load a link is drawn with at `bits_per_second`, drawn now with `drawn`. A rate that wanders across a
    step's bound keeps the width it had (router solicitations flooded to a thousand ports come a few a second): the
    lab is not drawn again for a change nobody would see."""
    steps = min(1.0, math.log10(1 + bits_per_second) / math.log10(FULL_LOAD_BITS)) * LOAD_STEPS
    if drawn and abs(steps - drawn * LOAD_STEPS) < LOAD_KEPT:
        return drawn
    return round(steps) / LOAD_STEPS


class RateSampling:
    """The job: reports the links' rates as they change (every link's first) until `stop()`. The agent reads the
    counters (a member of the group cannot enter the lab's namespaces) once a second and tells only what changed;
    in a lab spread over sites, each site's agent those of its links."""

    def __init__(self, lab: str) -> None:
        self._lab = lab
        self._lock = threading.Lock()
        self._stopped = False
        self._rates: Stream[dict[str, LinkRate]] | None = None

    def __call__(self, report: Report) -> None:
        from vtopo.client.agent_client import AgentError, AgentRefused, AgentUnavailable
        from vtopo.sites.spread_operations import SitesOperator
        from vtopo.sites.spread import SitesFailed

        try:
            rates = SitesOperator().link_rates(self._lab, SAMPLE_S)
            with self._lock:
                self._rates = rates
                if self._stopped:  # while they were asked for
                    rates.close()
            for changes in rates:
                report(changes)
        except (AgentError, AgentRefused, AgentUnavailable, SitesFailed) as error:
            raise LookupError(str(error)) from error

    def stop(self) -> None:
        """The job ends at once: its connections to the agents are closed."""
        with self._lock:
            self._stopped = True
            if self._rates is not None:
                self._rates.close()


class RateView(QObject):
    message = Signal(str)

    def __init__(self, scene: TopologyScene, deploy: DeployController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._scene = scene
        self._deploy = deploy
        self.toggle = QAction("Link &rates", self, checkable=True, checked=True)
        self.toggle.toggled.connect(self._toggled)
        self._sampling: RateSampling | None = None
        self.latest: dict[str, LinkRate] = {}
        self._drops: dict[str, tuple[float, float]] = {}  # link id: (when it is drawn narrower, at what load)
        self._drop_timer = QTimer(self, interval=int(HOLD_S * 1000 / 3))
        self._drop_timer.timeout.connect(self._apply_drops)
        self._lab = ""  # the lab sampled
        deploy.busy_changed.connect(self._deploy_busy)
        deploy.states_changed.connect(self._lab_changed)

    def _toggled(self, on: bool) -> None:
        """Hidden, the rates are not measured: the stream ends, and the rates last told are drawn again at once when
        shown, until the new stream's first (every link's) replaces them."""
        self._show(self.latest if on else {})
        if on:
            self._sample()
        else:
            self._stop_sampling()

    def _deploy_busy(self, busy: bool) -> None:
        if not busy:
            self.follow()

    def _lab_changed(self) -> None:
        """A lab found deployed (by a read of its state) or gone, without a job of this window's."""
        if self._deploy.deployed_lab != self._lab and not self._deploy.busy:
            self.follow()

    def follow(self) -> None:
        """Sample the lab that is deployed now, while the rates are shown (or stop sampling when none is)."""
        self.shutdown()
        self._lab = self._deploy.deployed_lab
        self._sample()

    def _sample(self) -> None:
        if not self._lab or not self.toggle.isChecked() or self._sampling is not None:
            return
        self._sampling = sampling = RateSampling(self._lab)
        worker = Worker(sampling)
        worker.yielded.connect(lambda rates: self._sampled(sampling, rates))
        worker.errored.connect(lambda error: self._failed(sampling, error))
        worker.start_alone()

    def _failed(self, sampling: RateSampling, error: object) -> None:
        if sampling is self._sampling:
            self.message.emit(str(error))

    def _sampled(self, sampling: RateSampling, changes: dict[str, LinkRate]) -> None:
        if sampling is not self._sampling:  # told before the job was stopped
            return
        self.show_changes(changes)

    def show_changes(self, changes: dict[str, LinkRate]) -> None:
        """The rates of the links whose rate changed. Wider is drawn at once, narrower after HOLD_S."""
        self.latest |= changes
        if not self.toggle.isChecked():
            return
        now = time.monotonic()
        loads = {}
        for link_id, load in self._loads(changes, changes).items():
            item = self._scene.links[link_id]
            if load >= item.load:
                self._drops.pop(link_id, None)
                loads[link_id] = load
            else:
                self._drops[link_id] = (self._drops.get(link_id, (now + HOLD_S, 0.0))[0], load)
        self._scene.set_loads(loads)
        if self._drops and not self._drop_timer.isActive():
            self._drop_timer.start()

    def _apply_drops(self) -> None:
        now = time.monotonic()
        due = {link_id: load for link_id, (when, load) in self._drops.items() if when <= now}
        for link_id in due:
            del self._drops[link_id]
        if not self._drops:
            self._drop_timer.stop()
        self._scene.set_loads(due)

    def _show(self, rates: dict[str, LinkRate]) -> None:
        """Draw every link with its rate, at once."""
        self._drops.clear()
        self._drop_timer.stop()
        self._scene.set_loads(self._loads(rates, self._scene.links))

    def _loads(self, rates: dict[str, LinkRate], links: Iterable[str]) -> dict[str, float]:
        """Each of `links` (that the scene has) by the load it is drawn with at its rate; each told its rate."""
        loads = {}
        for link_id in links:
            item = self._scene.links.get(link_id)
            if item is None:
                continue
            rate = rates.get(link_id)
            loads[link_id] = load_of(rate.bits_per_second, item.load) if rate else 0.0
            item.traffic = rate
        return loads

    def _stop_sampling(self) -> None:
        """What the job told after is not shown."""
        if self._sampling is not None:
            self._sampling.stop()
        self._sampling = None

    def shutdown(self) -> None:
        """Stop sampling, and forget the rates."""
        self._stop_sampling()
        self.latest = {}
        self._show({})
