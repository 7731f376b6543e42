"""The check types every lab can use."""
from __future__ import annotations

import ipaddress
import json
import time
from dataclasses import dataclass
from typing import Any

from vtopo.kinds.check_types import CheckType, Probe, Verdict, with_cause
from vtopo.kinds.settings import setting

MAX_HOPS = 8
LEASE_WAIT_S = 12  # a client that got no offer asks again about every 5 s (udhcpc -t 3 -T 1 -A 2)


@dataclass(frozen=True)
class ReachParams:
    """What a reach check pings: from a node to another, or to one of its addresses."""

    source: str = setting("", "From", "the node that sends the pings")
    destination: str = setting("", "To", "the node that should answer")
    address: str = setting("", "Address", "aim at this address of the destination (empty: the one vtopo picks)")
    expect: bool = setting(True, "Reachable", "false when the destination must NOT answer")


class Reach(CheckType):
    name = "reach"
    summary = "A reaches B (or must not), optionally on a given address"
    params_type = ReachParams
    node_fields = ("source", "destination")

    def describe(self, params: ReachParams) -> str:
        verb = "reaches" if params.expect else "cannot reach"
        return f"{params.source} {verb} {params.destination}" + (f" at {params.address}" if params.address else "")

    def run(self, params: ReachParams, probe: Probe) -> Verdict:
        address = params.address or probe.address_of(params.source, params.destination)
        why_not = probe.reach(params.source, params.destination, address)
        if why_not is None:
            return Verdict(params.expect, f"{params.source} gets replies from {address} ({params.destination})")
        if not params.expect:
            return Verdict(True, why_not)
        return Verdict(False, with_cause(why_not, probe.diagnose(params.source, params.destination, address)))


@dataclass(frozen=True)
class PathParams:
    """What a path check follows: the hops from a node to another."""

    source: str = setting("", "From", "where the path starts")
    destination: str = setting("", "To", "where the path ends")
    address: str = setting("", "Address", "follow the path to this address of the destination, e.g. an IPv6 one "
                           "(empty: the one vtopo picks)")
    via: str = setting("", "Through node", "a node the packets must pass (empty: any)")
    routers: int = setting(-1, "Routers crossed", "how many routers lie between, counted by TTL (-1: any)",
                           minimum=-1, maximum=MAX_HOPS - 1)


class Path(CheckType):
    name = "path"
    summary = "the path from A to B passes node X, or crosses exactly N routers (by TTL)"
    params_type = PathParams
    node_fields = ("source", "destination", "via")

    def problems(self, params: PathParams) -> list[tuple[str, str]]:
        if not params.via and params.routers < 0:
            return [("via", "say what the path must do: name a node in via, or a number of routers")]
        return []

    def describe(self, params: PathParams) -> str:
        parts = [f"through {params.via}"] if params.via else []
        if params.routers >= 0:
            parts.append(f"across {params.routers} router{'s' if params.routers != 1 else ''}")
        return f"{params.source} reaches {params.destination} " + " and ".join(parts)

    def run(self, params: PathParams, probe: Probe) -> Verdict:
        address = params.address or probe.address_of(params.source, params.destination)
        hops = probe.hops(params.source, address)
        named = [f"{hop} ({probe.node_of(hop) or '?'})" for hop in hops]
        trace = " → ".join([params.source, *named]) if named else f"{params.source}: no router answered"
        if not hops or hops[-1] != address:
            return Verdict(False, with_cause(f"{trace}: {address} was not reached",
                                             probe.diagnose(params.source, params.destination, address)))
        routers = len(hops) - 1
        if params.routers >= 0 and routers != params.routers:
            return Verdict(False, f"{trace}: {routers} router{'s' if routers != 1 else ''}, expected {params.routers}")
        if params.via and params.via not in {probe.node_of(hop) for hop in hops}:
            return Verdict(False, f"{trace}: does not pass {params.via}")
        return Verdict(True, trace)


@dataclass(frozen=True)
class RouteParams:
    """What a route check looks for in a node's routing table."""

    node: str = setting("", "Node", "whose routing table is read")
    prefix: str = setting("", "Prefix", "the destination network, e.g. 10.2.0.0/24 or 2001:db8:2::/64; default "
                          "(IPv4's default route) or ::/0 (IPv6's)")
    protocol: str = setting("", "Learned by", "kernel (connected), static, ospf...; empty: any",
                            choices=("", "kernel", "static", "boot", "ospf", "bgp", "rip", "dhcp"))
    expect: bool = setting(True, "Present", "false when the route must NOT be there")


