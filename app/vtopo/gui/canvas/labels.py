"""The text a link shows at each end and in its middle."""
from __future__ import annotations

from vtopo.model.topology import Endpoint, Impairment


def end_label(end: Endpoint) -> str:
    """What a link end shows: the interface name (the port unless renamed), then its addresses."""
    return "\n".join([end.interface.name or end.port, *end.interface.addresses])


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
