"""Imported labs deployed: containerlab's own topologies and an OSPF lab of FRR routers and Linux hosts, checked the
way their READMEs say they work (every host reaches every host and every router's loopback)."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from fast_ospf import with_fast_hellos
from residue import snapshot
from vtopo.deployed import DeployedLab
from vtopo.host.deployer import Deployer
from vtopo.interop.importing import import_lab
from vtopo.lab_terms import Trust
from vtopo.lab import registry
from vtopo.model.topology import Topology

pytestmark = pytest.mark.privileged
INTEROP = Path(__file__).parent.parent / "interop" / "containerlab"


class Lab:
    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.lab = DeployedLab.find(topology.name)

    def run(self, node: str, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.lab.command_in(node, list(argv)), capture_output=True, text=True, timeout=60)

    def pings(self, node: str, address: str) -> bool:
        return self.run(node, "ping", "-c", "1", "-W", "1", address).returncode == 0

    def eventually_pings(self, node: str, address: str, seconds: float = 60) -> bool:
        """OSPF converges within a few dead intervals once the routers are up (the routing labs are deployed with fast
        hellos, `with_fast_hellos`). Until then a router answers "network unreachable", which ends a ping at once: it
        is tried again."""
        deadline = time.monotonic() + seconds
        while not self.pings(node, address):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.5)
        return True


@pytest.fixture
def deploy() -> Iterator[object]:
    before = snapshot()
    deployer = Deployer()
    labs: list[Topology] = []

    def run(path: Path, fix: Callable[[Topology], Topology] = lambda topology: topology) -> Lab:
        topology = fix(import_lab(path, registry()).topology)
        commands = frozenset(node.name for node in topology.nodes.values() if node.startup_commands)
        deployer.deploy(topology, consent=Trust(startup_commands=commands))
        labs.append(topology)
        return Lab(topology)

    yield run
    for topology in labs:
        deployer.destroy(topology.name)
    assert snapshot() - before == {}, "destroy left something behind"


def test_containerlab_smoke_lab_has_its_interfaces_mtu_and_macs(deploy) -> None:  # type: ignore[no-untyped-def]
    lab = deploy(INTEROP / "smoke" / "01-linux-nodes.clab.yml")
    links = {node: lab.run(node, "ip", "-d", "-o", "link", "show").stdout for node in ("l1", "l2")}
    assert "some1@" in links["l2"] and "eth4@" in links["l2"]
    some1 = next(line for line in links["l2"].splitlines() if " some1@" in line)
    assert " mtu 2000 " in some1
    l1_eth3 = next(line for line in links["l1"].splitlines() if " eth3@" in line)
    assert "link/ether 02:00:00:00:00:00" in l1_eth3
    assert lab.run("l1", "sh", "-c", "echo ok").stdout == "ok\n"


def test_containerlab_frr01_pcs_reach_each_other_and_every_routers_lan(deploy) -> None:  # type: ignore[no-untyped-def]
    """frr01's routers announce their links in OSPF but not their loopbacks (its frr.conf files have no network for
    them): a PC reaches the other PCs, every router's LAN address, and its own router's loopback only."""
    lab = deploy(INTEROP / "frr01" / "frr01.clab.yml", with_fast_hellos)
    pcs = {"PC1": "192.168.11.2", "PC2": "192.168.12.2", "PC3": "192.168.13.2"}
    lans = {"router1": "192.168.11.1", "router2": "192.168.12.1", "router3": "192.168.13.1"}
    for number, source in enumerate(pcs, start=1):
        for target, address in [*pcs.items(), *lans.items(), (f"router{number}", f"10.10.10.{number}")]:
            if target != source:
                assert lab.eventually_pings(source, address), f"{source} cannot reach {target} ({address})"
    assert not lab.pings("PC1", "10.10.10.2"), "router2's loopback is announced although frr01 does not announce it"


def test_ospf_lab_hosts_reach_every_host_and_router_loopback(deploy) -> None:  # type: ignore[no-untyped-def]
    lab = deploy(INTEROP / "ospf-lab" / "ospf-lab.clab.yml", with_fast_hellos)
    hosts = {"h1": "192.168.1.10", "h2": "192.168.2.10", "h3": "192.168.2.11", "h4": "192.168.3.10"}
    loopbacks = {"r1": "10.255.0.1", "r2": "10.255.0.2", "r3": "10.255.0.3"}
    for source in hosts:
        for target, address in {**hosts, **loopbacks}.items():
            if target != source:
                assert lab.eventually_pings(source, address), f"{source} cannot reach {target} ({address})"
