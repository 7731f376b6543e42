"""Automatic addressing: the addresses a new link's ends take from the lab's pool (vtopo.model.addressing).

Each new link gives the ends that hold addresses (a router's, a host's; not a bridge's or switch's port) the next free
address of their LAN: the subnet the LAN has already, or else the next subnet of the pool that no address of the lab is
in. A LAN is what a link end reaches through bridges and switches (their VLANs are not told apart), so a router-router
link gets a subnet of its own and a host joining a switch takes the subnet of the switch's other nodes. A node that
takes a default gateway and has none gets the address of the first router on its LAN.
"""
from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import cast

from vtopo.model.addressing import AddressPool, Network

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

SUBNETS_TRIED = 1 << 16  # of a pool's subnets, how many are looked at for a free one (an IPv6 /48 has 65,536 /64s)
HOSTS_TRIED = 1 << 16  # of a subnet's addresses, how many are looked at for a free one


@dataclass(frozen=True)
class Port:
    """One link end, as the allocator sees it: its node, its addresses, whether it holds any and takes them from
    the pool (not a switch's port, not a DHCP client), and whether its node is a switch (or segment), whose other
    ends are on its LAN."""

    link: str
    side: str  # "a" or "b"
    node: str
    addresses: tuple[str, ...]
    addressed: bool
    switch: bool


@dataclass(frozen=True)
class NodeRole:
    """What the allocator needs to know about a node: whether it routes (and so is a LAN's gateway), and its IPv4
    default gateway: None for a node that takes none, "" for one that has none yet."""

    routes: bool = False
    gateway: str | None = None


@dataclass
class Allocation:
    """What automatic addressing gives: new addresses per link end (link id, side) and new default gateways per node
    id, and why an end got none (a pool with no free subnet)."""

    addresses: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    gateways: dict[str, str] = field(default_factory=dict)
    shortages: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.addresses or self.gateways)


def allocate(pool: AddressPool, ports: list[Port], roles: dict[str, NodeRole], new_links: Iterable[str]) -> Allocation:
    """The addresses the ends of `new_links` that hold addresses and have none take from `pool`, and the gateways of
    the nodes on their LANs. `ports` are every link end of the lab, the new links' included."""
    allocation = Allocation()
    if pool.empty:
        return allocation
    addresses = {(port.link, port.side): list(port.addresses) for port in ports}
    used = _Used([address for port in ports for address in port.addresses])
    lans = _Lans(ports)
    for link in new_links:
        for port in (p for p in lans.ends_of(link) if p.addressed and not p.addresses):
            lan = lans.of(port)
            for network, prefix in pool.pools():
                address, shortage = used.next_address(network, prefix,
                                                      [a for p in lan for a in addresses[(p.link, p.side)]])
                if shortage:
                    allocation.shortages.append(shortage)
                    continue
                used.add(address)
                addresses[(port.link, port.side)].append(address)
                allocation.addresses.setdefault((port.link, port.side), []).append(address)
            allocation.gateways.update(_gateways(lan, roles, addresses, allocation.gateways))
    return allocation


class _Lans:
    """Which addressed ends share a LAN: those one end reaches through switches."""

    def __init__(self, ports: list[Port]) -> None:
        self._by_end = {(p.link, p.side): p for p in ports}
        self._by_node: dict[str, list[Port]] = {}
        self._by_link: dict[str, list[Port]] = {}
        for port in ports:
            self._by_node.setdefault(port.node, []).append(port)
            self._by_link.setdefault(port.link, []).append(port)

    def ends_of(self, link: str) -> list[Port]:
        return self._by_link.get(link, [])

    def _peer(self, port: Port) -> Port:
        return self._by_end[(port.link, "b" if port.side == "a" else "a")]

    def of(self, port: Port) -> list[Port]:
        """The addressed ends on `port`'s LAN, `port` itself included."""
        lan, seen_switches = [port], set()
        waiting = [self._peer(port)]
        while waiting:
            end = waiting.pop()
            if not end.switch:
                if end.addressed and end not in lan:
                    lan.append(end)
                continue
            if end.node in seen_switches:
                continue
            seen_switches.add(end.node)
            waiting += [self._peer(other) for other in self._by_node[end.node]]
        return lan


def _interfaces(addresses: Iterable[str]) -> Iterator[ipaddress.IPv4Interface | ipaddress.IPv6Interface]:
    for address in addresses:
        try:
            interface = ipaddress.ip_interface(address)
        except ValueError:
            continue
        if "/" in address and not interface.is_link_local:
            yield interface


class _Used:
    """The lab's addresses, and the subnets they are in, as the allocation goes."""

    def __init__(self, addresses: list[str]) -> None:
        self._taken: set[Address] = set()
        self._networks: set[Network] = set()
        for address in addresses:
            self.add(address)

    def add(self, address: str) -> None:
        for interface in _interfaces([address]):
            self._taken.add(interface.ip)
            self._networks.add(interface.network)

    def _free(self, pool: Network, prefix: int) -> Network | None:
        """The pool's first subnet of length `prefix` that no address of the lab is in."""
        inside = [network for network in self._networks if network.version == pool.version and
                  network.overlaps(pool)]
        blocked = {network.supernet(new_prefix=prefix) for network in inside if network.prefixlen >= prefix}
        wider = [network for network in inside if network.prefixlen < prefix]
        subnets = cast(Iterator[Network], pool.subnets(new_prefix=prefix))
        return next((subnet for subnet in islice(subnets, SUBNETS_TRIED) if subnet not in blocked and
                     not any(subnet.network_address in network for network in wider)), None)

    def next_address(self, pool: Network, prefix: int, lan: list[str]) -> tuple[str, str]:
        """The next free address for an end on a LAN whose ends have the addresses `lan` (in the LAN's subnet of the
        pool's version if it has one, else in the pool's first free subnet) and "", or "" and why there is none."""
        own = next((i.network for i in _interfaces(lan) if i.version == pool.version), None) or \
            self._free(pool, prefix)
        if own is None:
            return "", f"the pool {pool} has no free /{prefix} subnet left"
        hosts = cast(Iterator[Address], own.hosts())
        host = next((ip for ip in islice(hosts, HOSTS_TRIED) if ip not in self._taken), None)
        return (f"{host}/{own.prefixlen}", "") if host is not None else ("", f"the LAN's subnet {own} is full")


def _gateways(lan: list[Port], roles: dict[str, NodeRole], addresses: dict[tuple[str, str], list[str]],
              given: dict[str, str]) -> dict[str, str]:
    """The first router's IPv4 address on the LAN, as the gateway of each node on it that takes one and has none."""
    router = next((interface.ip for port in lan if roles.get(port.node, NodeRole()).routes
                   for interface in _interfaces(addresses[(port.link, port.side)]) if interface.version == 4), None)
    if router is None:
        return {}
    return {port.node: str(router) for port in lan
            if roles.get(port.node, NodeRole()).gateway == "" and port.node not in given}
