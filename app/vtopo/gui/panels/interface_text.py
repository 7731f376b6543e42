"""An interface's addresses and 802.1Q subinterfaces as the designer's fields write them. A subinterface is
`vlan 10 = 10.0.10.1/24, 2001:db8:10::1/64`, as an L3 switch's SVIs setting writes its VLAN interfaces: one a line in
a link's end, `;` between them in the interface table's cell."""
from __future__ import annotations

import ipaddress
import re

from vtopo.kinds.vlans import HIGHEST_VLAN, LOWEST_VLAN
from vtopo.model.topology import Subinterface

SUBINTERFACE = re.compile(r"\s*vlan\s*(\d+)\s*(?:=\s*(.*?))?\s*")
EXAMPLE = "vlan 10 = 10.0.10.1/24"


def address_error(lines: list[str]) -> str:
    """Addresses must be written with their prefix, e.g. 10.0.0.1/24 or fd00::1/64."""
    for line in lines:
        try:
            if "/" not in line:
                raise ValueError
            ipaddress.ip_interface(line)
        except ValueError:
            return f"{line!r} is not an address with a prefix, e.g. 10.0.0.1/24"
    return ""


def subinterface_text(subinterface: Subinterface) -> str:
    addresses = ", ".join(subinterface.addresses)
    return f"vlan {subinterface.vlan} = {addresses}" if addresses else f"vlan {subinterface.vlan}"


def parse_subinterfaces(entries: list[str]) -> list[Subinterface]:
    """The subinterfaces the entries write (blank ones skipped); ValueError saying what is wrong with the first
    entry that is not `vlan N = address/prefix, ...`, names a VLAN outside 1-4094 or one already named."""
    subinterfaces: list[Subinterface] = []
    for entry in filter(str.strip, entries):
        match = SUBINTERFACE.fullmatch(entry)
        if match is None:
            raise ValueError(f"{entry.strip()!r}: write a subinterface as {EXAMPLE}")
        vlan = int(match.group(1))
        if not LOWEST_VLAN <= vlan <= HIGHEST_VLAN:
            raise ValueError(f"VLAN {vlan} is outside {LOWEST_VLAN}-{HIGHEST_VLAN} (0 means no VLAN, 4095 is "
                             "reserved)")
        if any(sub.vlan == vlan for sub in subinterfaces):
            raise ValueError(f"VLAN {vlan} is named twice: one subinterface per VLAN")
        addresses = [address.strip() for address in (match.group(2) or "").split(",") if address.strip()]
        if error := address_error(addresses):
            raise ValueError(f"vlan {vlan}: {error}")
        subinterfaces.append(Subinterface(vlan, addresses))
    return subinterfaces


def subinterfaces_error(entries: list[str]) -> str:
    try:
        parse_subinterfaces(entries)
    except ValueError as error:
        return str(error)
    return ""
