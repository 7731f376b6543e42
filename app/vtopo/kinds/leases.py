"""The leases a node's DHCP server handed out, as `vtopo status` shows them in the server's detail:
`; leases: 10.0.2.100 c3 (02:00:00:00:00:01), 10.0.2.101 c4 (...)`, or `; leases: none yet`. One writing of that text,
for the server kinds, and one reading, for the designer."""
from __future__ import annotations

import re
from dataclasses import dataclass

LEASES = "; leases: "
NONE_YET = "none yet"
UNKNOWN_CLIENT = "?"  # a hostname that names no node of the lab
LEASE = re.compile(r"(\S+) (\S+) \(([0-9a-f:]{17})\)")


@dataclass(frozen=True)
class Lease:
    """An address a DHCP server gave, and to whom."""

    address: str
    client: str  # the client node's name, or UNKNOWN_CLIENT
    mac: str

    def __str__(self) -> str:
        return f"{self.address} {self.client} ({self.mac})"


def leases_text(leases: list[Lease]) -> str:
    return LEASES + (", ".join(map(str, leases)) if leases else NONE_YET)


def leases_in(detail: str) -> list[Lease] | None:
    """The leases a node's status detail lists; None where it lists none (the node serves no DHCP)."""
    if LEASES not in detail:
        return None
    listed = detail.split(LEASES, 1)[1].split("; ", 1)[0]
    return [Lease(*match.groups()) for match in LEASE.finditer(listed)]
