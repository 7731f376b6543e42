"""What the agent is doing to each lab right now: a deploy or a destroy that the lab's status shows as such (its
record alone would say "interrupted" and its VMs "degraded"), and the deploy its owner may cancel."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from vtopo.reports import LabStatus, PartState

if TYPE_CHECKING:
    from vtopo.host.deployer import Deployer

DEPLOYING, DESTROYING = "deploying", "destroying"
UNFINISHED = ("incomplete", "degraded")  # what a part of a lab being deployed or destroyed looks like meanwhile


@dataclass(frozen=True)
class Job:
    doing: str  # DEPLOYING or DESTROYING
    deployer: Deployer
    owner: int  # the uid that asked for it


def new_deployer() -> Deployer:
    """A deployer for one request. Its module, with the compiler and the host layer, loads with the first request
    that builds, destroys or probes a lab: root's `vtopo status` with no agent listening answers in its own process,
    and of no lab deployed it reads only the record."""
    from vtopo.host.deployer import Deployer

    return Deployer()


class LabJobs:
    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._jobs: dict[str, Job] = {}  # by lab name

    @contextmanager
    def running(self, lab: str, job: Job) -> Iterator[None]:
        with self._guard:
            self._jobs[lab] = job
        try:
            yield
        finally:
            with self._guard:
                self._jobs.pop(lab, None)

    def job(self, lab: str) -> Job | None:
        with self._guard:
            return self._jobs.get(lab)

    def cancel_deploys(self) -> None:
        """Cancel every deploy under way: each stops after its operation in progress and rolls back."""
        with self._guard:
            deploys = [job for job in self._jobs.values() if job.doing == DEPLOYING]
        for job in deploys:
            job.deployer.cancel()

    def doing(self, lab: str) -> str:
        """DEPLOYING, DESTROYING, or "" when the agent does neither to the lab now."""
        job = self.job(lab)
        return job.doing if job is not None else ""

    def shown(self, status: LabStatus) -> LabStatus:
        """A lab's status as the caller should read it: while a job runs, its unfinished parts are in progress."""
        doing = self.doing(status.lab)
        if not doing:
            return status

        def part(state: PartState) -> PartState:
            return PartState(state.name, doing) if state.state in UNFINISHED else state

        return replace(status, state=doing, nodes=[part(n) for n in status.nodes],
                       links=[part(link) for link in status.links])
