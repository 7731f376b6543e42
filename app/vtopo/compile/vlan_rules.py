"""The classic VLAN mistakes, read off the lab's broadcast domains: a host whose gateway its VLAN does not reach,
a VLAN that a trunk does not carry between hosts of its subnet (each with the port or trunk that does not carry the
VLAN), and one subnet split over two VLANs. Two subnets in one VLAN is broadcast_domains.py's rule of two subnets on one wire,
which names the VLAN. A check that finds two hosts of one subnet apart asks `vlan_gap` why.

Each is a warning: the lab deploys, and its checks show what the mistake breaks.
"""
from __future__ import annotations

import ipaddress
from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass

from vtopo.compile.analysis import FORWARDING_ROLES, switch_ports, vlans_at
from vtopo.compile.broadcast_domains import Domain, Member, Network, VlanMap, vlan_words
from vtopo.kinds.contract import EndContext, LabContext, PortVlans
from vtopo.model.problems import Problem, Severity


@dataclass(frozen=True)
class Gap:
    """Where a VLAN stops on its way from one member's switch port to another's: the ends of the first link that
    does not carry it both ways, or the other member's own port."""

    vlan: int
    ends: tuple[EndContext, ...]
    goal: EndContext
    """The switch port of the member the VLAN should reach."""
    reached: Member

    @property
    def key(self) -> tuple[int, tuple[str, ...]]:
        return self.vlan, tuple(_port(e) for e in self.ends)

    @property
    def where(self) -> str:
        if self.ends[0] is self.goal:
            untagged = " untagged" if not _tagged(self.reached) and _as_port(self.goal).startswith("a trunk") else ""
            return (f"{self.reached.name} is plugged into {_port(self.goal)}, {_as_port(self.goal)}, which does not "
                    f"give it VLAN {self.vlan}{untagged}")
        return (f"the link {self.ends[0].link_name} on the way does not carry VLAN {self.vlan} "
                f"({', '.join(f'{_port(e)} is {_as_port(e)}' for e in self.ends)})")

    @property
    def fix(self) -> str:
        """The setting's lines that make the ports carry the VLAN: `s1: p4 = trunk 10,20`."""
        untagged = not _tagged(self.reached)
        return " and ".join(f"{e.node.name}: {e.end.port} = {_carrying(e, self.vlan, e is self.goal and untagged)}"
                            for e in self.ends)

    def problem(self, message: str) -> Problem:
        return Problem(message, f"link {self.ends[0].link_name}", "", self.ends[0].link.id, Severity.WARNING)


class _Way:
    """The lab's switches, their VLANs, and the ways between them."""

    def __init__(self, lab: LabContext) -> None:
        self.vlans = VlanMap(switch_ports(lab))
        self.trunks = _trunks(lab)

    def gap(self, source: Member, target: Member) -> Gap | None:
        """Where the VLAN of `source` stops on its way to `target`; None where it does not, or VLANs are not what
        stands between them."""
        port, vlan, goal = self.vlans.port(source), self.vlans.of(source), self.vlans.port(target)
        if port is None or vlan is None or goal is None:
            return None
        ends = _first_lacking(self.trunks, port, goal, vlan, _tagged(target))
        return Gap(vlan, tuple(ends), goal, target) if ends else None


def vlan_gap(lab: LabContext, source: Member, target: Member) -> str:
    """Why the VLAN of `source` does not reach `target`, with the lines that fix it; "" where VLANs are not what
    stands between them."""
    gap = _Way(lab).gap(source, target)
    if gap is None:
        return ""
    return f"{source.name} is in VLAN {gap.vlan}, which does not reach {target.name}: {gap.where}. Carry it: {gap.fix}"


def vlan_problems(lab: LabContext, domains: list[Domain]) -> list[Problem]:
    """The VLAN design mistakes in a lab whose switches keep VLANs apart (none in a lab without VLANs)."""
    way = _Way(lab)
    if not any(way.vlans.of(m) is not None for d in domains for m in d.members):
        return []
    gateways, said = _gateways_in_other_vlans(lab, domains, way)
    return gateways + _split_subnets(domains, way, said)


