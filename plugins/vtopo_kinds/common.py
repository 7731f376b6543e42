"""Small checks shared by several built-in kinds."""
from __future__ import annotations

import ipaddress
from typing import Any, Iterator

from vtopo.kinds.api import NodeContext, Problem


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
