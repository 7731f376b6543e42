"""Ops on the lab's own nftables table, which keeps what the host forwards for the lab inside the lab."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from vtopo.ops.base import Op
from vtopo.ops.host import Host


ROUTING_ADVICE = (("icmpv6", ("nd-router-advert", "nd-redirect")), ("icmp", ("redirect",)))
"""The ICMP messages by which a node would have the host's own kernel make addresses or routes (a router advertisement
on a new device of the host's is taken by default): the host takes none from a lab's devices."""

NEIGHBOUR_DISCOVERY = ("icmpv6", ("nd-neighbor-solicit", "nd-neighbor-advert"))
"""What a lab's devices may send to any of the host's own addresses: IPv6 neighbour discovery, which the host's kernel
answers itself, and whose checks that a node is still there go out from the link-local address the kernel gave the
bridge, not one the lab gave the host."""

HOSTS_OWN = ("local", "broadcast", "multicast", "anycast")
"""What the host's kernel takes in as sent to itself (nft's fib address types): an address of its own, but also a
broadcast (255.255.255.255, or a network's of any interface's), a group its interfaces are in (each is in the
all-nodes group ff02::1) and an anycast address, which a service listening on every address of the host's receives."""


@dataclass(frozen=True, kw_only=True)
class ContainForwarding(Op):
    """An nftables table of the lab's own: what the host forwards from the lab's devices (named `device_prefix`*)
    goes only to devices of the same lab, and nothing is forwarded into them from elsewhere; the rest is dropped and
    counted. What the lab's devices send to the host itself (HOSTS_OWN) is dropped too, unless the address is one the lab
    gives the host (`host_addresses`: a host node's, a numbered bridge's) or it came in by one of `host_node_devices`
    (the lab links the host itself there): an address the kernel gave a lab device of the host's (its IPv6
    link-local address) is not the lab's, and only neighbour discovery reaches it (NEIGHBOUR_DISCOVERY). No router
    advertisement or redirect from the lab's devices reaches the host's kernel (ROUTING_ADVICE). The VXLAN a tunnel of
    the lab's sends goes only to that tunnel's remote (`tunnels`: VNI and remote address), whatever its node adds to
    the device's forwarding database. Installed before the lab builds anything in the host's namespace."""

    table: str
    device_prefix: str
    host_node_devices: tuple[str, ...] = ()
    host_addresses: tuple[str, ...] = ()
    tunnels: tuple[tuple[int, str], ...] = ()
    summary_text: ClassVar[str] = "contain the lab's traffic to its own devices (nftables table {table})"

    def provides(self) -> frozenset[str]:
        return frozenset({f"nftables:{self.table}"})

    def apply(self, host: Host) -> None:
        host.contain_forwarding(self.table, self.device_prefix, self.host_node_devices, self.host_addresses,
                                self.tunnels)

    def inverse(self) -> Op:
        return RemoveNftTable(owner=self.owner, table=self.table)


def address_family(address: str) -> str:
    """nft's name for the address's family: `ip` or `ip6`."""
    return "ip6" if ":" in address else "ip"


def addresses_by_family(addresses: tuple[str, ...]) -> list[tuple[str, list[str]]]:
    """The addresses as nft's `ip` and `ip6` match them, leaving out a family with none."""
    by_family: dict[str, list[str]] = {"ip": [], "ip6": []}
    for address in addresses:
        by_family[address_family(address)].append(address)
    return [(family, found) for family, found in by_family.items() if found]


@dataclass(frozen=True, kw_only=True)
class RemoveNftTable(Op):
    table: str
    summary_text: ClassVar[str] = "delete nftables table {table}"

    def apply(self, host: Host) -> None:
        host.delete_nft_table(self.table)
