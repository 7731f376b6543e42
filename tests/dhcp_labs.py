"""The dhcp-relay teaching lab and its broken copy, as the DHCP tests deploy and check them."""
from __future__ import annotations

from vtopo.lab import open_lab
from vtopo.model.topology import Topology
from vtopo.resources import TOPOLOGIES


def dhcp_relay() -> Topology:
    return open_lab(TOPOLOGIES / "dhcp-relay.vtopo").topology


def relay_off(topology: Topology, port: str = "eth2") -> Topology:
    """The student's mistake: r1 relays nothing from `port`."""
    broken = topology.copy()
    r1 = broken.node_named("r1")
    assert r1 is not None
    relay = {p: server for p, server in r1.settings["dhcp_relay"].items() if p != port}
    broken.update_node(r1.id, settings={**r1.settings, "dhcp_relay": relay})
    return broken
