"""The check types the router kind adds, read from FRR's JSON in the running routers, IPv4 and IPv6 alike: a route with
its next hop and protocol, an OSPF adjacency, a BGP session and what it received, and the routers a path crosses."""
from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from typing import Any

from vtopo.kinds.api import CheckType, Probe, Verdict, setting, with_cause

FAMILIES = ("ipv4", "ipv6")


def _vtysh(probe: Probe, router: str, command: str) -> Any:
    """A vtysh command's JSON answer on `router` ({} when the daemon behind it is not running)."""
    text = probe.run(router, ["vtysh", "-c", command]).strip()
    try:
        return json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {}


def _prefix_problems(prefix: str) -> list[tuple[str, str]]:
    try:
        ipaddress.ip_network(prefix, strict=False)
    except ValueError:
        return [("prefix", f"{prefix!r} is not a prefix like 10.2.0.0/24 or 2001:db8::/64")]
    return []


def _family(prefix: str) -> str:
    return "ipv6" if ipaddress.ip_network(prefix, strict=False).version == 6 else "ipv4"


# ---------------------------------------------------------------- a route


@dataclass(frozen=True)
class RouteViaParams:
    """What a route-via check looks for: a router's route and where it leads."""

    router: str = setting("", "Router", "the router whose routing table is read")
    prefix: str = setting("", "Prefix", "the destination, e.g. 10.2.0.0/24 or 2001:db8:2::/64")
    via: str = setting("", "Next hop", "the address the route must lead to (empty: any)")
    interface: str = setting("", "Interface", "the interface it must leave by (empty: any)")
    protocol: str = setting("", "Protocol", "who must have put it there (empty: any)",
                            choices=("", "connected", "static", "kernel", "ospf", "ospf6", "rip", "ripng", "bgp",
                                     "isis"))


class RouteVia(CheckType):
    name = "route-via"
    summary = "router R has a route to a prefix, via a next hop or interface, learnt by a protocol"
    params_type = RouteViaParams
    node_fields = ("router",)

    def problems(self, params: RouteViaParams) -> list[tuple[str, str]]:
        return _prefix_problems(params.prefix)

    def describe(self, params: RouteViaParams) -> str:
        how = [f"via {params.via}"] if params.via else []
        how += [f"out of {params.interface}"] if params.interface else []
        how += [f"from {params.protocol}"] if params.protocol else []
        return " ".join([f"{params.router} routes {params.prefix}", *how])

    def run(self, params: RouteViaParams, probe: Probe) -> Verdict:
        ip = "ipv6" if _family(params.prefix) == "ipv6" else "ip"
        table = _vtysh(probe, params.router, f"show {ip} route {params.prefix} json")
        routes = [route for entries in table.values() if isinstance(entries, list) for route in entries
                  if route.get("selected")]
        if not routes:
            return Verdict(False, f"{params.router} has no route to {params.prefix}; check that a neighbour announces "
                                  f"it (`show {ip} route` on {params.router})")
        route = routes[0]
        hops = [hop for hop in route.get("nexthops", []) if hop.get("active", True)]
        said = ", ".join(_hop_text(hop) for hop in hops) or "no next hop"
        found = f"{params.router} routes {params.prefix} via {said} ({route.get('protocol', '?')})"
        if params.protocol and route.get("protocol") != params.protocol:
            return Verdict(False, f"{found}, not from {params.protocol}")
        if params.via and not any(hop.get("ip") == params.via for hop in hops):
            return Verdict(False, f"{found}, not via {params.via}")
        if params.interface and not any(hop.get("interfaceName") == params.interface for hop in hops):
            return Verdict(False, f"{found}, not out of {params.interface}")
        if route.get("failed"):  # selected by zebra, refused by the kernel: no packet takes it
            return Verdict(False, f"{found}, but the kernel refused it (`r` in `show {ip} route` on {params.router}: "
                                  "is the next hop a host on one of its subnets?)")
        if not route.get("installed"):
            return Verdict(False, f"{found}, but it is not in the kernel's table yet")
        return Verdict(True, found)


