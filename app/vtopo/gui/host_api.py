"""What the designer uses of the host layer, as typed Protocols.

The host layer (vtopo.host.deployer, vtopo.deployed) is imported lazily, so that the designer runs, with
Deploy and Measure disabled, where it is not installed. These Protocols say what the GUI expects of it, so the
type checker sees the boundary instead of `Any`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from vtopo.kinds.contract import LabContext
from vtopo.lab_terms import Trust
from vtopo.measure import MeasureEndpoint
from vtopo.model.topology import Topology
from vtopo.protocol import Message
from vtopo.reports import DeployReport, LabEntry, LabStatus, ProgressCallback


class Deployer(Protocol):
    def update(self, topology: Topology, progress: ProgressCallback, consent: Trust = ...) -> DeployReport: ...

    def destroy(self, lab: str, progress: ProgressCallback) -> int: ...

    def status(self, lab: str | None = None) -> Sequence[LabStatus]: ...

    def cancel(self, lab: str) -> object: ...

    def labs(self) -> Sequence[LabEntry]: ...

    def follow(self, lab: str) -> Following: ...


class Following(Protocol):
    """A lab followed through the agent (vtopo.client.agent_client.Following): its messages, until `close`."""

    def __iter__(self) -> Iterator[Message]: ...

    def close(self) -> None: ...


class DeployedLab(Protocol):
    context: LabContext
    """The lab as compiled for this host: where each link end lives (captures, link rates, domains)."""

    def command_in(self, name: str, argv: list[str]) -> list[str]: ...

    def machine_lines(self, name: str) -> list[str]: ...

    def measurable(self) -> Sequence[tuple[MeasureEndpoint, Sequence[str]]]: ...

    def path(self, source: str, destination: str) -> str: ...

    def path_links(self, source: str, destination: str) -> list[str]: ...

    def target_address(self, source: str, destination: str, version: int | None = None) -> tuple[str, str]: ...


DeployerLoader = Callable[[], tuple[Deployer | None, str]]
"""() -> (a Deployer, "") or (None, why Deploy is unavailable)."""

LabFinder = Callable[[str], tuple[DeployedLab | None, str]]
"""lab name -> (its DeployedLab, "") or (None, why it cannot be measured)."""
