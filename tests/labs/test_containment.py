"""A lab that turns on forwarding in the host is contained: the host forwards its packets only between the lab's
own devices. A namespace behind a veth that is not part of the lab stands for the outside world: c1 routes toward
it through the host, and the lab's nftables table drops and counts every packet; nothing arrives there."""
from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from vtopo.host import nftables
from vtopo.host.cleanup import cleanup
from vtopo.host.deployer import Deployer
from vtopo.host.state import StateStore
from vtopo.lab_terms import NFT_TABLE_PREFIX
from vtopo.lab import open_lab
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

OUTSIDE_NS, OUTSIDE_VETH = "trust-outside", "trust-out0"
HOST_SIDE, FAR_SIDE = "198.51.100.1/24", "198.51.100.2"


def _run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def outside_world() -> Iterator[None]:
    _run("ip", "netns", "add", OUTSIDE_NS)
    try:
        _run("ip", "link", "add", OUTSIDE_VETH, "type", "veth", "peer", "name", "eth0", "netns", OUTSIDE_NS)
        _run("ip", "addr", "add", HOST_SIDE, "dev", OUTSIDE_VETH)
        _run("ip", "link", "set", OUTSIDE_VETH, "up")
        _run("ip", "-n", OUTSIDE_NS, "addr", "add", f"{FAR_SIDE}/24", "dev", "eth0")
        _run("ip", "-n", OUTSIDE_NS, "link", "set", "eth0", "up")
        _run("ip", "-n", OUTSIDE_NS, "route", "add", "default", "via", HOST_SIDE.split("/")[0])
        yield
    finally:
        subprocess.run(["ip", "link", "del", OUTSIDE_VETH], capture_output=True)
        _run("ip", "netns", "del", OUTSIDE_NS)


def _echo_requests_received() -> int:
    snmp = _run("ip", "netns", "exec", OUTSIDE_NS, "cat", "/proc/net/snmp").splitlines()
    names, values = (line.split()[1:] for line in snmp if line.startswith("Icmp:"))
    return int(dict(zip(names, values))["InEchos"])


def test_packets_routed_out_of_the_lab_are_dropped_and_counted(deployed, outside_world) -> None:
    lab = deployed("host-routed-bridges")
    table = f"{NFT_TABLE_PREFIX}{lab.lab.context.names.prefix}"
    assert table in nftables.tables()
    assert lab.pings("c1", "c3"), "the host still routes between the lab's own bridges"
    before = nftables.dropped(table)
    assert lab.run("c1", "ping", "-c", "3", "-i", "0.2", "-W", "1", FAR_SIDE).returncode != 0
    assert nftables.dropped(table) - before >= 3
    assert _echo_requests_received() == 0


def test_destroy_and_cleanup_remove_the_table(deployer, tmp_path) -> None:
    topology = open_lab(TOPOLOGIES / "host-routed-bridges.vtopo").topology
    report = deployer.deploy(topology)
    table = f"{NFT_TABLE_PREFIX}{report.prefix}"
    deployer.destroy(topology.name)
    assert table not in nftables.tables()
    nftables.contain_forwarding(table, f"{report.prefix}-")  # as a crash would leave it
    report = cleanup(Deployer(StateStore(tmp_path)), lambda _: None)  # a store of its own: no lab to destroy
    assert f"nftables table {table}" in report.strays
    assert table not in nftables.tables()
