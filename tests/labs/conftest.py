"""Fixtures for tests that deploy real labs: a deployer, and a check that each test leaves nothing behind."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable, Iterator

import pytest

from residue import snapshot
from vtopo.deployed import DeployedLab
from vtopo.host.deployer import Deployer
from vtopo.host.ovs import OvsService, vsctl
from vtopo.lab import open_lab
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


@pytest.fixture
def deployed(deployer: Deployer) -> Iterator[Callable[[str | Path | Topology], Running]]:
    """Deploy labs for one test; destroy them after and assert that nothing is left."""
    before = snapshot()
    labs: list[Running] = []

    def deploy(lab: str | Path | Topology) -> Running:
        topology = lab if isinstance(lab, Topology) else open_lab(
            lab if isinstance(lab, Path) else TOPOLOGIES / f"{lab}.vtopo").topology
        deployer.deploy(topology)
        labs.append(Running(deployer, topology))
        return labs[-1]

    yield deploy
    for running in labs:
        deployer.destroy(running.topology.name)
    assert snapshot() - before == {}, "destroy left something behind"


@pytest.fixture
def ovs_stopped() -> None:
    """Open vSwitch is stopped, so the test sees vtopo start it (skips if OVS holds bridges vtopo did not make)."""
    service = OvsService()
    if service.running():
        if vsctl([["list-br"]]).split():
            pytest.skip("Open vSwitch runs with bridges vtopo did not make; this test needs to stop it")
        service.stop()
