"""Small checks shared by several built-in kinds, and what `vtopo save` reads of a namespace's addresses and
routes."""
from __future__ import annotations

import ipaddress
import json
from typing import Any, Iterator

from vtopo.kinds.api import NodeContext, Problem, Reader


def check_gateway(node: NodeContext[Any], gateway: str, label: str) -> Iterator[Problem]:
    """A default gateway must be an IPv4 address on one of the node's own subnets; `label` is its form label."""
    if not gateway:
        return
    try:
        address = ipaddress.ip_address(gateway)
    except ValueError:
        yield Problem(f"{label} {gateway!r} is not an IP address", node.subject, subject_id=node.node.id)
        return
    networks = [ipaddress.ip_interface(a).network for end in node.ends for a in end.end.interface.addresses
                if "/" in a]
    if not any(address in network for network in networks):
        yield Problem(f"{label} {gateway} is not on any of this node's subnets; it would be unreachable",
                      node.subject, subject_id=node.node.id)


def check_route(node: NodeContext[Any], route: str) -> Iterator[Problem]:
    """A route "PREFIX via GATEWAY": a network and an address of its family on one of the node's subnets."""
    destination, via, gateway = route.partition(" via ")
    try:
        network = ipaddress.ip_network(destination.strip()) if destination.strip() != "default" else None
    except ValueError:
        network, via = None, ""
    if not via:
        yield Problem(f"route {route!r} must read PREFIX via GATEWAY, e.g. 10.9.0.0/16 via 10.0.1.1", node.subject,
                      subject_id=node.node.id)
        return
    yield from check_gateway(node, gateway.strip(), f"the gateway of route {destination.strip()}")
    try:
        if network is not None and network.version != ipaddress.ip_address(gateway.strip()).version:
            yield Problem(f"route {route!r} mixes IPv4 and IPv6", node.subject, subject_id=node.node.id)
    except ValueError:
        pass  # check_gateway said so


def kernel_addresses(node: NodeContext[Any], read: Reader) -> dict[str, list[str]]:
    """The global addresses on each of the node's ports, as `ip -j address` shows them inside it."""
    shown = json.loads(read(["ip", "-j", "address", "show"]) or "[]")
    by_device = {str(link.get("ifname")): [f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", [])
                                           if a.get("scope") == "global" and "local" in a and "prefixlen" in a]
                 for link in shown}
    return {end.end.port: by_device.get(end.device, []) for end in node.ends if end.device}


def kernel_routes(read: Reader) -> list[tuple[str, str]]:
    """(destination, gateway) of each route through a gateway in the node's main tables, IPv4 then IPv6, except
    those the kernel makes itself; destination is "default" for the IPv4 default route."""
    routes = []
    for family, default in (("-4", "default"), ("-6", "::/0")):
        for route in json.loads(read(["ip", "-j", family, "route", "show"]) or "[]"):
            gateway = route.get("gateway", "")
            if not gateway or route.get("protocol") in ("kernel", "ra") or gateway.startswith("fe80:"):
                continue
            destination = str(route.get("dst", ""))
            routes.append((default if destination == "default" else destination, gateway))
    return routes