class Route(CheckType):
    name = "route"
    summary = "node N has a route to a prefix, learned by a given protocol"
    params_type = RouteParams
    node_fields = ("node",)

    def problems(self, params: RouteParams) -> list[tuple[str, str]]:
        if params.prefix == "default":
            return []
        try:
            ipaddress.ip_network(params.prefix)
        except ValueError:
            return [("prefix", f"{params.prefix!r} is not a network such as 10.2.0.0/24 (host bits must be zero)")]
        return []

    def describe(self, params: RouteParams) -> str:
        how = f" learned by {params.protocol}" if params.protocol else ""
        return f"{params.node} {'has' if params.expect else 'has no'} a route to {params.prefix}{how}"

    def run(self, params: RouteParams, probe: Probe) -> Verdict:
        family = ["-6"] if ":" in params.prefix else []  # "::/0" is IPv6's default route
        wanted = "default" if params.prefix in ("default", "::/0", "0.0.0.0/0") else str(ipaddress.ip_network(
            params.prefix))  # as ip writes it: 2001:db8:2::/64
        routes: list[dict[str, Any]] = json.loads(probe.run(params.node, ["ip", "-j", *family, "route", "show"])
                                                  or "[]")
        found = [r for r in routes if r.get("dst") == wanted]
        protocols = sorted({str(r.get("protocol", "kernel")) for r in found})
        present = bool(found) and (not params.protocol or params.protocol in protocols)
        if found:
            seen = f"{params.node} has {params.prefix} by {', '.join(protocols)}"
        else:
            known = ", ".join(str(r.get("dst")) for r in routes) or "nothing"
            seen = f"{params.node} has no route to {params.prefix} (its table holds {known})"
        return Verdict(present == params.expect, seen)


@dataclass(frozen=True)
class DomainParams:
    """What a same-domain or different-domain check compares: two interfaces."""

    a: str = setting("", "Interface A", "NODE:PORT, e.g. h1:eth0")
    b: str = setting("", "Interface B", "NODE:PORT, e.g. h3:eth0")


class SameDomain(CheckType):
    name = "same-domain"
    summary = "two interfaces share one L2 broadcast domain (switched, no router between)"
    params_type = DomainParams
    interface_fields = ("a", "b")
    expect_same = True

    def describe(self, params: DomainParams) -> str:
        return f"{params.a} and {params.b} are in {'the same' if self.expect_same else 'different'} broadcast domain" \
               f"{'' if self.expect_same else 's'}"

    def run(self, params: DomainParams, probe: Probe) -> Verdict:
        same = probe.same_domain(params.a, params.b)
        seen = (f"{params.a} and {params.b} share one L2 segment: frames pass between them without a router" if same
                else f"{params.a} and {params.b} are on separate L2 segments: only a router joins them")
        if not same and self.expect_same and (why := probe.apart(params.a, params.b)):
            seen = f"{params.a} and {params.b} are on separate L2 segments: {why}"
        return Verdict(same == self.expect_same, seen)


class DifferentDomain(SameDomain):
    name = "different-domain"
    summary = "two interfaces are in different L2 broadcast domains (a router lies between)"
    expect_same = False


@dataclass(frozen=True)
class RateParams:
    """What a rate check measures: a TCP throughput, at least a floor or against another pair's."""

    source: str = setting("", "From", "the node that sends")
    destination: str = setting("", "To", "the node that receives")
    at_least_mbit: float = setting(0.0, "At least (Mbit/s)", "the lowest acceptable TCP throughput", minimum=0)
    versus_source: str = setting("", "Compared with: from", "the sender of the pair to compare with")
    versus_destination: str = setting("", "Compared with: to", "the receiver of the pair to compare with")
    within: float = setting(0.0, "Within ratio", "e.g. 0.5: the two rates differ by at most a factor of 2",
                            minimum=0, maximum=1)
    seconds: int = setting(2, "Seconds", "how long each iperf3 run lasts", minimum=1, maximum=60)


