"""L2 broadcast domains of a lab, for the designer's view and its legend, and the classic student mistakes in them.

A domain is what a broadcast frame reaches: the interfaces joined by bridges, OVS switches in normal mode and
macvlan segments in bridge mode. Routers (and the host, where it routes between numbered bridges) are its borders.
"""
from __future__ import annotations

import ipaddress
from collections import Counter
from dataclasses import dataclass
from typing import Any

import networkx as nx

from vtopo.compile.analysis import emptied_after, l2_graph
from vtopo.kinds.contract import LabContext, NodeContext
from vtopo.model.problems import Problem, Severity

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Member:
    """An interface in a domain: a node's link end ("h1:eth0"), or the host's address on a numbered bridge."""

    name: str
    node_id: str
    addresses: tuple[str, ...]
    routes: bool
    """The node routes: it is a gateway out of this domain."""

    @property
    def networks(self) -> set[Network]:
        return {ipaddress.ip_interface(a).network for a in self.addresses if _valid(a)}


@dataclass(frozen=True)
class Domain:
    number: int
    members: tuple[Member, ...]
    switches: tuple[str, ...]
    """The bridges, switches and segments that join it, by name."""
    link_ids: frozenset[str]

    @property
    def subnets(self) -> list[Network]:
        return sorted({n for m in self.members for n in m.networks}, key=lambda n: (n.version, n))

    def describe(self) -> str:
        subnets = ", ".join(map(str, self.subnets)) or "no subnet"
        via = f" via {', '.join(self.switches)}" if self.switches else ""
        return f"domain {self.number}: {subnets}{via}: {', '.join(m.name for m in self.members)}"


def broadcast_domains_of(lab: LabContext) -> list[Domain]:
    """Every broadcast domain with at least one interface, in a stable order, numbered from 1."""
    found = []
    with emptied_after(l2_graph(lab)) as graph:
        for component in nx.connected_components(graph):
            ends = sorted((graph.nodes[v]["end"] for v in component if graph.nodes[v]["end"] is not None),
                          key=lambda e: (e.node.name, e.end.port))
            switch_ids = sorted({v[1] for v in component if isinstance(v, tuple) and v[0] == "node"})
            switches = [lab.nodes[i] for i in switch_ids]
            members = [Member(f"{e.node.name}:{e.end.port}", e.node.id, tuple(e.end.interface.addresses),
                              e.kind.routes(e.owner)) for e in ends]
            members += [Member(f"host on {s.node.name}", s.node.id, tuple(s.kind.host_addresses(s)), s.kind.routes(s))
                        for s in switches if s.kind.host_addresses(s)]
            if not members:
                continue
            # the edges at a component's vertices are the component's edges (a subgraph view would leave a cycle of
            # views behind per domain, garbage that only the cycle collector frees, with the interpreter lock held)
            links = {key for _, _, key in graph.edges(component, keys=True)} | {e.link.id for e in ends}
            found.append((members, tuple(sorted(s.node.name for s in switches)), frozenset(links)))
    found.sort(key=lambda item: item[0][0].name)
    return [Domain(index, tuple(members), switches, links) for index, (members, switches, links) in
            enumerate(found, 1)]


def domain_problems(lab: LabContext) -> list[Problem]:
    """Warnings, in plain words, for subnets that do not match their wire and containers cut off from routers."""
    domains = broadcast_domains_of(lab)
    problems = [*_subnet_mismatches(domains)]
    routed = {n for d in domains for m in d.members if m.routes for n in m.networks}
    if routed:
        problems += _unreachable_gateways(lab, domains, routed)
    return problems


def _subnet_mismatches(domains: list[Domain]) -> list[Problem]:
    problems = []
    for domain in domains:
        counts = Counter(n for m in domain.members for n in m.networks if n.version == 4)
        if len(counts) < 2:
            continue
        (top, top_count), (_, second_count) = counts.most_common(2)
        if top_count == second_count:
            subnets = " and ".join(str(n) for n in sorted(counts))
            problems.append(Problem(
                f"one broadcast domain holds two subnets, {subnets}: their frames reach each other, but hosts on "
                "different subnets do not talk without a router, so nothing passes between them. Give every "
                "interface on this wire the same subnet, or put a router between two separate segments.",
                f"domain {domain.number} ({', '.join(m.name for m in domain.members)})", "", "",
                Severity.WARNING))
            continue
        for member in domain.members:
            mine = {n for n in member.networks if n.version == 4}
            if mine and top not in mine:
                problems.append(Problem(
                    f"{member.name} is on {', '.join(map(str, sorted(mine)))} but the rest of its broadcast domain is "
                    f"on {top}: it shares their wire, not their subnet, so it cannot reach them. Use an address in "
                    f"{top}.", f"node {member.name.split(':')[0]}", "", member.node_id, Severity.WARNING))
    return problems


def _unreachable_gateways(lab: LabContext, domains: list[Domain], routed: set[Network]) -> list[Problem]:
    problems = []
    for node in lab.nodes.values():
        gateway = node.kind.default_gateway(node)
        own = [d for d in domains if any(m.node_id == node.node.id and m.addresses for m in d.members)]
        if gateway is None or not own:
            continue
        gateways = {ipaddress.ip_interface(a).ip for d in own for m in d.members if m.routes and m.node_id !=
                    node.node.id for a in m.addresses if _valid(a)}
        beyond = sorted(routed - {n for d in own for m in d.members if m.node_id == node.node.id for n in m.networks})
        if not gateways and beyond:
            problems.append(_warn(node, f"no router shares a broadcast domain with {node.node.name}, so it can reach "
                                        f"none of the subnets the lab's routers know ({_some(beyond)}). Link it to "
                                        "a segment a router is on."))
        elif not gateway and beyond:
            problems.append(_warn(node, f"{node.node.name} has no default route, so it can only reach its own "
                                        f"segment, not {_some(beyond)} behind the routers. Set its default gateway "
                                        f"to {', '.join(sorted(map(str, gateways)))}."))
    return problems


def _warn(node: NodeContext[Any], message: str) -> Problem:
    return Problem(message, node.subject, "", node.node.id, Severity.WARNING)


def _some(networks: list[Network]) -> str:
    return ", ".join(map(str, networks[:3])) + (", ..." if len(networks) > 3 else "")


def _valid(address: str) -> bool:
    try:
        ipaddress.ip_interface(address)
    except ValueError:
        return False
    return "/" in address