def _hop_text(hop: dict[str, Any]) -> str:
    where = hop.get("ip") or ("directly" if hop.get("directlyConnected") else "")
    return " ".join(part for part in (where, f"on {hop['interfaceName']}" if hop.get("interfaceName") else "") if part)


# ---------------------------------------------------------------- an OSPF adjacency


@dataclass(frozen=True)
class NeighborParams:
    """What an OSPF neighbour check reads: a router's adjacency with another."""

    router: str = setting("", "Router", "the router whose neighbour table is read")
    neighbor: str = setting("", "Neighbour", "the router it should be adjacent to")
    state: str = setting("Full", "State", "the OSPF state expected", choices=("Full", "2-Way"))
    family: str = setting("ipv4", "Family", "ipv4: OSPFv2 (ospfd); ipv6: OSPFv3 (ospf6d)", choices=FAMILIES)


class OspfNeighbor(CheckType):
    name = "ospf-neighbor"
    summary = "router R sees router S as an OSPF (v2 or v3) neighbour in state Full"
    params_type = NeighborParams
    node_fields = ("router", "neighbor")

    def describe(self, params: NeighborParams) -> str:
        version = "OSPFv3" if params.family == "ipv6" else "OSPF"
        return f"{params.router} and {params.neighbor} are {version} neighbours in state {params.state}"

    def run(self, params: NeighborParams, probe: Probe) -> Verdict:
        v3 = params.family == "ipv6"
        version = "OSPFv3" if v3 else "OSPF"
        table = _vtysh(probe, params.router, "show ipv6 ospf6 neighbor json" if v3 else "show ip ospf neighbor json")
        own = _vtysh(probe, params.neighbor, "show ipv6 ospf6 json" if v3 else "show ip ospf json")
        theirs = set(probe.addresses_of(params.neighbor)) | {str(own.get("routerId", ""))}
        states = [state for router_id, address, state in _ospf_neighbors(table, v3)
                  if router_id in theirs or address in theirs]
        if params.state in states:
            return Verdict(True, f"{params.router} sees {params.neighbor} in state {params.state}")
        if states:
            return Verdict(False, f"{params.router} sees {params.neighbor} in state {', '.join(states)}, "
                                  f"not {params.state}")
        others = ", ".join(sorted({router_id for router_id, _, _ in _ospf_neighbors(table, v3)})) or "none"
        return Verdict(False, f"{params.router} has no {version} neighbour {params.neighbor} (neighbour ids: {others}); "
                              "check the link between them, its addresses, areas and timers, and that its port is not "
                              "passive")


def _ospf_neighbors(table: Any, v3: bool) -> list[tuple[str, str, str]]:
    """(router id, interface address, state) of each neighbour in `show ip ospf neighbor json` (a map of router id to
    entries) or `show ipv6 ospf6 neighbor json` (a list)."""
    if not isinstance(table, dict):
        return []
    if v3:
        return [(str(n.get("neighborId", "")), "", str(n.get("state", ""))) for n in table.get("neighbors", [])]
    found = []
    for router_id, entries in table.get("neighbors", {}).items():
        for entry in entries:
            address = entry.get("address") or entry.get("ifaceAddress", "")
            state = str(entry.get("state") or entry.get("nbrState", "")).split("/")[0]
            found.append((router_id, address, state))
    return found


# ---------------------------------------------------------------- a BGP session


@dataclass(frozen=True)
class BgpParams:
    """What a BGP check reads: a router's session with a neighbour."""

    router: str = setting("", "Router", "the router whose BGP sessions are read")
    neighbor: str = setting("", "Neighbour", "the router at the other end of the session")
    prefix: str = setting("", "Prefix received", "a prefix the neighbour must have sent (empty: none asked)")


