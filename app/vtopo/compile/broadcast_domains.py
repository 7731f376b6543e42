"""L2 broadcast domains of a lab, for the designer's view and its legend, and the classic student mistakes in them.

A domain is what a broadcast frame reaches: the interfaces joined by bridges, OVS switches in normal mode and
macvlan segments in bridge mode. Routers (and the host, where it routes between numbered bridges) are its borders.
"""
from __future__ import annotations

import functools
import ipaddress
from collections import Counter
from collections.abc import Collection
from itertools import combinations
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Hashable

from vtopo.compile.analysis import SVI_EDGE, emptied_after, l2_graph, switch_ports, vlans_at
from vtopo.kinds.contract import EndContext, LabContext, NodeContext, svi_name, vlan_interfaces_of
from vtopo.model.problems import Problem, Severity

if TYPE_CHECKING:
    import networkx as nx

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Interface = ipaddress.IPv4Interface | ipaddress.IPv6Interface


@dataclass(frozen=True)
class Member:
    """An interface in a domain: a node's link end ("h1:eth0"), or the host's address on a numbered bridge."""

    name: str
    node_id: str
    addresses: tuple[str, ...]
    routes: bool
    """The node routes: it is a gateway out of this domain."""
    link_id: str = ""
    """The link this end belongs to ("" for the host's address on a bridge)."""

    @property
    def interfaces(self) -> list[Interface]:
        """The member's addresses with their prefixes, link-local ones (fe80::/10) left out: every IPv6 interface
        has one, and no router forwards to them."""
        found = [interface for address in self.addresses if (interface := parsed_interface(address)) is not None]
        return [i for i in found if not i.is_link_local]

    @property
    def networks(self) -> set[Network]:
        return {i.network for i in self.interfaces}


@dataclass(frozen=True)
class Domain:
    """A broadcast domain: the interfaces a broadcast frame reaches, numbered from 1."""

    number: int
    members: tuple[Member, ...]
    switches: tuple[str, ...]
    """The bridges, switches and segments that join it, by name."""
    link_ids: frozenset[str]
    vlans: tuple[int, ...] = ()
    """The VLANs it is on the switches that keep VLANs apart (or whose tag it carries across those that do not);
    none for a domain of untagged frames only."""

    @property
    def subnets(self) -> list[Network]:
        return sorted({n for m in self.members for n in m.networks}, key=lambda n: (n.version, n))

    @property
    def vlan_names(self) -> str:
        """"VLAN 10", "VLANs 10, 20" (a VLAN split on one switch, joined again across another), "" for none."""
        if not self.vlans:
            return ""
        return f"VLAN{'s' if len(self.vlans) > 1 else ''} {', '.join(map(str, self.vlans))}"

    def describe(self) -> str:
        subnets = ", ".join(map(str, self.subnets)) or "no subnet"
        via = f" via {', '.join(self.switches)}" if self.switches else ""
        vlans = f" ({self.vlan_names})" if self.vlans else ""
        return f"domain {self.number}{vlans}: {subnets}{via}: {', '.join(m.name for m in self.members)}"


class VlanMap:
    """The switch port each member is plugged into, and the VLAN of its untagged frames there."""

    def __init__(self, ports: dict[tuple[str, str], EndContext]) -> None:
        self._ports = ports

    def port(self, member: Member) -> EndContext | None:
        return self._ports.get((member.link_id, member.node_id))

    def of(self, member: Member) -> int | None:
        """The member's VLAN where its switch keeps VLANs apart, else None."""
        port = self.port(member)
        vlans = vlans_at(port) if port is not None else None
        return vlans.untagged if vlans is not None else None

    def numbers(self, domain: Domain) -> list[int]:
        """The VLANs a domain is, on switches that keep VLANs apart (more than one where a trunk's two ends disagree
        on its native VLAN); empty for a domain of switches without VLANs."""
        return sorted({number for m in domain.members if (number := self.of(m)) is not None})


def vlan_words(numbers: list[int]) -> str:
    """VLAN 10, VLANs 1 and 99."""
    if len(numbers) == 1:
        return f"VLAN {numbers[0]}"
    return f"VLANs {', '.join(map(str, numbers[:-1]))} and {numbers[-1]}"


