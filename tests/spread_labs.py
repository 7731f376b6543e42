"""Labs spread over sites, built for tests: containers, bridges and routers placed on the local machine ("") and on
simulated hosts."""
from __future__ import annotations

from vtopo.model.sites import Site
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

LOCAL_UNDERLAY = "198.18.0.1"  # the real host's address on the simulated hosts' underlay (scripts/sim-host.sh)


class LabBuilder:
    def __init__(self, name: str, sites: list[Site]):
        self.topology = Topology(name, id=f"lab-{name}", sites={site.name: site for site in sites})
        self._ports: dict[str, int] = {}

    def node(self, name: str, kind: str, site: str = "", **settings: object) -> str:
        self.topology.add_node(Node(name, name, kind, dict(settings), site=site))
        return name

    def link(self, a: str, b: str, a_address: str = "", b_address: str = "") -> str:
        ends = [self._end(node, address) for node, address in ((a, a_address), (b, b_address))]
        link_id = f"{a}-{b}"
        self.topology.add_link(Link(link_id, ends[0], ends[1]))
        return link_id

    def _end(self, node: str, address: str) -> Endpoint:
        number = self._ports.get(node, 0)
        self._ports[node] = number + 1
        kind = self.topology.nodes[node].kind
        port = {"bridge": f"p{number + 1}", "ovs": f"p{number + 1}", "vm": f"nic{number}"}.get(kind, f"eth{number}")
        return Endpoint(node, port, Interface(addresses=[address] if address else []))


def here(address: str = LOCAL_UNDERLAY) -> Site:
    """The local machine as a site: its underlay address."""
    return Site("here", address=address)


def vlans_over_two_sites(sites: list[Site], remote: str, switch: str = "ovs") -> LabBuilder:
    """One switch (of kind `switch`) with VLANs 10 and 20 spread over this site and `remote`, a host of each VLAN on
    each site, all four in one subnet: only the VLANs keep h10 and h20 apart. The switch's copy on `remote` joins it
    by a trunk."""
    lab = LabBuilder("vlansites", sites)
    lab.node("sw", switch, vlans={"p1": "access 10", "p2": "access 20", "p3": "access 10", "p4": "access 20"})
    for index, (host, site) in enumerate((("h10a", ""), ("h20a", ""), ("h10b", remote), ("h20b", remote)), start=1):
        lab.node(host, "container", site=site)
        lab.link(host, "sw", f"10.70.0.{index}/24")
    return lab