def stranded_by_vlans(lab: LabContext, domains: list[Domain]) -> set[str]:
    """The ids of the nodes whose gateway a VLAN keeps out of reach (vlan_problems says where): the rule of nodes
    that share no wire with a router need not say it again."""
    way = _Way(lab)
    return {member.node_id for _, member, _ in _stranded(lab, domains, way)}


def _stranded(lab: LabContext, domains: list[Domain], way: _Way) -> Iterator[tuple[str, Member, Gap]]:
    """Each node's interface whose default gateway is an address of its subnet found in the lab, but not in its
    broadcast domain, with the gateway and where the interface's VLAN stops on the way there."""
    holders = {i.ip: member for domain in domains for member in domain.members for i in member.interfaces}
    for node in lab.nodes.values():
        for gateway in node.kind.default_gateways(node) or []:
            address = _address(gateway)
            mine = [(d, m) for d in domains for m in d.members if m.node_id == node.node.id
                    and any(address in i.network for i in m.interfaces)] if address else []
            if not mine or address not in holders or any(address in _addresses(d) for d, _ in mine):
                continue  # a gateway off its subnets has its own problem; one on its wire is right
            if (gap := way.gap(mine[0][1], holders[address])) is not None:
                yield gateway, mine[0][1], gap


def _gateways_in_other_vlans(lab: LabContext, domains: list[Domain], way: _Way
                             ) -> tuple[list[Problem], set[tuple[int, tuple[str, ...]]]]:
    """Hosts whose gateway their VLAN does not reach: one problem per gateway and gap, at the first port on the way
    that does not carry the hosts' VLAN. With the gaps said."""
    stranded: dict[tuple[str, tuple[int, tuple[str, ...]]], list[Member]] = defaultdict(list)
    gaps: dict[tuple[str, tuple[int, tuple[str, ...]]], Gap] = {}
    for gateway, member, gap in _stranded(lab, domains, way):
        stranded[gateway, gap.key].append(member)
        gaps[gateway, gap.key] = gap
    problems = []
    for (gateway, key), members in stranded.items():
        gap = gaps[gateway, key]
        their = "their" if len(members) > 1 else "its"
        problems.append(gap.problem(
            f"{', '.join(m.name for m in members)} in VLAN {gap.vlan} use{'s' if len(members) == 1 else ''} "
            f"{gateway} ({gap.reached.name}) as {their} gateway, but VLAN {gap.vlan} does not reach it: {gap.where}, "
            f"so {their} frames never get there. Carry VLAN {gap.vlan} to the gateway: {gap.fix}"))
    return problems, {key for _, key in stranded}


def _carrying(end: EndContext, vlan: int, untagged: bool) -> PortVlans:
    """The VLANs of the port at `end` once it carries `vlan` too, `untagged` where it faces an interface that sends
    no tag: an access port there moves into the VLAN, and a trunk makes it its native VLAN. Elsewhere a trunk tags it
    as well, and an access port becomes a trunk that keeps its VLAN untagged."""
    ports = vlans_at(end)
    assert ports is not None
    if untagged:
        return PortVlans(vlan, tuple(v for v in ports.tagged if v != vlan))
    if ports.trunk:
        return PortVlans(ports.untagged, tuple(sorted({*ports.tagged, vlan})))
    return PortVlans(ports.untagged, (vlan,))


def _trunks(lab: LabContext) -> dict[str, list[EndContext]]:
    """Each switch's ports that are linked to another switch or segment, by the switch's node id."""
    found: dict[str, list[EndContext]] = defaultdict(list)
    for end in lab.ends:
        if end.peer is not None and end.kind.role in FORWARDING_ROLES and end.peer.kind.role in FORWARDING_ROLES:
            found[end.node.id].append(end)
    return found


