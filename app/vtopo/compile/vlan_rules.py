"""The classic VLAN mistakes, read off the lab's broadcast domains: a host whose gateway sits in another VLAN (with
the port or trunk that does not carry the host's VLAN to it), and one subnet split over two VLANs. Two subnets in one
VLAN is domains.py's rule of two subnets on one wire, which names the VLAN.

Each is a warning: the lab deploys, and its checks show what the mistake breaks.
"""
from __future__ import annotations

import ipaddress
from collections import defaultdict, deque

from vtopo.compile.analysis import FORWARDING_ROLES, switch_ports, vlans_at
from vtopo.compile.domains import Domain, Member, Network, VlanMap, vlan_words
from vtopo.kinds.contract import EndContext, LabContext, PortVlans
from vtopo.model.problems import Problem, Severity


def vlan_problems(lab: LabContext, domains: list[Domain]) -> list[Problem]:
    """The VLAN design mistakes in a lab whose switches keep VLANs apart (none in a lab without VLANs)."""
    vlans = VlanMap(switch_ports(lab))
    if not any(vlans.of(m) is not None for d in domains for m in d.members):
        return []
    return _gateways_in_other_vlans(lab, domains, vlans) + _split_subnets(domains, vlans)


def _gateways_in_other_vlans(lab: LabContext, domains: list[Domain], vlans: VlanMap) -> list[Problem]:
    """Hosts whose default gateway is an address of their subnet found in the lab, but not in their broadcast domain:
    one problem per gateway and VLAN, at the first port on the way that does not carry the hosts' VLAN."""
    holders = {i.ip: member for domain in domains for member in domain.members for i in member.interfaces}
    stranded: dict[tuple[str, str, int, tuple[str, ...]], list[Member]] = defaultdict(list)
    lacking: dict[tuple[str, str, int, tuple[str, ...]], tuple[list[EndContext], EndContext, Member]] = {}
    trunks = _trunks(lab)
    for node in lab.nodes.values():
        for gateway in node.kind.default_gateways(node) or []:
            address = _address(gateway)
            mine = [(d, m) for d in domains for m in d.members if m.node_id == node.node.id
                    and any(address in i.network for i in m.interfaces)] if address else []
            if not mine or address not in holders or any(address in _addresses(d) for d, _ in mine):
                continue  # a gateway off its subnets has its own problem; one on its wire is right
            member, holder = mine[0][1], holders[address]
            port, vlan, gateway_port = vlans.port(member), vlans.of(member), vlans.port(holder)
            if port is None or vlan is None or gateway_port is None:
                continue
            ends = _first_lacking(trunks, port, gateway_port, vlan)
            if ends:
                key = (gateway, holder.name, vlan, tuple(_port(e) for e in ends))
                stranded[key].append(member)
                lacking[key] = (ends, gateway_port, holder)
    return [_stranded(key[0], key[2], members, *lacking[key]) for key, members in stranded.items()]


def _stranded(gateway: str, vlan: int, members: list[Member], ends: list[EndContext], gateway_port: EndContext,
              holder: Member) -> Problem:
    hosts = ", ".join(m.name for m in members)
    their = "their" if len(members) > 1 else "its"
    fixes = " and ".join(f"{e.node.name}: {e.end.port} = {_carrying(e, vlan, e is gateway_port)}" for e in ends)
    if ends[0] is gateway_port:
        where = (f"{holder.name} is plugged into {_port(gateway_port)}, {_as_port(gateway_port)}, which does not take "
                 f"VLAN {vlan}")
    else:
        where = (f"the link {ends[0].link_name} on the way there does not carry VLAN {vlan} "
                 f"({', '.join(f'{_port(e)} is {_as_port(e)}' for e in ends)})")
    return Problem(f"{hosts} in VLAN {vlan} use{'s' if len(members) == 1 else ''} {gateway} ({holder.name}) as {their} "
                   f"gateway, but VLAN {vlan} does not reach it: {where}, so {their} frames never get there. Carry "
                   f"VLAN {vlan} to the gateway: {fixes}", f"link {ends[0].link_name}", "", ends[0].link.id,
                   Severity.WARNING)


def _carrying(end: EndContext, vlan: int, facing_gateway: bool) -> PortVlans:
    """The VLANs of the port at `end` once it carries `vlan` too: a trunk tags it as well; an access port facing the
    gateway's interface moves into it, one between switches becomes a trunk that keeps its VLAN untagged."""
    ports = vlans_at(end)
    assert ports is not None
    if ports.trunk:
        return PortVlans(ports.untagged, tuple(sorted({*ports.tagged, vlan})))
    return PortVlans(vlan) if facing_gateway else PortVlans(ports.untagged, (vlan,))