def broadcast_domains_of(lab: LabContext) -> list[Domain]:
    """Every broadcast domain with at least one interface, in a stable order, numbered from 1."""
    with emptied_after(l2_graph(lab)) as graph:
        return domains_in(lab, graph)


def domains_in(lab: LabContext, graph: nx.MultiGraph[Hashable]) -> list[Domain]:
    """Every broadcast domain of the lab's `l2_graph` with at least one interface (see `broadcast_domains_of`)."""
    import networkx as nx

    found = []
    for component in nx.connected_components(graph):
        ends = sorted((graph.nodes[v]["end"] for v in component if graph.nodes[v]["end"] is not None),
                      key=lambda e: (e.node.name, e.end.port))
        switch_ids = sorted({v[1] for v in component if isinstance(v, tuple) and v[0] == "node"})
        switches = [lab.nodes[i] for i in switch_ids]
        subinterfaces = sorted((graph.nodes[v]["sub"] for v in component if graph.nodes[v]["sub"] is not None),
                               key=lambda i: (i.end.node.name, i.port))
        members = [Member(f"{e.node.name}:{e.end.port}", e.node.id, tuple(e.end.interface.addresses),
                          e.kind.routes(e.owner), e.link.id) for e in ends]
        members += [Member(f"{i.end.node.name}:{i.port}", i.end.node.id, i.addresses, i.end.kind.routes(i.end.owner),
                           i.end.link.id) for i in subinterfaces]
        svis = sorted((graph.nodes[v]["svi"] for v in component if graph.nodes[v]["svi"] is not None),
                      key=lambda svi: (svi[0].node.name, svi[1]))
        members += [Member(f"{s.node.name}:{svi_name(vlan)}", s.node.id, vlan_interfaces_of(s)[vlan], True)
                    for s, vlan in svis]
        members += [member for s in switches for member in _host_members(s)]
        if not members:
            continue
        # the edges at a component's vertices are the component's edges (a subgraph view would leave a cycle of
        # views behind per domain, garbage that only the cycle collector frees, with the interpreter lock held)
        links = {key for _, _, key in graph.edges(component, keys=True) if key != SVI_EDGE} | {e.link.id for e in ends}
        vlans = sorted({v[2] for v in component if isinstance(v, tuple) and v[0] == "node" and v[2] is not None})
        found.append((members, tuple(sorted(s.node.name for s in switches)), frozenset(links), tuple(vlans)))
    found.sort(key=lambda item: item[0][0].name)
    return [Domain(index, tuple(members), switches, links, vlans) for index, (members, switches, links, vlans) in
            enumerate(found, 1)]


def domain_problems(lab: LabContext, stranded: Collection[str] = (), domains: list[Domain] | None = None) -> list[Problem]:
    """Subnets that do not match their wire, and nodes cut off from the lab's routers (but those in `stranded`, whose
    gateway a VLAN keeps out of reach: vlan_rules.py says where), in plain words: warnings, and errors where only
    routers share the wire (they would exchange no routes over it). `domains`: the lab's broadcast domains, when the
    caller has them."""
    domains = broadcast_domains_of(lab) if domains is None else domains
    vlans = _Vlans(VlanMap(switch_ports(lab)), domains, _all_vlans(lab))
    problems = [problem for domain in domains for version in (4, 6)
                for problem in _subnet_mismatches(domain, version, vlans)]
    for version in (4, 6):
        routed = {n for d in domains for m in d.members if m.routes for n in m.networks if n.version == version}
        if routed:
            problems += _unreachable_gateways(lab, domains, routed, version, stranded)
    return problems


def _on_link(a: Interface, b: Interface) -> bool:
    """Whether two interfaces on one wire talk without a router: each one's address lies in the other's subnet
    (10.0.12.1/24 and 10.0.12.2/30 do, though their masks differ)."""
    return a.ip in b.network and b.ip in a.network