class BgpSession(CheckType):
    name = "bgp-session"
    summary = "router R's BGP session with S is Established, and a prefix came from S"
    params_type = BgpParams
    node_fields = ("router", "neighbor")

    def problems(self, params: BgpParams) -> list[tuple[str, str]]:
        return _prefix_problems(params.prefix) if params.prefix else []

    def describe(self, params: BgpParams) -> str:
        received = f" and receives {params.prefix} from it" if params.prefix else ""
        return f"{params.router} has an Established BGP session with {params.neighbor}{received}"

    def run(self, params: BgpParams, probe: Probe) -> Verdict:
        summary = _vtysh(probe, params.router, "show bgp summary json")
        addresses = set(probe.addresses_of(params.neighbor))
        peers = {key: peer for family in summary.values() if isinstance(family, dict)
                 for key, peer in family.get("peers", {}).items()}
        mine = {key: peer for key, peer in peers.items() if key in addresses or peer.get("hostname") == params.neighbor}
        if not mine:
            known = ", ".join(sorted(peers)) or "none"
            return Verdict(False, f"{params.router} has no BGP neighbour {params.neighbor} (its neighbours: {known}); "
                                  f"add `neighbor ADDRESS remote-as AS` for one of {params.neighbor}'s addresses")
        key, peer = next(iter(mine.items()))
        state = peer.get("state", "?")
        if state != "Established":
            return Verdict(False, f"{params.router}'s BGP session with {params.neighbor} ({key}) is {state}, not "
                                  "Established; check both ends' AS numbers and neighbour addresses")
        if not params.prefix:
            return Verdict(True, f"{params.router}'s BGP session with {params.neighbor} ({key}) is Established")
        table = _vtysh(probe, params.router, f"show bgp {_family(params.prefix)} unicast {params.prefix} json")
        senders = {str(path.get("peer", {}).get("peerId", "")) for path in table.get("paths", [])}
        if senders & (set(mine) | addresses):
            return Verdict(True, f"{params.router} receives {params.prefix} from {params.neighbor} ({key})")
        others = ", ".join(sorted(senders - {""})) or "no neighbour"
        return Verdict(False, f"{params.router} does not receive {params.prefix} from {params.neighbor} (it has it from "
                              f"{others}); check that {params.neighbor} announces it (network or redistribute) and "
                              "that no policy drops it")


# ---------------------------------------------------------------- the routers a path crosses


@dataclass(frozen=True)
class TraverseParams:
    """What a traverses check traces: the routers a path crosses, in order."""

    source: str = setting("", "From", "where the traceroute starts")
    destination: str = setting("", "To", "where it ends")
    routers: list[str] = setting([], "Routers, in order", "the routers the path must cross, in this order")
    address: str = setting("", "Address", "aim at this address of the destination, IPv4 or IPv6 (empty: the one "
                           "vtopo picks)")


class Traverses(CheckType):
    name = "traverses"
    summary = "the path from A to B crosses routers R1, R2... in that order (traceroute)"
    params_type = TraverseParams
    node_fields = ("source", "destination")

    def problems(self, params: TraverseParams) -> list[tuple[str, str]]:
        return [] if params.routers else [("routers", "name the routers the path must cross")]

    def describe(self, params: TraverseParams) -> str:
        return f"{params.source} reaches {params.destination} through {', '.join(params.routers)}"

    def run(self, params: TraverseParams, probe: Probe) -> Verdict:
        address = params.address or probe.address_of(params.source, params.destination)
        hops = probe.hops(params.source, address)
        crossed = [probe.node_of(hop) or hop for hop in hops[:-1]]
        trace = " → ".join([params.source, *(probe.node_of(hop) or hop for hop in hops)])
        if not hops or hops[-1] != address:  # a router without a route answers "unreachable", not at its TTL
            return Verdict(False, with_cause(f"{trace}: {address} ({params.destination}) was not reached",
                                             probe.diagnose(params.source, params.destination, address)))
        if crossed != list(params.routers):
            return Verdict(False, f"{trace}: crosses {', '.join(crossed) or 'no router'}, not "
                                  f"{', '.join(params.routers)}; check the routes (and their costs) along the way")
        return Verdict(True, trace)


ROUTER_CHECKS: tuple[CheckType, ...] = (RouteVia(), OspfNeighbor(), BgpSession(), Traverses())
