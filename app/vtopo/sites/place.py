"""Placement help: split a lab over two sites so that the VMs' memory is balanced and few links cross (each crossing
link is a tunnel). NetworkX's Kernighan-Lin bisection refines a start balanced by memory; the user decides."""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
from networkx.algorithms.community import kernighan_lin_bisection

from vtopo.kinds.contract import LabContext, resources_of

SEED = 1  # the same lab gets the same suggestion every time


@dataclass(frozen=True)
class Placement:
    sites: dict[str, str]  # node id -> site name
    memory_mb: dict[str, int]  # site name -> the memory its VMs take
    crossing: int  # links between the two sites


def suggest(lab: LabContext, first: str, second: str) -> Placement:
    topology = lab.topology
    memory = {node_id: resources_of(node)[0] for node_id, node in lab.nodes.items()}
    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(topology.nodes)
    for link in topology.links.values():
        weight = graph.get_edge_data(link.a.node, link.b.node, {"weight": 0})["weight"]
        graph.add_edge(link.a.node, link.b.node, weight=weight + 1)
    start = _balanced_by_memory(list(topology.nodes), memory)
    refined = kernighan_lin_bisection(graph, partition=start, weight="weight", seed=SEED)
    largest = max(memory.values(), default=0)
    chosen = refined if _imbalance(refined, memory) <= _imbalance(start, memory) + largest // 2 else start
    sites = {node_id: first for node_id in chosen[0]} | {node_id: second for node_id in chosen[1]}
    used = {name: sum(memory.get(node_id, 0) for node_id, site in sites.items() if site == name)
            for name in (first, second)}
    crossing = sum(1 for link in topology.links.values() if sites[link.a.node] != sites[link.b.node])
    return Placement(sites, used, crossing)


def _balanced_by_memory(nodes: list[str], memory: dict[str, int]) -> tuple[set[str], set[str]]:
    """The largest VMs first, each to the side with less memory so far (or fewer nodes)."""
    sides: tuple[set[str], set[str]] = (set(), set())
    taken = [0, 0]
    for node_id in sorted(nodes, key=lambda n: -memory.get(n, 0)):
        side = min((0, 1), key=lambda s: (taken[s], len(sides[s])))
        sides[side].add(node_id)
        taken[side] += memory.get(node_id, 0)
    return sides


def _imbalance(sides: tuple[set[str], set[str]], memory: dict[str, int]) -> int:
    return abs(sum(memory.get(n, 0) for n in sides[0]) - sum(memory.get(n, 0) for n in sides[1]))
