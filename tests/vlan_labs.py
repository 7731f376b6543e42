"""A lab of VLANs on two switches, for the tests of VLANs offline and deployed."""
from __future__ import annotations

from vtopo.model.topology import Endpoint, Interface, Link, Node, Position, Topology

ACCESS = {"h1": ("s1", "p1", 10), "h2": ("s1", "p2", 10), "h3": ("s1", "p3", 20),
          "h4": ("s2", "p1", 10), "h5": ("s2", "p2", 20)}
TRUNK = (("s1", "p4"), ("s2", "p3"))  # carries 10 and 20
ADDRESSES = {host: f"10.0.0.{index}" for index, host in enumerate(ACCESS, 1)}


def vlan_lab(kind: str, name: str = "vlans") -> Topology:
    """Switches s1 and s2 of `kind` joined by a trunk carrying VLANs 10 and 20: h1 and h2 in VLAN 10 and h3 in VLAN 20
    on s1, h4 in VLAN 10 and h5 in VLAN 20 on s2. Every host is on 10.0.0.0/24, so that only the VLANs keep them
    apart."""
    topology = Topology(name=name, id=f"lab-{name}")
    vlans: dict[str, dict[str, str]] = {"s1": {}, "s2": {}}
    for switch, port, vlan in ACCESS.values():
        vlans[switch][port] = f"access {vlan}"
    for switch, port in TRUNK:
        vlans[switch][port] = "trunk 10,20"
    for index, switch in enumerate(("s1", "s2")):
        topology.add_node(Node(switch, switch, kind, {"vlans": vlans[switch]}, Position(200 + 300 * index, 0)))
    for index, (host, (switch, port, _)) in enumerate(ACCESS.items()):
        topology.add_node(Node(host, host, "container", {}, Position(100 * index, 200)))
        topology.add_link(Link(f"link-{host}", Endpoint(host, "eth0", Interface(addresses=[f"{ADDRESSES[host]}/24"])),
                               Endpoint(switch, port)))
    (a, a_port), (b, b_port) = TRUNK
    topology.add_link(Link("link-trunk", Endpoint(a, a_port), Endpoint(b, b_port)))
    return topology