def _trunks(lab: LabContext) -> dict[str, list[EndContext]]:
    """Each switch's ports that are linked to another switch or segment, by the switch's node id."""
    found: dict[str, list[EndContext]] = defaultdict(list)
    for end in lab.ends:
        if end.peer is not None and end.kind.role in FORWARDING_ROLES and end.peer.kind.role in FORWARDING_ROLES:
            found[end.node.id].append(end)
    return found


def _first_lacking(trunks: dict[str, list[EndContext]], start: EndContext, goal: EndContext, vlan: int
                   ) -> list[EndContext]:
    """On the shortest way over switches from the host's port `start` to the gateway's port `goal`, the ends of the
    first link whose ports do not both carry `vlan`, or the gateway's port if it does not; empty if every port on
    the way carries it, or no way joins the two."""
    came: dict[str, EndContext | None] = {start.node.id: None}
    queue = deque([start.node.id])
    while queue and goal.node.id not in came:
        here = queue.popleft()
        for end in trunks[here]:
            assert end.peer is not None
            if end.peer.node.id not in came:
                came[end.peer.node.id] = end
                queue.append(end.peer.node.id)
    if goal.node.id not in came:
        return []
    way = []
    step = came[goal.node.id]
    while step is not None:
        assert step.peer is not None
        way.append((step, step.peer))
        step = came[step.node.id]
    for ends in reversed(way):
        lacking = [e for e in ends if not _carries(e, vlan)]
        if lacking:
            return lacking
    return [] if _carries(goal, vlan) else [goal]


def _carries(end: EndContext, vlan: int) -> bool:
    ports = vlans_at(end)
    return ports is None or ports.carries(vlan)


def _split_subnets(domains: list[Domain], vlans: VlanMap) -> list[Problem]:
    """A subnet whose addresses lie in two VLANs or more: its hosts send to each other straight, as on one wire, but
    the VLANs keep them apart, and no router can join two halves of one subnet."""
    halves: dict[Network, list[tuple[list[int], list[Member]]]] = defaultdict(list)
    for domain in domains:
        numbers = vlans.numbers(domain)
        for version in (4, 6) if numbers else ():
            subnets = [n for n in domain.subnets if n.version == version]
            if len(subnets) == 1:  # a VLAN of two subnets is the subnet rule's (domains.py)
                halves[subnets[0]].append((numbers, [m for m in domain.members if subnets[0] in m.networks]))
    used = {n for d in domains for n in d.subnets}
    problems = []
    for network, parts in halves.items():
        if len({tuple(numbers) for numbers, _ in parts}) < 2:
            continue  # one VLAN cut in two: the link that does not carry it is the mistake
        parts.sort(key=lambda part: part[0])
        said = " and ".join(f"{vlan_words(numbers)} ({', '.join(m.name for m in members)})"
                            for numbers, members in parts)
        first, second = parts[0][1][0].name, parts[1][1][0].name
        free = _free_subnets(network, used, len(parts) - 1)
        fix = (f"e.g. {' and '.join(f'{subnet} for {vlan_words(numbers)}' for subnet, (numbers, _) in zip(free, parts[1:]))}"
               if len(free) == len(parts) - 1 else "")
        problems.append(Problem(
            f"it is split over {said}: hosts of one subnet send to each other straight, without a "
            f"router, but the VLANs keep their frames apart, so {first} cannot reach {second}, and no router can join "
            f"two halves of one subnet. Give each VLAN a subnet of its own{', ' + fix if fix else ''}.",
            f"subnet {network}", "", "", Severity.WARNING))
    return problems


def _free_subnets(network: Network, used: set[Network], count: int) -> list[Network]:
    """The next `count` subnets of the size of `network` after it that overlap none of the lab's."""
    free: list[Network] = []
    start = int(network.network_address)
    for step in range(1, 4096):
        try:
            candidate = ipaddress.ip_network((start + step * network.num_addresses, network.prefixlen))
        except ValueError:
            break
        if not any(candidate.overlaps(other) for other in used if other.version == candidate.version):
            free.append(candidate)
            if len(free) == count:
                break
    return free


def _address(gateway: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(gateway.partition("%")[0])
    except ValueError:
        return None


def _addresses(domain: Domain) -> set[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    return {i.ip for m in domain.members for i in m.interfaces}


def _port(end: EndContext) -> str:
    return f"{end.node.name}:{end.end.port}"


def _as_port(end: EndContext) -> str:
    ports = vlans_at(end)
    assert ports is not None
    if not ports.trunk:
        return f"an access port in VLAN {ports.untagged}"
    return f"a trunk of {vlan_words(list(ports.tagged))}" + (f" and native VLAN {ports.untagged}"
                                                             if ports.untagged is not None else "")
