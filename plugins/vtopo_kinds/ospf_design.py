"""OSPF's design rules, checked on the lab before it is deployed: what makes half a lab unreachable although every
router starts.

- every non-backbone area touches area 0 through an area border router (ABR);
- a router with interfaces in several areas has one in area 0;
- the routers on each link agree on the hello and dead intervals;
- a network is announced in one area only.

A subnet that differs between two routers on one wire is an error of the broadcast domains (vtopo.compile.broadcast_domains),
for every routing node. A router with its own FRR configuration is judged by FRR itself: these rules read the
settings vtopo writes its configuration from, so they pass over it.
"""
from __future__ import annotations

import ipaddress
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from vtopo.kinds.api import EndContext, NodeContext, Problem

BACKBONE = "0.0.0.0"
AreaOf = Callable[[NodeContext[Any], str], str]
"""The router kind's area of a port: a dotted quad, or ValueError for an area that is not one."""


@dataclass(frozen=True)
class OspfPort:
    """A router port in OSPF: one with an address, in an area."""

    end: EndContext
    area: str

    @property
    def router(self) -> str:
        return self.end.node.name

    @property
    def name(self) -> str:
        return f"{self.end.node.name}:{self.end.end.port}"

    @property
    def passive(self) -> bool:
        return self.end.end.port in self.end.owner.settings.passive


def design_problems(node: NodeContext[Any], area_of: AreaOf) -> Iterable[Problem]:
    """The problems that belong to `node`: its areas and its links' timers, and the lab-wide ones when it is the
    first router of the lab by name, so that each is said once."""
    if _own_config(node):
        return
    routers = [n for n in node.lab.nodes.values() if n.kind is node.kind and not _own_config(n)]
    domains = {id(end): index for index, domain in enumerate(node.lab.domains) for end in domain}
    mine = _ports(node, area_of)
    yield from _areas_without_backbone(node, mine)
    yield from _timer_mismatches(node, mine, domains)
    if node is min(routers, key=lambda r: r.node.name):
        ports = [port for router in routers for port in _ports(router, area_of)]
        yield from _areas_cut_off(ports, domains)
        yield from _networks_in_two_areas(ports, domains)


def _own_config(node: NodeContext[Any]) -> bool:
    """Whether the router carries its own FRR configuration, which vtopo deploys as it is, or none at all (Generate
    OSPF off): either way not the OSPF vtopo writes."""
    return bool(getattr(node.settings, "config", "")) or not getattr(node.settings, "generate_ospf", True)


def _ports(router: NodeContext[Any], area_of: AreaOf) -> list[OspfPort]:
    found = []
    for end in router.ends:
        if not end.end.interface.addresses:
            continue
        try:
            found.append(OspfPort(end, area_of(router, end.end.port)))
        except ValueError:
            continue  # the router's own check says the area is not one
    return found


def _areas_without_backbone(node: NodeContext[Any], ports: list[OspfPort]) -> Iterable[Problem]:
    areas = {port.area for port in ports}
    if len(areas) < 2 or BACKBONE in areas:
        return
    where = "; ".join(f"area {area}: {', '.join(p.end.end.port for p in ports if p.area == area)}"
                      for area in sorted(areas))
    yield Problem(f"{node.node.name} has ports in {len(areas)} areas ({where}) and none in area 0: a router passes "
                  "routes between areas only through the backbone, so it joins none of them. Put the port that "
                  f"leads to the rest of the lab in area {BACKBONE} (in areas, or leave it out: unlisted ports are in "
                  "area 0).", node.subject, "", node.node.id)


def _areas_cut_off(ports: list[OspfPort], domains: dict[int, int]) -> Iterable[Problem]:
    """Each part of a non-backbone area (routers adjacent in it) needs an ABR: a router of it with a port in area 0.
    Only a lab with more than one area needs any."""
    areas = {port.area for port in ports}
    if len(areas) < 2:
        return
    backbone_routers = {port.router for port in ports if port.area == BACKBONE}
    for area in sorted(areas - {BACKBONE}):
        for part in _parts([port for port in ports if port.area == area], domains):
            if part & backbone_routers:
                continue
            names = ", ".join(sorted(part))
            first = next(port for port in ports if port.area == area and port.router in part)
            yield Problem(f"area {area} ({names}) does not touch area 0: no router in it also has a port in area "
                          f"{BACKBONE} (an area border router), so its routes never reach the rest of the lab and "
                          f"theirs never reach it. Link one of {names} to a backbone router with a port in area 0, "
                          f"or put its uplink in area 0.", f"link {first.end.link_name}", "", first.end.link.id)


def _parts(ports: list[OspfPort], domains: dict[int, int]) -> list[set[str]]:
    """The routers of one area's ports, in groups adjacent in it: ports on one wire, neither passive."""
    part_of: dict[str, set[str]] = {port.router: {port.router} for port in ports}
    on_wire: dict[int, str] = {}
    for port in ports:
        if port.passive:
            continue
        other = on_wire.setdefault(domains[id(port.end)], port.router)
        if part_of[other] is not part_of[port.router]:
            merged = part_of[other] | part_of[port.router]
            for router in merged:
                part_of[router] = merged
    unique = {id(part): part for part in part_of.values()}
    return sorted(unique.values(), key=min)


def _timer_mismatches(node: NodeContext[Any], mine: list[OspfPort], domains: dict[int, int]) -> Iterable[Problem]:
    """Neighbours must agree on the hello and dead intervals, or they never become adjacent. Said by the router
    first by name."""
    ours = node.settings
    for port in mine:
        if port.passive:
            continue
        for end in node.lab.domains[domains[id(port.end)]]:
            other, theirs = end.owner, end.owner.settings
            if (other.kind is not node.kind or _own_config(other) or other.node.name <= node.node.name
                    or end.end.port in theirs.passive or not end.end.interface.addresses):
                continue
            if (ours.hello_interval, ours.dead_interval) != (theirs.hello_interval, theirs.dead_interval):
                yield Problem(f"OSPF timers differ on one link: {port.name} says hello {ours.hello_interval} s, dead "
                              f"{ours.dead_interval} s, and {other.node.name}:{end.end.port} hello "
                              f"{theirs.hello_interval} s, dead {theirs.dead_interval} s; neighbours must agree on "
                              f"both, or they never become adjacent. Give {node.node.name} and {other.node.name} the "
                              "same Hello and Dead intervals.", f"link {port.end.link_name}", "", port.end.link.id)


def _networks_in_two_areas(ports: list[OspfPort], domains: dict[int, int]) -> Iterable[Problem]:
    """A subnet announced in two areas (on separate wires: one wire in two areas is said per link already)."""
    by_network: dict[ipaddress.IPv4Network | ipaddress.IPv6Network, list[OspfPort]] = defaultdict(list)
    for port in ports:
        for address in port.end.end.interface.addresses:
            interface = ipaddress.ip_interface(address)
            if not interface.is_link_local:
                by_network[interface.network].append(port)
    for network, announcing in sorted(by_network.items(), key=lambda item: (item[0].version, item[0])):
        areas = sorted({port.area for port in announcing})
        if len(areas) < 2 or len({domains[id(port.end)] for port in announcing}) < 2:
            continue
        where = "; ".join(f"area {area} by {', '.join(p.name for p in announcing if p.area == area)}"
                          for area in areas)
        yield Problem(f"{network} is announced in {len(areas)} areas ({where}): a network lives in one area, and "
                      "routers prefer the copy in their own area, so part of the lab reaches the wrong one. Give "
                      "each segment a subnet of its own.", f"link {announcing[0].end.link_name}", "",
                      announcing[0].end.link.id)
