"""Fixtures for tests that deploy real labs: a deployer, and a check that each test leaves nothing behind."""
from __future__ import annotations

import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import pytest

from residue import snapshot
from vtopo.deployed import DeployedLab
from vtopo.host.deployer import Deployer
from vtopo.host.ovs import OvsService
from vtopo.lab import open_lab
from vtopo.model import io
from vtopo.model.topology import Topology
from vtopo.resources import TOPOLOGIES


@pytest.fixture(scope="session", autouse=True)
def ovs_started_by_tests() -> Iterator[None]:
    """vtopo starts OVS for a lab that needs it and stops it after; this makes sure the suite leaves OVS as found."""
    service = OvsService()
    was_running = service.running()
    yield
    if not was_running and service.running():
        service.stop()


@pytest.fixture
def deployer() -> Deployer:
    return Deployer()


class Running:
    """A deployed lab in a test: run commands in its nodes."""

    def __init__(self, deployer: Deployer, topology: Topology):
        self.deployer = deployer
        self.topology = topology
        self.lab = DeployedLab.find(topology.name)

    def run(self, node: str, *argv: str, check: bool = False, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.lab.command_in(node, list(argv)), capture_output=True, text=True, check=check,
                              timeout=timeout)

    def address(self, source: str, destination: str) -> str:
        return self.lab.target_address(source, destination)[0]

    def pings(self, source: str, destination: str, count: int = 2) -> bool:
        address = self.address(source, destination)
        return self.run(source, "ping", "-c", str(count), "-i", "0.2", "-W", "1", address).returncode == 0


@contextmanager
def _labs(deployer: Deployer, kept_for_the_next: bool) -> Iterator[Callable[[str | Path | Topology], Running]]:
    """Deploy labs; destroy them at the end and assert that nothing is left. With `kept_for_the_next`, one lab at a
    time: asked for again (the same content), the lab deployed last is the one given; another lab, a changed copy
    too, is deployed after it is destroyed."""
    before = snapshot()
    labs: list[Running] = []

    def destroy_all() -> None:
        while labs:
            deployer.destroy(labs.pop().topology.name)

    def deploy(lab: str | Path | Topology) -> Running:
        topology = lab if isinstance(lab, Topology) else open_lab(
            lab if isinstance(lab, Path) else TOPOLOGIES / f"{lab}.vtopo").topology
        if kept_for_the_next:
            if labs and io.dumps(labs[-1].topology) == io.dumps(topology):
                return labs[-1]
            destroy_all()
        deployer.deploy(topology)
        labs.append(Running(deployer, topology))
        return labs[-1]

    yield deploy
    destroy_all()
    assert snapshot() - before == {}, "destroy left something behind"


@pytest.fixture
def deployed(deployer: Deployer) -> Iterator[Callable[[str | Path | Topology], Running]]:
    """Deploy labs for one test; destroy them after and assert that nothing is left."""
    with _labs(deployer, kept_for_the_next=False) as deploy:
        yield deploy


@pytest.fixture(scope="module")
def shared() -> Iterator[Callable[[str | Path | Topology], Running]]:
    """One lab at a time for a module's tests, kept deployed for the next test that asks for the same lab (a test
    leaves it as it found it: a link it takes down, it puts up again); destroyed when another lab is asked for and
    after the module, and then nothing may be left. A test takes either this or `deployed`: a lab shared first in a
    test that also asks for `deployed` would count as that test's residue. A test with `deployed` beside these must
    not deploy the name of the lab kept from the test before."""
    with _labs(Deployer(), kept_for_the_next=True) as deploy:
        yield deploy
