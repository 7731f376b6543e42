"""The rules for what a lab may put on the host outside its own objects: the host's addresses and routes here, a
VM's disk image in vtopo.kinds.disk_images. Pure: the host's facts come in as inputs.

The compiler calls them for every lab; a backend that hands the same things to another program (libvirt) calls
them too, so a rule is written once.
"""
from __future__ import annotations

import ipaddress
from collections.abc import Iterable

MIN_HOST_PREFIX = {4: 8, 6: 16}


def host_address_problem(address: str, host_networks: Iterable[str]) -> str | None:
    """Why `address` (with prefix) may not go on an interface in the host's own namespace, or None if it may.

    Such an address comes with a connected route; one that is more specific than, or equal to, a route the host
    already has would take the host's own traffic into the lab.
    """
    interface = ipaddress.ip_interface(address)
    ip, network = interface.ip, interface.network
    for label, special in (("a loopback", ip.is_loopback), ("a multicast", ip.is_multicast),
                           ("a link-local", ip.is_link_local), ("the unspecified", ip.is_unspecified),
                           ("a reserved", ip.version == 4 and ip.is_reserved)):
        if special:
            return f"{address} is {label} address, which a lab may not give the host"
    shortest = MIN_HOST_PREFIX[ip.version]
    if network.prefixlen < shortest:
        return (f"{address} has a /{network.prefixlen} prefix; in the host's own namespace a lab's prefix must be "
                f"/{shortest} or longer, or its route would take over the host's traffic to a large part of the "
                "Internet")
    theirs = overlapped(address, host_networks)
    if theirs is not None:
        return (f"{address} overlaps {theirs}, which the host already has (an address or route of its own); "
                "the host's traffic there would go into the lab. Pick a subnet this host does not use")
    return None


def overlapped(address: str, networks: Iterable[str]) -> str | None:
    """The first of `networks` (CIDR) that the subnet of `address` overlaps, or None: a route to either would take
    traffic meant for the other."""
    network = ipaddress.ip_interface(address).network
    for text in networks:
        theirs = ipaddress.ip_network(text)
        if theirs.version == network.version and theirs.overlaps(network):
            return str(theirs)
    return None


def held_by_lab_problem(address: str, lab: str, owner: str) -> str:
    """Why `address` may not go on an interface in the host's own namespace, when it overlaps what lab `lab` of
    `owner` gives the host. It says no more of that lab than `vtopo status` shows every member: its name and owner."""
    return (f"{address} overlaps an address or route that lab {lab} ({owner}'s), another lab deployed on this host, "
            "gives the host; the host's traffic to that lab would go into this one. Pick a subnet no deployed lab "
            "gives the host")
