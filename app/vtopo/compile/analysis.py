"""Graph questions about a lab, answered with NetworkX: broadcast domains, switching loops, paths.

NetworkX is imported by the functions that build a graph: the kind plugins import this module, and listing
the kinds (`vtopo kinds`) should not pay for NetworkX.
"""
from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Hashable, TypeVar

if TYPE_CHECKING:
    import networkx as nx

from vtopo.kinds.contract import (EndContext, KeepsVlansApart, LabContext, NodeContext, PortVlans, Role, SegmentKind,
                                  vlan_interfaces_of)

FORWARDING_ROLES = (Role.SWITCH, Role.SEGMENT)
G = TypeVar("G", bound="nx.Graph[Any]")


@contextmanager
def emptied_after(graph: G) -> Iterator[G]:
    """A graph to use and drop, emptied afterwards. NetworkX keeps the views it hands out (`G.nodes`, `G.edges`,
    `G.in_degree`) on the graph, each pointing back at it: a dropped graph waits for the cycle collector, with all
    it holds, and that pass holds the interpreter lock (the designer compiles a lab of thousands of nodes after
    each edit, on a worker thread beside the GUI's)."""
    try:
        yield graph
    finally:
        graph.clear()


Tag = int | None  # the VLAN tag a frame carries on a wire; None for an untagged frame


def _joins(end: EndContext) -> bool:
    return end.kind.role in FORWARDING_ROLES and end.kind.joins_ports(end.owner)


def vlans_at(end: EndContext) -> PortVlans | None:
    """The VLANs of a switch's port at `end`; None where the switch keeps no VLANs apart, or `end` is no switch's."""
    return end.kind.port_vlans(end.owner, end) if _joins(end) and isinstance(end.kind, KeepsVlansApart) else None


def switch_ports(lab: LabContext) -> dict[tuple[str, str], EndContext]:
    """The switch or segment port each node's interface is plugged into, by the interface's link and node ids."""
    return {(end.link.id, end.node.id): end.peer for end in lab.ends if end.peer is not None
            and end.kind.role not in FORWARDING_ROLES and end.peer.kind.role in FORWARDING_ROLES}


def _tags(lab: LabContext) -> set[Tag]:
    """The tags frames can carry on the lab's wires: none, each VLAN a trunk carries tagged, and each VLAN of a
    subinterface."""
    tags: set[Tag] = {None}
    for end in lab.ends:
        vlans = vlans_at(end)
        tags.update(vlans.tagged if vlans is not None else ())
        tags.update(sub.vlan for sub in end.end.interface.subinterfaces)
    return tags


SVI_EDGE = "svi"  # the key of the edge between an L3 switch's interface in a VLAN and the VLAN: no link of the lab


def _subinterface_vertex(end: EndContext, vlan: int) -> Hashable:
    return ("sub", end.link.id, end.end.port, end.node.id, vlan)


def _vertices(end: EndContext, tags: set[Tag]) -> dict[Tag, Hashable]:
    """Where the frames at this end go, by their tag on the wire. A switch or segment that passes frames between its
    ports has a vertex per VLAN: one that keeps VLANs apart sends each VLAN of a port to its own (an access port's
    untagged frames, a trunk's frames of each tag and its untagged ones into the native VLAN), one that does not
    keeps each tag apart as it came. Every other node's interfaces, and the ports of a switch that keeps them apart
    (macvlan private mode, OpenFlow rules), are vertices of their own, for untagged frames, and so is each of their
    subinterfaces, for the frames of its VLAN."""
    if not _joins(end):
        return {None: ("end", end.link.id, end.end.port, end.node.id),
                **{sub.vlan: _subinterface_vertex(end, sub.vlan) for sub in end.end.interface.subinterfaces}}
    vlans = vlans_at(end)
    if vlans is None:
        return {tag: ("node", end.node.id, tag) for tag in tags}
    vertices: dict[Tag, Hashable] = {vid: ("node", end.node.id, vid) for vid in vlans.tagged}
    if vlans.untagged is not None:
        vertices[None] = ("node", end.node.id, vlans.untagged)
    return vertices


