"""Addresses that clash across a lab's broadcast domains: an address used in two of them, and a subnet routed on two
(a copy pasted with the original's addresses makes both). Within one domain, the compiler refuses an address used
twice outright. A subnet on two wires without a router is left alone: an OpenFlow switch or a private macvlan
segment cuts one subnet into domains on purpose."""
from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Iterable, Iterator

from vtopo.compile.broadcast_domains import Domain, Member, Network, parsed_interface
from vtopo.kinds.contract import LabContext, Role
from vtopo.model.problems import Problem, Severity


def routable_ips(addresses: Iterable[str]) -> Iterator[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The addresses that mean the same anywhere in the lab: not link-local ones (fe80::1 on each of a router's LANs
    is normal), nor ones that are not addresses with their prefix (the compiler names those)."""
    for address in addresses:
        interface = parsed_interface(address)
        if interface is not None and not interface.ip.is_link_local:
            yield interface.ip


def address_clashes(domains: list[Domain]) -> list[Problem]:
    return [*_addresses_used_twice(domains), *_subnets_split(domains)]


def _addresses_used_twice(domains: list[Domain]) -> list[Problem]:
    users: dict[str, list[tuple[Domain, Member]]] = defaultdict(list)
    for domain in domains:
        for member in domain.members:
            for ip in routable_ips(member.addresses):
                users[str(ip)].append((domain, member))
    problems = []
    for address, using in users.items():
        if len({domain.number for domain, _ in using}) < 2:
            continue
        names = " and ".join(member.name for _, member in using)
        _, last = using[-1]
        problems.append(Problem(
            f"address {address} is used twice in the lab, by {names}: a router that reaches both sends each one the "
            f"other's traffic, and a ping answers from the wrong node. Give {last.name} an address of its own.",
            f"node {last.name.split(':')[0]}", "", last.node_id, Severity.WARNING))
    return problems


def _subnets_split(domains: list[Domain]) -> list[Problem]:
    homes: dict[Network, list[Domain]] = defaultdict(list)
    for domain in domains:
        for network in {n for member in domain.members if member.routes for n in member.networks}:
            homes[network].append(domain)
    problems = []
    for network, split in homes.items():
        if len(split) < 2:
            continue
        parts = "; ".join(", ".join(m.name for m in domain.members if network in m.networks) for domain in split)
        problems.append(Problem(
            f"subnet {network} is routed on {len(split)} wires ({parts}): the routers announce it twice, so traffic "
            "for it reaches one wire only. Give each wire a subnet of its own.",
            f"domain {split[1].number} ({', '.join(m.name for m in split[1].members)})", "", "", Severity.WARNING))
    return problems


def host_namespace_addresses(lab: LabContext) -> list[tuple[str, str, str]]:
    """Addresses the lab gives the host's own namespace (the host node, numbered bridges), each with the subject and
    id of what gives it."""
    placed: list[tuple[str, str, str]] = [(address, node.subject, node.node.id) for node in lab.nodes.values()
                                          for address in node.kind.host_addresses(node)]
    placed += [(address, f"link {end.link_name}", end.link.id) for end in lab.ends
               if end.kind.role is Role.NAMESPACE and end.netns is None for address in end.end.interface.addresses]
    return placed
