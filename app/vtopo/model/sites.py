"""Sites: the machines a lab is spread over, and the tunnels that join its parts (placement.py works them out).

A lab may name sites, each reached over SSH; a node's `site` places it, and a node without one runs on the machine
vtopo runs on (the local site, "" here). A link whose ends are on two sites becomes a VXLAN tunnel between the sites'
underlay addresses, with a VNI of its own (one per lab and link).
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

LOCAL = ""  # the site of the machine vtopo runs on
SITE_NAME = re.compile(r"[a-z][a-z0-9-]{0,15}")
SITE_NAME_RULE = "a site name is 1 to 16 lowercase letters, digits or '-', starting with a letter"
DESTINATION = re.compile(r"([a-z_][a-z0-9_.-]{0,31}@)?[A-Za-z0-9][A-Za-z0-9.:-]{0,252}")
"""user@host or host, as ssh takes it: never starting with '-', which ssh would read as an option."""
VNI_LIMITS = (1, 2**24 - 1)
DEFAULT_VNIS = (1_000_000, 1_999_999)  # the agent's tunnel_vnis unless its configuration says otherwise
VXLAN_PORT = 4789  # IANA's VXLAN port
UNDERLAY_MTU = 1500
VXLAN_OVERHEAD = 50  # what VXLAN adds over IPv4: outer IPv4 20, UDP 8, VXLAN 8, inner Ethernet 14
TUNNEL_MTU = UNDERLAY_MTU - VXLAN_OVERHEAD


@dataclass(frozen=True)
class Site:
    """A machine a lab's nodes may run on. Its SSH fields come from the lab file, which is untrusted: vtopo connects
    to a site only when the user allows it at deploy time (--allow-site)."""

    name: str
    destination: str = ""  # ssh's user@host; "" for the machine vtopo runs on
    port: int = 22
    identity: str = ""  # the private key ssh offers; "" for ssh's own choice
    known_hosts: str = ""  # the file ssh checks the site's host key against; "" for the user's own
    address: str = ""  # the underlay address tunnels reach it at; "" for the destination's host, if an address

    @property
    def local(self) -> bool:
        return not self.destination

    @property
    def underlay(self) -> str:
        if self.address:
            return self.address
        host = self.destination.rpartition("@")[2]
        return host if is_address(host) else ""


@dataclass(frozen=True)
class Tunnel:
    """One link between two sites, seen from one of them: its VNI and the other site's underlay address."""

    link: str
    vni: int
    remote: str


@dataclass(frozen=True)
class SitePart:
    """What one site deploys of a lab: its nodes (those placed on `site`) and its ends of the tunnels."""

    site: str = LOCAL
    address: str = ""  # this site's underlay address
    tunnels: tuple[Tunnel, ...] = ()

    def tunnel(self, link_id: str) -> Tunnel | None:
        return next((tunnel for tunnel in self.tunnels if tunnel.link == link_id), None)


def is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
