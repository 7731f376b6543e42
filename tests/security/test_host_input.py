"""Containment covers the host's own input (attack 10): a container on a numbered bridge reaches a service of the host
only at the host's address on that bridge, the one the lab gave it; at an address of the host's on another interface
its packets are dropped, and counted."""
from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator

import pytest

from residue import snapshot
from vtopo.deployed import DeployedLab
from vtopo.host import nftables
from vtopo.host.deployer import Deployer
from vtopo.lab import open_lab
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

PROBE, PROBE_ADDRESS = "vtsec-in0", "198.51.100.77"  # an interface and an address of the host's own, not the lab's
BRIDGE_ADDRESS = "172.16.1.1"  # the host's address on br1, which host-routed-bridges gives it


@pytest.fixture(scope="module")
def lab() -> Iterator[DeployedLab]:
    before = snapshot()
    subprocess.run(["ip", "link", "add", PROBE, "type", "veth", "peer", "name", "vtsec-in1"], check=True)
    subprocess.run(["ip", "addr", "add", f"{PROBE_ADDRESS}/32", "dev", PROBE], check=True)
    subprocess.run(["ip", "link", "set", PROBE, "up"], check=True)
    topology = open_lab(TOPOLOGIES / "host-routed-bridges.vtopo").topology
    deployer = Deployer()
    deployer.deploy(topology)
    try:
        yield DeployedLab.find(topology.name)
    finally:
        deployer.destroy(topology.name)
        subprocess.run(["ip", "link", "del", PROBE], capture_output=True)
    assert snapshot() - before == {}


def _connects(lab: DeployedLab, address: str, port: int) -> bool:
    connect = f"import socket; socket.create_connection(({address!r}, {port}), timeout=2)"
    return subprocess.run(lab.command_in("c1", ["python3", "-c", connect]), capture_output=True,
                          timeout=30).returncode == 0


def test_a_container_reaches_the_host_only_at_the_address_of_its_own_segment(lab: DeployedLab) -> None:
    with socket.socket() as listener:
        listener.bind(("0.0.0.0", 0))  # a service of the host's, on every address it has
        listener.listen(8)
        port = listener.getsockname()[1]
        table = lab.context.names.nft_table
        dropped = nftables.dropped(table)
        assert _connects(lab, BRIDGE_ADDRESS, port), "the lab's own gateway address must stay reachable"
        assert not _connects(lab, PROBE_ADDRESS, port), "a container reached a host address outside its lab"
        assert nftables.dropped(table) > dropped