def l2_graph(lab: LabContext) -> nx.MultiGraph[Hashable]:
    """The lab's wires as a graph whose connected components are its broadcast domains: the vertices of each link
    end (see _vertices), joined across the link for each tag that both ends take. A vertex's `end` is the link end
    whose interface it is, its `sub` the subinterface it is (a NodeInterface), and its `svi` the switch and VLAN of
    an L3 switch's interface in a VLAN, where it is one of those."""
    import networkx as nx

    graph: nx.MultiGraph[Hashable] = nx.MultiGraph()
    tags = _tags(lab)
    vertices = {id(end): _vertices(end, tags) for end in lab.ends}
    for end in lab.ends:
        graph.add_nodes_from(vertices[id(end)].values(), end=end if end.kind.role not in FORWARDING_ROLES else None,
                             sub=None, svi=None)
        if end.end.interface.subinterfaces and not _joins(end):
            for interface in end.owner.interfaces():
                if interface.end is end and interface.vlan is not None:
                    graph.add_node(_subinterface_vertex(end, interface.vlan), end=None, sub=interface, svi=None)
    for node in lab.nodes.values():  # an L3 switch's interface in each VLAN (an SVI) is in that VLAN
        for vlan in vlan_interfaces_of(node):
            inside = ("node", node.node.id, vlan)
            if inside not in graph:
                graph.add_node(inside, end=None, sub=None, svi=None)
            graph.add_node(("svi", node.node.id, vlan), end=None, sub=None, svi=(node, vlan))
            graph.add_edge(("svi", node.node.id, vlan), inside, key=SVI_EDGE)
    for end in lab.ends:
        if end.peer is not None and id(end) < id(end.peer):
            mine, theirs = vertices[id(end)], vertices[id(end.peer)]
            for tag in mine.keys() & theirs.keys():
                graph.add_edge(mine[tag], theirs[tag], key=end.link.id)
    return graph


def ends_by_domain(graph: nx.MultiGraph[Hashable]) -> list[list[EndContext]]:
    """The interfaces that share each L2 segment of a lab's `l2_graph`, in a stable order."""
    import networkx as nx

    domains = []
    for component in nx.connected_components(graph):
        ends = [graph.nodes[v]["end"] for v in component if graph.nodes[v]["end"] is not None]
        ends.sort(key=lambda e: (e.node.name, e.end.port))
        if ends:
            domains.append(ends)
    domains.sort(key=lambda ends: (ends[0].node.name, ends[0].end.port))
    return domains


def switching_loops(lab: LabContext) -> list[list[str]]:
    """Cycles made only of switches and segments, as lists of node ids."""
    import networkx as nx

    graph: nx.MultiGraph[str] = nx.MultiGraph()
    with emptied_after(graph):
        for end in lab.ends:
            if end.peer is not None and end.kind.role in FORWARDING_ROLES and end.peer.kind.role in FORWARDING_ROLES:
                graph.add_edge(end.node.id, end.peer.node.id, key=end.link.id)
        loops = []
        for u, v, count in {(min(u, v), max(u, v), graph.number_of_edges(u, v)) for u, v in graph.edges()}:
            if count > 1:
                loops.append([u, v])
        simple: nx.Graph[str] = nx.Graph(graph)
        with emptied_after(simple):
            loops.extend(sorted(cycle) for cycle in nx.cycle_basis(simple))
    return sorted(loops)


def interface_networks(end: EndContext) -> list[ipaddress.IPv4Interface | ipaddress.IPv6Interface]:
    return [ipaddress.ip_interface(address) for address in end.end.interface.addresses]


def node_graph(lab: LabContext) -> nx.MultiGraph[str]:
    """Nodes joined by their links, the link id on each edge."""
    import networkx as nx

    graph: nx.MultiGraph[str] = nx.MultiGraph()
    graph.add_nodes_from(lab.nodes)
    for end in lab.ends:
        if end.peer is not None and end.node.id < end.peer.node.id:
            graph.add_edge(end.node.id, end.peer.node.id, key=end.link.id, end=end)
    return graph