def _first_lacking(trunks: dict[str, list[EndContext]], start: EndContext, goal: EndContext, vlan: int,
                   tagged: bool) -> list[EndContext]:
    """On the shortest way over switches from the port `start` to the port `goal`, the ends of the first link whose
    ports do not both carry `vlan`, or `goal` if it does not give it to its interface as that takes it (`tagged`, or
    untagged); empty if every port on the way carries it, or no way joins the two."""
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
    ports = vlans_at(goal)
    delivered = ports is None or (vlan in ports.tagged if tagged else vlan == ports.untagged)
    return [] if delivered else [goal]


def _tagged(member: Member) -> bool:
    """Whether the member sends its frames tagged: a subinterface, named for its VLAN (eth0.10)."""
    return member.name.rpartition(".")[2].isdigit()


def _carries(end: EndContext, vlan: int) -> bool:
    ports = vlans_at(end)
    return ports is None or ports.carries(vlan)


def _split_subnets(domains: list[Domain], way: _Way, said: set[tuple[int, tuple[str, ...]]]) -> list[Problem]:
    """A subnet whose addresses lie in two VLANs or more: its hosts send to each other straight, as on one wire, but
    the VLANs keep them apart, and no router can join two halves of one subnet. Where the halves are one VLAN that a
    link does not carry, that link (unless a gateway's problem named it already, in `said`)."""
    halves: dict[Network, list[tuple[list[int], list[Member]]]] = defaultdict(list)
    for domain in domains:
        numbers = way.vlans.numbers(domain)
        for version in (4, 6) if numbers else ():
            subnets = [n for n in domain.subnets if n.version == version]
            if len(subnets) == 1:  # a VLAN of two subnets is the subnet rule's (broadcast_domains.py)
                halves[subnets[0]].append((numbers, [m for m in domain.members if subnets[0] in m.networks]))
    used = {n for d in domains for n in d.subnets}
    problems = []
    for network, parts in halves.items():
        if len({tuple(numbers) for numbers, _ in parts}) < 2:
            problems += _cut(network, parts, way, said)
            continue
        parts.sort(key=lambda part: part[0])
        pieces = " and ".join(f"{vlan_words(numbers)} ({', '.join(m.name for m in members)})"
                              for numbers, members in parts)
        first, second = parts[0][1][0].name, parts[1][1][0].name
        free = _free_subnets(network, used, len(parts) - 1)
        others = " and ".join(f"{subnet} for {vlan_words(numbers)}" for subnet, (numbers, _) in zip(free, parts[1:]))
        fix = f"e.g. {others}" if len(free) == len(parts) - 1 else ""
        problems.append(Problem(
            f"it is split over {pieces}: hosts of one subnet send to each other straight, without a "
            f"router, but the VLANs keep their frames apart, so {first} cannot reach {second}, and no router can join "
            f"two halves of one subnet. Give each VLAN a subnet of its own{', ' + fix if fix else ''}.",
            f"subnet {network}", "", "", Severity.WARNING))
    return problems


def _cut(network: Network, parts: list[tuple[list[int], list[Member]]], way: _Way,
         said: set[tuple[int, tuple[str, ...]]]) -> list[Problem]:
    """One VLAN in pieces, each with hosts of `network`: the link or port where it stops between the first piece and
    each other."""
    problems = []
    for _, members in parts[1:]:
        gap = way.gap(parts[0][1][0], members[0])
        if gap is None or gap.key in said:
            continue
        said.add(gap.key)
        problems.append(gap.problem(
            f"{', '.join(m.name for m in parts[0][1])} and {', '.join(m.name for m in members)} are in VLAN {gap.vlan} "
            f"on {network}, but VLAN {gap.vlan} does not reach from one to the other: {gap.where}, so they cannot "
            f"reach each other. Carry VLAN {gap.vlan} across: {gap.fix}"))
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
