"""Small checks and ops shared by several built-in kinds (default gateways and routes, IPv4 and IPv6), and what
`vtopo save` reads of a namespace's addresses and routes."""
from __future__ import annotations

import ipaddress
import json
from typing import Any, Iterator

from vtopo.kinds import api
from vtopo.kinds.api import NodeContext, Problem, Reader, setting, subinterface_name

GATEWAY6_HELP = ("Next hop for the IPv6 default route, e.g. 2001:db8:1::1, or a router's link-local address with "
                 "the port it is reached on, e.g. fe80::1%eth0")


def image_setting(example: str) -> Any:
    """A container's or router's image: an OCI image it runs from, by reference; empty, the host's own programs."""
    return setting("", "Image", f"An OCI image to run the node from, by reference (vtopo image list), e.g. {example}. "
                   "Empty: the host's own programs.")


def memory_setting() -> Any:
    return setting(256, "Memory (MiB)", "A node from an image: the most memory its container may take",
                   minimum=16, maximum=65536)


def cpu_setting() -> Any:
    return setting(100, "CPU (%)", "A node from an image: the most CPU time its container may take, in percent of "
                   "one CPU", minimum=1, maximum=6400)


def disk_setting() -> Any:
    return setting(256, "Disk (MiB)", "A node from an image: how much it may write over the image's files",
                   minimum=16, maximum=65536)


def node_image(reference: str, memory_mb: int, cpu_percent: int, disk_mb: int) -> api.NodeImage | None:
    return api.NodeImage(reference, memory_mb, cpu_percent, disk_mb) if reference else None


def check_default_routes(node: NodeContext[Any], gateway: str, gateway6: str, link_local: bool = True
                         ) -> Iterator[Problem]:
    """The two default gateway settings: "Default gateway" (IPv4, or IPv6 on a node with no other) and "IPv6
    default gateway"."""
    yield from check_gateway(node, gateway, "Default gateway", link_local=link_local)
    yield from check_gateway(node, gateway6, "IPv6 default gateway", 6, link_local)
    if gateway6 and ":" in gateway:
        yield Problem(f"Default gateway {gateway} and IPv6 default gateway {gateway6} are both IPv6: a node has one "
                      "IPv6 default route; clear one of them", node.subject, subject_id=node.node.id)


def check_gateway(node: NodeContext[Any], gateway: str, label: str, version: int | None = None,
                  link_local: bool = True) -> Iterator[Problem]:
    """A default gateway must be an address on one of the node's own subnets, or an IPv6 link-local address on one
    of its ports (where `link_local` allows). `label` is its form label; `version` the one IP version it takes."""
    if not gateway:
        return
    text, _, port = gateway.partition("%")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        yield Problem(f"{label} {gateway!r} is not an IP address", node.subject, subject_id=node.node.id)
        return
    if version is not None and address.version != version:
        yield Problem(f"{label} {gateway} is not an IPv{version} address", node.subject, subject_id=node.node.id)
    elif _link_local6(address):
        yield from _check_link_local(node, gateway, port, label, link_local)
    elif port:
        yield Problem(f"{label} {gateway}: only a link-local (fe80::) gateway names its port after a %",
                      node.subject, subject_id=node.node.id)
    elif not any(address in network for network in _networks(node)):
        yield Problem(f"{label} {gateway} is not on any of this node's subnets; it would be unreachable",
                      node.subject, subject_id=node.node.id)


def _check_link_local(node: NodeContext[Any], gateway: str, port: str, label: str, allowed: bool
                      ) -> Iterator[Problem]:
    ports = sorted(end.end.port for end in node.ends)
    if not allowed:
        yield Problem(f"{label} {gateway}: this node cannot take a link-local gateway; use the router's global "
                      "IPv6 address", node.subject, subject_id=node.node.id)
    elif port and port not in ports:
        yield Problem(f"{label} {gateway} names port {port}, which has no link (linked: {', '.join(ports) or 'none'})",
                      node.subject, subject_id=node.node.id)
    elif not port and len(ports) != 1:
        yield Problem(f"{label} {gateway} is link-local: say which port it is reached on, e.g. "
                      f"{gateway}%{ports[0] if ports else 'eth0'}", node.subject, subject_id=node.node.id)


def _networks(node: NodeContext[Any]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_interface(a).network for interface in node.interfaces() for a in interface.addresses
            if "/" in a]


def gateway_route(node: NodeContext[Any], netns: str, gateway: str) -> api.AddRoute:
    """The default route via `gateway`; a link-local one goes out of the port it names (or the only port)."""
    address, _, port = gateway.partition("%")
    device = ""
    if _link_local6(ipaddress.ip_address(address)):
        end = next(e for e in node.ends if e.end.port == port) if port else node.ends[0]
        device = end.device
    return api.AddRoute(owner=node.subject, netns=netns, destination="default", gateway=address, device=device)


def _link_local6(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return address.version == 6 and address.is_link_local


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


SHOW_ADDRESSES = ("ip", "-j", "address", "show")
SHOW_ROUTES = {family: ("ip", "-j", family, "route", "show") for family in ("-4", "-6")}
KERNEL_STATE = (SHOW_ADDRESSES, *SHOW_ROUTES.values())
"""The commands whose output `kernel_addresses` and `kernel_routes` read (a kind's state_commands)."""


def kernel_addresses(node: NodeContext[Any], read: Reader) -> dict[str, list[str]]:
    """The global addresses on each of the node's ports and subinterfaces (PORT.VLAN), as `ip -j address` shows them
    inside it; those a DHCP client holds (dynamic: with the lease's lifetime) are its server's to give, not the lab's."""
    shown = json.loads(read(list(SHOW_ADDRESSES)) or "[]")
    by_device = {str(link.get("ifname")): [f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", [])
                                           if a.get("scope") == "global" and "local" in a and "prefixlen" in a
                                           and not a.get("dynamic")]
                 for link in shown}
    found = {end.end.port: by_device.get(end.device, []) for end in node.ends if end.device}
    for end in node.ends:
        for sub in end.end.interface.subinterfaces:
            found[subinterface_name(end.end.port, sub.vlan)] = by_device.get(subinterface_name(end.device, sub.vlan), [])
    return found


def kernel_routes(read: Reader) -> list[tuple[str, str]]:
    """(destination, gateway) of each route through a gateway in the node's main tables, IPv4 then IPv6, except
    those the kernel makes itself and those a DHCP lease gave; destination is "default" for the IPv4 default route."""
    routes = []
    for family, default in (("-4", "default"), ("-6", "::/0")):
        for route in json.loads(read(list(SHOW_ROUTES[family])) or "[]"):
            gateway = route.get("gateway", "")
            if not gateway or route.get("protocol") in ("kernel", "ra", "dhcp") or gateway.startswith("fe80:"):
                continue
            destination = str(route.get("dst", ""))
            routes.append((default if destination == "default" else destination, gateway))
    return routes
