"""Auto-layout of a lab: layered by role with NetworkX (routers, then switches and segments, then hosts and VMs), or
force-directed with igraph. Positions only; notes stay where they are. The designer lays out on request, `vtopo
import` a lab that came without positions."""
from __future__ import annotations

from statistics import mean

import networkx as nx
import numpy as np

from vtopo.compile.resolve import resolve
from vtopo.kinds.contract import Role
from vtopo.kinds.registry import Registry
from vtopo.model.problems import LabError
from vtopo.model.topology import Position, Topology

LAYOUTS = {"layered": "Auto-layout: &layered by role", "force": "Auto-layout: &force-directed"}
COLUMN_SPACING = 150.0
ROW_SPACING = 170.0
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
        lab = resolve(topology, registry).valid().lab
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
    """igraph's Fruchterman–Reingold layout (on a grid for big parts) of each connected part, from a seeded
    start (the same lab gets the same drawing), spread until nodes are a column apart (see _spacing); the parts
    side by side."""
    graph = lab_graph(topology)
    places: dict[str, tuple[float, float]] = {}
    left = 0.0
    for part in sorted(nx.connected_components(graph), key=lambda nodes: (-len(nodes), min(nodes))):
        points = _spring(graph.subgraph(part))
        grow = COLUMN_SPACING / max(_spacing(points), 1e-6)
        xs = points[:, 0]
        for node_id, (x, y) in zip(sorted(part), points.tolist()):
            places[node_id] = (left + (x - xs.min()) * grow, y * grow)
        left += float(np.ptp(xs)) * grow + COLUMN_SPACING
    return _centred(topology, places)


def _spring(part: nx.Graph[str]) -> np.ndarray:
    """Places of the part's nodes, in sorted order, one row each."""
    order = sorted(part)
    if len(order) == 1:
        return np.zeros((1, 2))
    index = {node_id: i for i, node_id in enumerate(order)}
    import igraph  # on request only: it loads matplotlib's pyplot, which wants a writable home

    graph = igraph.Graph(n=len(order), edges=[(index[a], index[b]) for a, b in part.edges()])
    # A start in the unit square: a wider one is faster on igraph's grid (0.6-1.2 s for 2,000 nodes against
    # 3.5 s) but leaves the links 6-8 times longer, as FR cools before it pulls the parts together.
    start = np.random.default_rng(7).random((len(order), 2))
    return np.array(graph.layout_fruchterman_reingold(seed=start.tolist(), grid="auto").coords)


def _spacing(points: np.ndarray) -> float:
    """The distance to stretch to a column: the closest two points, or, where a big part was drawn with a few
    nodes almost on top of each other, the distance from a node to its nearest one that 95% of the nodes keep
    (stretching to the closest pair would then blow the drawing up a hundredfold)."""
    if len(points) < 2:
        return 1.0
    nearest = np.array([np.hypot(*np.delete(points - point, index, axis=0).T).min()
                        for index, point in enumerate(points)])
    return max(float(nearest.min()), float(np.percentile(nearest, 5)))


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
