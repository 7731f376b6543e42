"""Why packets do not arrive, found the way a student would look: follow the route hop by hop through each node's own
routing table (`ip route get`), and at each hop look at the interface it leaves by and at the wire it lands on.

The first fault found is said in one sentence that names the node, the port or link, and what to change: a link on
the path that is down, a mask that takes the destination into the node's own subnet, a router with no route, a
gateway that is not on the node's wire. The way back, from the destination to the source's address, is followed
too: a reply lost on it looks the same to ping.
"""
from __future__ import annotations

import ipaddress
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from vtopo.compile.analysis import path_between
from vtopo.compile.broadcast_domains import Domain, Member, broadcast_domains_of
from vtopo.compile.vlan_rules import vlan_gap
from vtopo.kinds.contract import EndContext, LabContext, NodeContext, Role
from vtopo.measure.nodes import MeasureError

MAX_STEPS = 8
NO_ROUTE = ("Network is unreachable", "No route to host")  # what `ip route get` says when the table has no route
Run = Callable[[str, list[str]], str]
"""The standard output of a command run inside a node; MeasureError when it fails."""


@dataclass
class RouteWalk:
    lab: LabContext
    run: Run
    node_of: Callable[[str], str | None]
    _domains: list[Domain] = field(default_factory=list)

    def why(self, source: str, destination: str, address: str) -> str:
        """The first fault on the way from `source` to `address` (of `destination`), then on the way back; "" when
        the routing tables and links show none."""
        fault, source_address = self._walk(source, address, destination)
        if fault or not source_address:
            return fault
        back, _ = self._walk(destination, source_address, source)
        return f"on the way back, {back}" if back else ""

    def _walk(self, start: str, address: str, target: str) -> tuple[str, str]:
        """(the fault, "" if none; the source address the first hop would send from), on the way from node `start`
        to `address` of node `target`."""
        name, source_address = start, ""
        for _ in range(MAX_STEPS):
            node = self.lab.node_named(name)
            if node is None or node.kind.role is not Role.NAMESPACE:
                return "", source_address  # a VM's or a switch's tables are not ours to read
            try:
                route: dict[str, Any] = json.loads(self.run(name, ["ip", "-j", "route", "get", address]))[0]
            except MeasureError as error:
                if not any(words in str(error) for words in NO_ROUTE):
                    return f"{name}'s route to {address} could not be read: {error}", source_address
                return self._no_route(node, address, target), source_address
            except (ValueError, IndexError, KeyError):
                return self._no_route(node, address, target), source_address
            source_address = source_address or str(route.get("prefsrc", ""))
            end = next((e for e in node.ends if e.device and e.device == route.get("dev")), None)
            if end is None:
                return "", source_address  # the address is the node's own
            if fault := self._down(end):
                return fault, source_address
            gateway = route.get("gateway")
            if gateway is None:
                return self._arrival(end, address), source_address
            owner = self.node_of(gateway)
            if owner is None or self._member_with(end, gateway) is None:
                return (f"{name} sends {address} to its gateway {gateway}, but no interface on the wire of "
                        f"{_port(end)} has that address: set {name}'s gateway to a router on that wire"), source_address
            name = owner
        return "", source_address

    def _no_route(self, node: NodeContext[Any], address: str, target: str) -> str:
        name = node.node.name
        if not node.kind.routes(node):
            return f"{name} has no route to {address}: it is not on {name}'s subnets, so give {name} a default gateway"
        goal = self.lab.node_named(target)
        drawn = path_between(self.lab, node.node.id, goal.node.id) if goal is not None else []
        for end in drawn:
            if down := self._down(end) or (self._down(end.other) if end.peer is not None else ""):
                return f"{name} has no route to {address}: {down}"
        return (f"{name} has no route to {address}: neither a static route nor a routing protocol gave it one (are "
                "its OSPF or BGP neighbours up, and is the destination's subnet announced?)")

    def _down(self, end: EndContext) -> str:
        """What is down about the interface at `end`, read inside its node; "" when it is up with carrier."""
        if end.kind.role is not Role.NAMESPACE:
            return ""
        try:
            [link] = json.loads(self.run(end.node.name, ["ip", "-j", "link", "show", "dev", end.device]))
        except (MeasureError, ValueError):
            return ""
        flags = link.get("flags", [])
        if "UP" not in flags:
            return f"link {end.link_name} on the path is down: {_port(end)} is set down"
        if "NO-CARRIER" in flags:
            return f"link {end.link_name} on the path is down: {_port(end)} has no carrier"
        return ""

    def _arrival(self, end: EndContext, address: str) -> str:
        """The last hop: `address` should be on the wire `end` leaves by."""
        member = self._member_with(end, address)
        if member is None:
            return self._vlan_apart(end, address) or self._wrong_mask(end, address)
        arrival = next((e for e in self.lab.ends if f"{e.node.name}:{e.end.port}" == member.name), None)
        return self._down(arrival) if arrival is not None else ""

    def _vlan_apart(self, end: EndContext, address: str) -> str:
        """Where VLANs keep the interface that has `address` off the wire of `end`; "" where they do not."""
        self._domain_of(end)
        target = ipaddress.ip_address(address)
        members = [m for d in self._domains for m in d.members]
        mine = next((m for m in members if m.name == _port(end)), None)
        holder = next((m for m in members if m.name != _port(end) and any(i.ip == target for i in m.interfaces)), None)
        return vlan_gap(self.lab, mine, holder) if mine is not None and holder is not None else ""

    def _wrong_mask(self, end: EndContext, address: str) -> str:
        target = ipaddress.ip_address(address)
        mine = next((i for i in _interfaces(end.end.interface.addresses) if target in i.network), None)
        domain = self._domain_of(end)
        others = Counter(i.network for m in (domain.members if domain else ()) if m.name != _port(end)
                         for i in m.interfaces if i.version == target.version)
        if mine is None:
            return f"{_port(end)} sends {address} onto its own wire, where no interface has it"
        wire = f"; the rest of its wire is on {others.most_common(1)[0][0]}" if others else ""
        return (f"the mask is wrong: {_port(end)} has {mine}, whose subnet {mine.network} takes in {address}, so "
                f"{end.node.name} looks for {address} on its own wire instead of sending it to a router{wire}. "
                f"Give {_port(end)} the mask of its wire.")

    def _member_with(self, end: EndContext, address: str) -> Member | None:
        domain = self._domain_of(end)
        target = ipaddress.ip_address(address)
        return next((m for m in (domain.members if domain else ()) if m.name != _port(end)
                     and any(i.ip == target for i in _interfaces(m.addresses))), None)

    def _domain_of(self, end: EndContext) -> Domain | None:
        if not self._domains:
            self._domains = broadcast_domains_of(self.lab)
        return next((d for d in self._domains if _port(end) in {m.name for m in d.members}), None)


def _port(end: EndContext) -> str:
    return f"{end.node.name}:{end.end.port}"


def _interfaces(addresses: Iterable[str]) -> list[ipaddress.IPv4Interface | ipaddress.IPv6Interface]:
    found = []
    for address in addresses:
        try:
            found.append(ipaddress.ip_interface(address))
        except ValueError:
            continue
    return found
