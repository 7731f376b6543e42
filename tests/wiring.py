"""Links of a test lab written as text: ("h1:eth0", "r1:eth0", "10.1.0.10/24", "10.1.0.1/24") joins h1's eth0, with
the first address, to r1's eth0, with the second."""
from __future__ import annotations

from vtopo.model.topology import Endpoint, Interface, Link, Topology


def wire(topology: Topology, *links: tuple[str, str, str, str]) -> Topology:
    for a, b, a_address, b_address in links:
        (a_node, a_port), (b_node, b_port) = a.split(":"), b.split(":")
        topology.add_link(Link(id=f"{a}-{b}", a=Endpoint(a_node, a_port, Interface(addresses=[a_address])),
                               b=Endpoint(b_node, b_port, Interface(addresses=[b_address]))))
    return topology
