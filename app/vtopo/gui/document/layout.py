"""Auto-layout of a lab with NetworkX: layered by role (routers, then switches and segments, then hosts and VMs),
or force-directed. Positions only; notes stay where they are."""
from __future__ import annotations

import itertools
import math
from statistics import mean

import networkx as nx

from vtopo.compile.compiler import lab_context
from vtopo.kinds.contract import Role
from vtopo.kinds.registry import Registry
from vtopo.model.problems import LabError
from vtopo.model.topology import Position, Topology

LAYOUTS = {"layered": "Auto-layout: &layered by role", "force": "Auto-layout: &force-directed"}
COLUMN_SPACING = 150.0
ROW_SPACING = 170.0
FORCE_DIRECTED_LIMIT = 500
"""NetworkX lays out up to this many nodes with its dense spring layout in about a second; beyond, its sparse
methods take 15–25 s for 2,000 nodes (measured here), too long for an edit."""
SWEEPS = 4
"""Down-and-up passes that order each row by its neighbours' places (the barycentre heuristic of Sugiyama)."""

ROUTERS, NETWORKS, HOSTS = 0, 1, 2


def lab_graph(topology: Topology) -> nx.Graph[str]:
    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(topology.nodes)
    graph.add_edges_from((link.a.node, link.b.node) for link in topology.links.values())
    return graph


def routers_of(topology: Topology, registry: Registry) -> set[str]:
    """The nodes that forward IP between their interfaces (the kind's `routes` hook, which reads the settings);
    none while the lab does not compile."""
    try:
        lab = lab_context(topology, registry)
    except LabError:
        return set()
    return {node_id for node_id, node in lab.nodes.items()
            if node.kind.role in (Role.NAMESPACE, Role.MACHINE) and node.kind.routes(node)}


def tiers(topology: Topology, registry: Registry) -> dict[str, int]:
    routers = routers_of(topology, registry)

    def tier(node_id: str) -> int:
        kind = registry.get(topology.nodes[node_id].kind)
        if node_id in routers:
            return ROUTERS
        return NETWORKS if kind is not None and kind.role in (Role.SWITCH, Role.SEGMENT) else HOSTS
    return {node_id: tier(node_id) for node_id in topology.nodes}


def layered(topology: Topology, registry: Registry) -> dict[str, Position]:
    """Routers in the top row, switches and segments below them, hosts and VMs at the bottom; each row ordered
    to keep links short and uncrossed, centred where the lab was."""
    graph = lab_graph(topology)
    rows: list[list[str]] = [[], [], []]
    tier = tiers(topology, registry)
    for node_id in sorted(topology.nodes, key=lambda i: topology.nodes[i].position.x):
        rows[tier[node_id]].append(node_id)
    rows = [row for row in rows if row]
    for sweep in range(SWEEPS):
        for index in range(1, len(rows)) if sweep % 2 == 0 else range(len(rows) - 2, -1, -1):
            rows[index] = _by_barycentre(graph, rows[index], _fractions(rows))
    width = max(len(row) for row in rows) * COLUMN_SPACING
    places = {node_id: ((column + 0.5) * width / len(row) - width / 2, row_index * ROW_SPACING)
              for row_index, row in enumerate(rows) for column, node_id in enumerate(row)}
    return _centred(topology, places)


def _fractions(rows: list[list[str]]) -> dict[str, float]:
    """Each node's place across its row, from 0 to 1."""
    return {node_id: (column + 0.5) / len(row) for row in rows for column, node_id in enumerate(row)}


def _by_barycentre(graph: nx.Graph[str], row: list[str], fractions: dict[str, float]) -> list[str]:
    """The row ordered by the mean place of each node's neighbours in the other rows (its own place if none)."""
    own = set(row)

    def key(node_id: str) -> tuple[float, float]:
        linked = [fractions[n] for n in graph.neighbors(node_id) if n not in own]
        return (mean(linked) if linked else fractions[node_id]), fractions[node_id]
    return sorted(row, key=key)


def force_directed(topology: Topology) -> dict[str, Position]:
    """NetworkX's spring layout (Fruchterman–Reingold) of each connected part, with a fixed seed (the same lab gets
    the same drawing), spread until no two nodes are closer than a column; the parts side by side."""
    graph = lab_graph(topology)
    places: dict[str, tuple[float, float]] = {}
    left = 0.0
    for part in sorted(nx.connected_components(graph), key=lambda nodes: (-len(nodes), min(nodes))):
        computed = nx.spring_layout(graph.subgraph(part), seed=7, scale=COLUMN_SPACING * len(part) ** 0.5)
        points = {node_id: (float(x), float(y)) for node_id, (x, y) in computed.items()}
        closest = min((math.dist(p, q) for p, q in itertools.combinations(points.values(), 2)), default=1.0)
        grow = max(1.0, COLUMN_SPACING / max(closest, 1.0))
        xs = [x for x, _ in points.values()]
        for node_id, (x, y) in points.items():
            places[node_id] = (left + (x - min(xs)) * grow, y * grow)
        left += (max(xs) - min(xs)) * grow + COLUMN_SPACING
    return _centred(topology, places)


def _centred(topology: Topology, places: dict[str, tuple[float, float]]) -> dict[str, Position]:
    """The places moved so that their centre is where the nodes' centre was."""
    if not places:
        return {}
    def centre(points: list[tuple[float, float]]) -> tuple[float, float]:
        xs, ys = [x for x, _ in points], [y for _, y in points]
        return (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2

    (old_x, old_y) = centre([(n.position.x, n.position.y) for n in topology.nodes.values()])
    (new_x, new_y) = centre(list(places.values()))
    dx, dy = old_x - new_x, old_y - new_y
    return {node_id: Position(round(x + dx, 1), round(y + dy, 1)) for node_id, (x, y) in places.items()}