class _Vlans:
    """What the subnet rule says of VLANs: the VLANs of a domain, and where to move a port whose subnet differs."""

    def __init__(self, vlans: VlanMap, domains: list[Domain], used: set[int]) -> None:
        self.map = vlans
        numbers = {domain.number: vlans.numbers(domain) for domain in domains}
        self.used = used
        self.homes = {network: found[0] for domain in domains if len(found := numbers[domain.number]) == 1
                      and len(domain.subnets) == 1 for network in domain.subnets}

    def move(self, members: list[Member], network: Network) -> str:
        """The fix that moves the switch ports of `members` into the VLAN that holds `network`, or a new one: ", or
        move ... into VLAN 20, that of 10.0.20.0/24: s1: p3 = access 20"; "" for members on no switch port."""
        ports = [port for m in members if (port := self.map.port(m)) is not None]
        if not ports:
            return ""
        home = self.homes.get(network)
        own = "its" if len(ports) == 1 else "their"
        where = f"VLAN {home}, that of {network}" if home else f"a VLAN of {own} own"
        home = home or next(n for n in [*range(10 * (max(self.used) // 10 + 1), 4095, 10), *range(1, 4095)]
                            if n not in self.used)
        lines = " and ".join(f"{p.node.name}: {p.end.port} = access {home}" for p in ports)
        return f", or move {own} port{'s' if len(ports) > 1 else ''} into {where}: {lines}"


def _all_vlans(lab: LabContext) -> set[int]:
    """Every VLAN a port of the lab's switches names."""
    found: set[int] = set()
    for end in lab.ends:
        if (vlans := vlans_at(end)) is not None:
            found.update(vlans.tagged)
            found.update([vlans.untagged] if vlans.untagged is not None else [])
    return found


def _subnet_mismatches(domain: Domain, version: int, vlans: _Vlans) -> list[Problem]:
    """A member off the subnet of the rest of its wire. A warning, or an error where routers cannot reach each other:
    they would exchange no routes over it. None where a router has an address in each subnet: it joins them."""
    interfaces = [(m, i) for m in domain.members for i in m.interfaces if i.version == version]
    counts = Counter(i.network for _, i in interfaces)
    if len(counts) < 2 or any(m.routes and counts.keys() <= m.networks for m in domain.members):
        return []
    numbers = vlans.map.numbers(domain)
    wire = vlan_words(numbers) if numbers else "its broadcast domain"
    (top, top_count), (_, second_count) = counts.most_common(2)
    across = [((a, x), (b, y)) for (a, x), (b, y) in combinations(interfaces, 2) if x.network != y.network]
    apart_pairs = [(a, b) for (a, x), (b, y) in across if not _on_link(x, y)]
    if top_count == second_count and len(apart_pairs) == len(across):
        subnets = " and ".join(str(n) for n in sorted(counts))
        severity = _severity(apart_pairs)
        why, fix = (("routers on different subnets never become neighbours nor exchange routes", "") if severity is
                    Severity.ERROR else ("hosts on different subnets do not talk without a router",
                                         ", or put a router between two separate segments"))
        if numbers:
            last = max(counts)
            fix = vlans.move([m for m, i in interfaces if i.network == last], last) or fix
        holder = f"{vlan_words(numbers)} hold{'s' if len(numbers) == 1 else ''}" if numbers else \
            "one broadcast domain holds"
        return [Problem(
            f"{holder} {_count(len(counts))} subnets, {subnets}: their frames reach each other, but {why}, so "
            f"nothing passes between them. Give every interface {'in it' if numbers else 'on this wire'} the same "
            f"subnet{fix}.",
            f"domain {domain.number} ({', '.join(m.name for m in domain.members)})", "", _one_link(domain),
            severity)]
    rest = [(m, i) for m, i in interfaces if i.network == top]
    on_top = {id(m) for m, _ in rest}
    problems = []
    for member, interface in interfaces:
        if id(member) in on_top:
            continue
        on_top.add(id(member))  # one problem per member
        apart = [other for other, theirs in rest if not _on_link(interface, theirs)]
        severity = _severity([(member, other) for other in apart])
        if apart:
            routes = " nor exchange routes with them" if severity is Severity.ERROR else ""
            move = vlans.move([member], interface.network) if numbers else ""
            message = (f"{member.name} is on {interface.network} ({interface.ip}) but the rest of {wire} is on "
                       f"{top}: it shares their wire, not their subnet, so it cannot reach "
                       f"{_names(apart)}{routes}. Use an address in {top}{move}.")
        else:
            message = (f"{member.name} has {interface} where the rest of {wire} is on {top}: they "
                       "still reach each other, as each address lies in the other's subnet, but the masks differ. "
                       f"Give every interface on this wire the same mask (/{top.prefixlen}).")
        problems.append(Problem(message, f"node {member.name.split(':')[0]}", "", member.node_id, severity))
    return problems


def _count(number: int) -> str:
    return {2: "two", 3: "three", 4: "four"}.get(number, str(number))


def _severity(apart: list[tuple[Member, Member]]) -> Severity:
    """An error when two routers on one wire cannot reach each other (they exchange no routes over it), else a
    warning."""
    return Severity.ERROR if any(a.routes and b.routes and a.node_id != b.node_id for a, b in apart) \
        else Severity.WARNING


def _names(members: list[Member]) -> str:
    names = [m.name for m in members]
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _host_members(switch: NodeContext[Any]) -> list[Member]:
    """The host on a numbered switch: its IPv4 addresses route when the switch routes, its IPv6 ones never (Linux
    forwards IPv6 only with the host's global setting, which vtopo leaves alone)."""
    addresses = switch.kind.host_addresses(switch)
    by_version = {version: tuple(a for a in addresses if _version_of(a.partition("/")[0]) == version)
                  for version in (4, 6)}
    return [Member(f"host on {switch.node.name}", switch.node.id, by_version[version],
                   switch.kind.routes(switch) and version == 4) for version in (4, 6) if by_version[version]]


def _one_link(domain: Domain) -> str:
    """The domain's link, for the designer to select, when it has only one (two nodes linked straight)."""
    return next(iter(domain.link_ids)) if len(domain.link_ids) == 1 else ""


def _unreachable_gateways(lab: LabContext, domains: list[Domain], routed: set[Network], version: int,
                          stranded: Collection[str]) -> list[Problem]:
    problems = []
    ip = "IPv4" if version == 4 else "IPv6"
    for node in lab.nodes.values():
        if node.node.id in stranded:
            continue
        gateways = node.kind.default_gateways(node)
        own = [d for d in domains if any(m.node_id == node.node.id and m.addresses for m in d.members)]
        mine = {n for d in own for m in d.members if m.node_id == node.node.id for n in m.networks}
        if gateways is None or not own or not any(n.version == version for n in mine):
            continue
        routers = {i.ip for d in own for m in d.members if m.routes and m.node_id != node.node.id
                   for i in m.interfaces if i.version == version}
        beyond = sorted(routed - mine)
        if not routers and beyond:
            problems.append(_warn(node, f"no router shares a broadcast domain with {node.node.name}, so it can reach "
                                        f"none of the {ip} subnets the lab's routers know ({_some(beyond)}). Link it "
                                        "to a segment a router is on."))
        elif beyond and not any(_version_of(g) == version for g in gateways):
            setting = "default gateway" if version == 4 else "IPv6 default gateway"
            problems.append(_warn(node, f"{node.node.name} has no {ip} default route, so it can only reach its own "
                                        f"segment, not {_some(beyond)} behind the routers. Set its {setting} to "
                                        f"{', '.join(sorted(map(str, routers)))}."))
    return problems


def _version_of(address: str) -> int:
    try:
        return ipaddress.ip_address(address.partition("%")[0]).version
    except ValueError:
        return 0


def _warn(node: NodeContext[Any], message: str) -> Problem:
    return Problem(message, node.subject, "", node.node.id, Severity.WARNING)


def _some(networks: list[Network]) -> str:
    return ", ".join(map(str, networks[:3])) + (", ..." if len(networks) > 3 else "")


@functools.lru_cache(maxsize=1 << 16)
def parsed_interface(address: str) -> Interface | None:
    """`address` parsed, or None unless it is an address with its prefix. Parsed once however often it is asked
    for: each rule asks each member of a domain for its interfaces, the address rules and /etc/hosts each address
    (10 parses of each address at 400 containers, a third of the lab's compile)."""
    if "/" not in address:
        return None
    try:
        return ipaddress.ip_interface(address)
    except ValueError:
        return None