def path_between(lab: LabContext, source_id: str, destination_id: str) -> list[EndContext]:
    """The link ends leaving each hop on a shortest path from one node to another (empty if none)."""
    import networkx as nx

    graph = node_graph(lab)
    try:
        hops = nx.shortest_path(graph, source_id, destination_id)
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return []
    ends = []
    for here, there in zip(hops, hops[1:]):
        key = min(graph[here][there])
        end = graph[here][there][key]["end"]
        ends.append(end if end.node.id == here else end.other)
    return ends


def describe_path(lab: LabContext, source_id: str, destination_id: str) -> str:
    """What lies between two nodes, as a student would say it: "veth → br0 → veth", "macvlan bridge mode"."""
    path = path_between(lab, source_id, destination_id)
    if not path:
        return (_through_host_address(lab, source_id, destination_id) or
                _through_host_routing(lab, source_id, destination_id) or "not linked in the drawing")
    words: list[str] = []
    for index, end in enumerate(path):
        peer = end.other
        if end.kind.role is Role.SEGMENT:
            continue  # said with the hop into the segment
        if peer.kind.role is Role.SEGMENT:
            segment = peer.owner
            mode = segment.kind.mode(segment) if isinstance(segment.kind, SegmentKind) else ""
            onward = path[index + 1].medium if index + 1 < len(path) else end.medium
            media = end.medium if onward == end.medium else f"{end.medium} ⇄ {onward}"
            words.append(f"{media} {mode} mode".strip())
            continue
        words.append(end.medium)
        if peer.node.id != destination_id:
            words.append(peer.node.name)
    return " → ".join(words)


def numbered_bridge_between(lab: LabContext, host_id: str, other_id: str) -> NodeContext[Any] | None:
    """A bridge the host's own namespace has an address on (a numbered bridge) and that
    leads to `other_id`: the host reaches it that way, without a link in the drawing."""
    host = lab.nodes[host_id]
    if host.kind.role is not Role.NAMESPACE or host.kind.netns(host) is not None:
        return None
    for bridge in lab.nodes.values():
        if bridge.kind.host_addresses(bridge) and path_between(lab, bridge.node.id, other_id):
            return bridge
    return None


def _through_host_address(lab: LabContext, source_id: str, destination_id: str) -> str | None:
    """ "br0 (host address) → tap" from the host to a node behind a numbered bridge, or the other way round."""
    if (bridge := numbered_bridge_between(lab, source_id, destination_id)) is not None:
        return f"{bridge.node.name} (host address) → {describe_path(lab, bridge.node.id, destination_id)}"
    if (bridge := numbered_bridge_between(lab, destination_id, source_id)) is not None:
        leg = describe_path(lab, bridge.node.id, source_id)
        return " → ".join([*reversed(leg.split(" → ")), f"{bridge.node.name} (host address)"])
    return None


def host_routed_legs(lab: LabContext, source_id: str, destination_id: str
                     ) -> tuple[list[EndContext], list[EndContext]] | None:
    """Between two nodes with no link in the drawing, behind two numbered bridges the host routes between: the path
    to the first bridge and the path from the second."""
    bridges = [n for n in lab.nodes.values() if n.kind.host_addresses(n) and n.kind.routes(n)]
    near = next((path for b in bridges if (path := path_between(lab, source_id, b.node.id))), None)
    far = next((path for b in bridges if (path := path_between(lab, b.node.id, destination_id))), None)
    if near is None or far is None or near[-1].other.node.id == far[0].node.id:
        return None
    return near, far


def _through_host_routing(lab: LabContext, source_id: str, destination_id: str) -> str | None:
    """ "veth → br1 → the host routes → br2 → veth" between nodes behind two numbered bridges."""
    legs = host_routed_legs(lab, source_id, destination_id)
    if legs is None:
        return None
    near, far = legs[0][-1].other.owner, legs[1][0].owner
    return (f"{describe_path(lab, source_id, near.node.id)} → {near.node.name} → the host routes → "
            f"{far.node.name} → {describe_path(lab, far.node.id, destination_id)}")
