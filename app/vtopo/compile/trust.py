"""The rules for what a lab may put on the host outside its own objects. Pure: the host's facts come in as inputs.

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
    for text in host_networks:
        theirs = ipaddress.ip_network(text)
        if theirs.version == network.version and theirs.overlaps(network):
            return (f"{address} overlaps {theirs}, which the host already has (an address or route of its own); "
                    "the host's traffic there would go into the lab. Pick a subnet this host does not use")
    return None
