"""A lab's address pool: the networks automatic addressing (vtopo.model.allocation) gives new links' ends addresses
from. A lab may set one (`"addressing": {"ipv4": "10.0.0.0/16", "ipv4_prefix": 24}` in its "lab" object); a lab with no
pool is addressed by hand.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

PREFIX_LIMITS = {4: 30, 6: 126}  # the longest subnet prefix a pool gives: two hosts at least
DEFAULT_PREFIX = {4: 24, 6: 64}
DEFAULT_POOL = "10.0.0.0/16"  # what the designer's switch sets on a lab without a pool


@dataclass(frozen=True)
class AddressPool:
    """Where new links take their addresses from: an IPv4 and/or IPv6 network, cut into subnets of the given prefix.
    Empty (no network at all): the lab is addressed by hand."""

    ipv4: str = ""
    ipv4_prefix: int = DEFAULT_PREFIX[4]
    ipv6: str = ""
    ipv6_prefix: int = DEFAULT_PREFIX[6]

    @property
    def empty(self) -> bool:
        return not (self.ipv4 or self.ipv6)

    def pools(self) -> list[tuple[Network, int]]:
        """Each network set, with the prefix of its subnets, IPv4 first; call only on a pool without problems."""
        return [(ipaddress.ip_network(network), prefix) for network, prefix in
                ((self.ipv4, self.ipv4_prefix), (self.ipv6, self.ipv6_prefix)) if network]

    def problems(self) -> list[tuple[str, str]]:
        """What is wrong with it, as (field, message) pairs: a network that is not one of its version, with host bits
        set, or a prefix that does not fit within it."""
        found = []
        for version, network, prefix in ((4, self.ipv4, self.ipv4_prefix), (6, self.ipv6, self.ipv6_prefix)):
            name = f"ipv{version}"
            if not network:
                continue
            try:
                parsed = ipaddress.ip_network(network, strict=False)
            except ValueError:
                parsed = None
            if parsed is None or "/" not in network:
                found.append((name, f"{network!r} is not an IPv{version} network such as "
                                    f"{DEFAULT_POOL if version == 4 else 'fd00::/48'}"))
                continue
            if parsed.version != version:
                found.append((name, f"{network} is an IPv{parsed.version} network, not an IPv{version} one"))
            elif parsed.network_address != ipaddress.ip_interface(network).ip:
                found.append((name, f"{network} has host bits set; the network is {parsed}"))
            elif not parsed.prefixlen <= prefix <= PREFIX_LIMITS[version]:
                found.append((f"{name}_prefix", f"the subnets of {parsed} must have a prefix from /{parsed.prefixlen} "
                                                f"to /{PREFIX_LIMITS[version]}, not /{prefix}"))
        return found

    def describe(self) -> str:
        return ", ".join(f"{network} in /{prefix} subnets" for network, prefix in
                         ((self.ipv4, self.ipv4_prefix), (self.ipv6, self.ipv6_prefix)) if network) or "no pool"
