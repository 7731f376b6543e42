"""Graph questions about a lab, answered with NetworkX: broadcast domains, switching loops, paths."""
from __future__ import annotations

import ipaddress
from typing import Hashable

import networkx as nx

from vtopo.compile.context import EndContext, LabContext
from vtopo.kinds.contract import Role

FORWARDING_ROLES = (Role.SWITCH, Role.SEGMENT)


def _vertex(end: EndContext) -> Hashable:
    """Switches and segments are one vertex; every other node's interfaces are vertices of their own."""
    if end.kind.role in FORWARDING_ROLES:
        return ("node", end.node.id)
    return ("end", end.link.id, end.end.port, end.node.id)


def l2_graph(lab: LabContext) -> nx.MultiGraph:
    graph = nx.MultiGraph()
    for end in lab.ends:
        graph.add_node(_vertex(end), end=end if end.kind.role not in FORWARDING_ROLES else None)
    for end in lab.ends:
        if end.peer is not None and id(end) < id(end.peer):
            graph.add_edge(_vertex(end), _vertex(end.peer), key=end.link.id)
    return graph


def broadcast_domains(lab: LabContext) -> list[list[EndContext]]:
    """The interfaces that share each L2 segment, in a stable order."""
    graph = l2_graph(lab)
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
    graph = nx.MultiGraph()
    for end in lab.ends:
        if end.peer is not None and end.kind.role in FORWARDING_ROLES and end.peer.kind.role in FORWARDING_ROLES:
            graph.add_edge(end.node.id, end.peer.node.id, key=end.link.id)
    loops = []
    for u, v, count in {(min(u, v), max(u, v), graph.number_of_edges(u, v)) for u, v in graph.edges()}:
        if count > 1:
            loops.append([u, v])
    simple = nx.Graph(graph)
    loops.extend(sorted(cycle) for cycle in nx.cycle_basis(simple))
    return sorted(loops)


def interface_networks(end: EndContext) -> list[ipaddress.IPv4Interface | ipaddress.IPv6Interface]:
    return [ipaddress.ip_interface(address) for address in end.end.interface.addresses]
