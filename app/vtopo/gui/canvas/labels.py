"""The text a link shows at each end and in its middle, and a rate as the canvas and the measure panel write it."""
from __future__ import annotations

from typing import Callable

from vtopo.kinds.vlans import port_label, port_vlans
from vtopo.model.rules import subinterface_name
from vtopo.model.topology import Endpoint, Impairment, Link, Node

VlansOf = Callable[[Node], "dict[str, str] | None"]
"""A node's VLANs port by port, as its VLANs setting writes them; None where its kind keeps no VLANs."""


def format_rate(bits_per_second: float | None) -> str:
    if bits_per_second is None:
        return "-"
    if bits_per_second >= 1e9:
        return f"{bits_per_second / 1e9:.2f} Gb/s"
    return f"{bits_per_second / 1e6:.1f} Mb/s"


def end_label(end: Endpoint) -> str:
    """What a link end shows: the interface name (the port unless renamed), then its addresses, then each 802.1Q
    subinterface with its addresses (`eth0.10 10.0.10.1/24`)."""
    name = end.interface.name or end.port
    subinterfaces = [" ".join([subinterface_name(name, sub.vlan), *sub.addresses]) for sub in end.interface.subinterfaces]
    return "\n".join([name, *end.interface.addresses, *subinterfaces])


def impairment_label(impairment: Impairment) -> str:
    parts = []
    if impairment.delay_ms:
        jitter = f" ±{impairment.jitter_ms:g}" if impairment.jitter_ms else ""
        parts.append(f"{impairment.delay_ms:g}{jitter} ms")
    if impairment.loss_pct:
        parts.append(f"{impairment.loss_pct:g}% loss")
    if impairment.rate_mbit:
        parts.append(f"{impairment.rate_mbit:g} Mbit/s")
    return " · ".join(parts)


def vlans_label(link: Link, nodes: dict[str, Node], vlans_of: VlansOf) -> str:
    """The VLANs a link carries, from the switch ports at its ends: `v10` (access), `10,20` (trunk); the two ends'
    each where they differ."""
    shown: dict[str, None] = {}
    for end in link.ends:
        vlans = vlans_of(nodes[end.node])
        port = port_vlans(vlans, end.port) if vlans is not None else None
        if port is not None:
            shown[port_label(port)] = None
    return " | ".join(shown)


def middle_label(link: Link, nodes: dict[str, Node], vlans_of: VlansOf) -> str:
    """What the middle of a link shows: its VLANs, then its impairment."""
    return " · ".join(part for part in (vlans_label(link, nodes, vlans_of), impairment_label(link.impairment)) if part)