class Rate(CheckType):
    name = "rate"
    summary = "TCP throughput from A to B is at least X, or within a ratio of another pair's"
    params_type = RateParams
    node_fields = ("source", "destination", "versus_source", "versus_destination")
    exclusive = True

    def problems(self, params: RateParams) -> list[tuple[str, str]]:
        compared = bool(params.versus_source or params.versus_destination)
        if compared and not (params.versus_source and params.versus_destination and params.within):
            return [("within", "a comparison needs versus_source, versus_destination and within")]
        if not compared and not params.at_least_mbit:
            return [("at_least_mbit", "say what the rate must be: at_least_mbit, or a pair to compare with")]
        return []

    def describe(self, params: RateParams) -> str:
        if params.at_least_mbit:
            return f"{params.source} sends to {params.destination} at {params.at_least_mbit:g} Mbit/s or more"
        return (f"{params.source} → {params.destination} is within a factor {1 / params.within:g} of "
                f"{params.versus_source} → {params.versus_destination}")

    def run(self, params: RateParams, probe: Probe) -> Verdict:
        rate = probe.rate(params.source, params.destination, params.seconds)
        seen = f"{params.source} → {params.destination}: {rate / 1e6:,.1f} Mbit/s"
        if params.at_least_mbit and rate < params.at_least_mbit * 1e6:
            return Verdict(False, f"{seen}, below {params.at_least_mbit:g} Mbit/s")
        if params.versus_source:
            other = probe.rate(params.versus_source, params.versus_destination, params.seconds)
            ratio = rate / other if other else 0.0
            seen += f"; {params.versus_source} → {params.versus_destination}: {other / 1e6:,.1f} Mbit/s, ratio {ratio:.2f}"
            if not params.within <= ratio <= 1 / params.within:
                return Verdict(False, f"{seen}, outside {params.within:g} to {1 / params.within:g}")
        return Verdict(True, seen)


@dataclass(frozen=True)
class LeaseParams:
    """What a lease check reads: the address a DHCP client got, and the pool it must be from."""

    interface: str = setting("", "Interface", "the client's NODE:PORT, set to dhcp, e.g. c2:eth0")
    pool: str = setting("", "Pool", "the range its address must come from, FIRST-LAST, e.g. 10.0.2.100-10.0.2.199")


def pool_range(pool: str) -> tuple[ipaddress.IPv4Address, ipaddress.IPv4Address]:
    first, _, last = pool.partition("-")
    return ipaddress.IPv4Address(first.strip()), ipaddress.IPv4Address(last.strip())


class DhcpLease(CheckType):
    name = "dhcp-lease"
    summary = "a DHCP client got its address from a given pool"
    params_type = LeaseParams
    interface_fields = ("interface",)
    settles = True

    def problems(self, params: LeaseParams) -> list[tuple[str, str]]:
        try:
            first, last = pool_range(params.pool)
        except ValueError:
            return [("pool", f"{params.pool!r} is not a range of IPv4 addresses such as 10.0.2.100-10.0.2.199")]
        return [] if first <= last else [("pool", f"the pool {params.pool} starts above its end")]

    def describe(self, params: LeaseParams) -> str:
        return f"{params.interface} gets an address from {params.pool} by DHCP"

    def run(self, params: LeaseParams, probe: Probe) -> Verdict:
        first, last = pool_range(params.pool)
        deadline = time.monotonic() + LEASE_WAIT_S
        while True:
            held = probe.leased_addresses(params.interface)
            leased = [a for a in held if first <= ipaddress.IPv4Interface(a).ip <= last]
            if leased:
                return Verdict(True, f"{params.interface} holds {leased[0]}, leased from {params.pool}")
            if time.monotonic() > deadline:
                break
            time.sleep(0.5)
        seen = (f"{params.interface} holds {', '.join(held)} by DHCP, outside {params.pool}" if held else
                f"{params.interface} got no address by DHCP within {LEASE_WAIT_S} s")
        return Verdict(False, with_cause(seen, probe.dhcp_diagnosis(params.interface)))


BUILTIN: tuple[CheckType, ...] = (Reach(), Path(), Route(), SameDomain(), DifferentDomain(), Rate(), DhcpLease())
