"""The real host and two simulated hosts (b and c) for one test module, with an agent of the tests' own on the real
host, and a check that each test leaves nothing on any of them."""
from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_process import Agent
from residue import snapshot
from sites.simulated import SimulatedHost
from spread_labs import LabBuilder, here
from vtopo.model import io

AGENT_CONFIG = 'tunnel_vnis = [3000000, 3099999]\n'


@dataclass
class Sites:
    agent: Agent  # the real host's
    b: SimulatedHost
    c: SimulatedHost
    directory: Path

    def builder(self, name: str) -> LabBuilder:
        return LabBuilder(name, [here(), self.b.site, self.c.site])

    def save(self, lab: LabBuilder) -> Path:
        path = self.directory / f"{lab.topology.name}.vtopo"
        io.save(lab.topology, path)
        return path

    def deploy(self, lab: LabBuilder) -> subprocess.CompletedProcess[str]:
        return self.agent.vtopo(None, "deploy", str(self.save(lab)), "--allow-site", "b", "--allow-site", "c",
                                timeout=240)

    def vtopo(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.agent.vtopo(None, *args, timeout=240)

    def residue(self) -> dict[str, list[str]]:
        return {host.name: left for host in (self.b, self.c) if (left := host.residue())}


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sites]:
    hosts: list[SimulatedHost] = []
    try:
        hosts = [SimulatedHost.up("b"), SimulatedHost.up("c")]
        for host in hosts:  # the same VNI range as the real host's agent
            (host.directory / "agent.toml").write_text(AGENT_CONFIG)
        with Agent.running(AGENT_CONFIG) as agent:
            yield Sites(agent, hosts[0], hosts[1], tmp_path_factory.mktemp("sites"))
    finally:
        for host in hosts:
            host.down()


@pytest.fixture
def spread(sites: Sites) -> Iterator[Sites]:
    """The sites for one test, which must leave nothing behind on any of them."""
    before = snapshot()
    yield sites
    assert sites.residue() == {}, "a simulated host keeps something of a lab"
    assert snapshot() - before == {}, "the real host keeps something of a lab"
