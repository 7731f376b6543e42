"""Links between sites: each becomes a VXLAN tunnel, whose end on this site is the device the link would have had
here (a node's interface, or a switch's port), with the MTU the tunnel leaves. A switch with several nodes on another
site gets a copy of itself there, joined to it by one tunnel. What resolving a lab does of them; vtopo.compile.links makes a
tunnel's end."""
from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

from vtopo.kinds.contract import KeepsVlansApart, LabContext, NodeContext, Role
from vtopo.model.placement import site_of
from vtopo.model.sites import TUNNEL_MTU
from vtopo.model.topology import Endpoint, Link, Node

TUNNEL = "vxlan tunnel"  # the medium of a link between sites
TUNNEL_ROLES = {Role.NAMESPACE, Role.SWITCH}  # what a tunnel may end in: a node's interface or a switch's port


def lower_tunnel_mtus(lab: LabContext, crossing: AbstractSet[str]) -> None:
    """Lower the MTU of every interface on a segment a tunnel is part of (the link's own two ends, or a switch's
    whole segment), so that no frame is too large for the tunnel."""
    tunnel_ends = [end for end in lab.ends if end.link.id in crossing]
    segments = [domain for domain in lab.domains if any(end.link.id in crossing for end in domain)]
    for end in tunnel_ends + [end for domain in segments for end in domain]:
        interface = end.end.interface
        interface.mtu = min(interface.mtu or TUNNEL_MTU, TUNNEL_MTU)


def split_switches(lab: LabContext) -> bool:
    """Give each switch a copy on every other site where two or more of its links end, in the lab's topology: the
    copy takes those links and is joined to the switch by one more (a trunk, one tunnel), so the segment stays one
    broadcast domain while that site's nodes switch between them locally. A numbered switch (one that gives the host
    an address) stays whole: the host's address belongs to its own site. Whether any switch was split."""
    topology = lab.topology
    split = False
    for switch in [node for node in lab.nodes.values() if node.kind.role is Role.SWITCH]:
        if switch.kind.host_addresses(switch):
            continue
        node = switch.node
        home = site_of(topology, node)
        away: dict[str, list[Endpoint]] = {}
        for link in topology.links_of(node.id):
            mine, theirs = (link.a, link.b) if link.a.node == node.id else (link.b, link.a)
            there = site_of(topology, topology.nodes[theirs.node])
            if there != home:
                away.setdefault(there, []).append(mine)
        for site, ends in sorted(away.items()):
            if len(ends) >= 2:
                _copy_switch(lab, switch, site, ends)
                split = True
    return split


def _copy_switch(lab: LabContext, switch: NodeContext[Any], site: str, ends: list[Endpoint]) -> None:
    topology, node = lab.topology, switch.node
    copy = Node(f"{node.id}@{site}", node.name, node.kind, dict(node.settings), node.position, site=site)
    topology.nodes[copy.id] = copy
    for end in ends:
        end.node = copy.id
    ports = switch.kind.ports
    here, there = ports.next_free(topology.used_ports(node.id)), ports.next_free({end.port for end in ends})
    if here is not None and there is not None:  # a switch with every port taken keeps those links as they are
        topology.links[f"{copy.id} trunk"] = Link(f"{copy.id} trunk", Endpoint(node.id, here), Endpoint(copy.id, there))
        moved = frozenset(end.port for end in ends)
        if isinstance(switch.kind, KeepsVlansApart):  # the trunk between the parts carries every VLAN
            copy.settings = switch.kind.part_settings(node.settings, moved, there)
            node.settings = switch.kind.part_settings(node.settings, frozenset(topology.used_ports(node.id)) - moved,
                                                      here)
    else:
        for end in ends:
            end.node = node.id
        del topology.nodes[copy.id]
