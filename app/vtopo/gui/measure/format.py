"""How the measure panel writes rates and impairments, in the charts, the status line and the history."""
from __future__ import annotations

from vtopo.measure import RunResult


def format_rate(bits_per_second: float | None) -> str:
    if bits_per_second is None:
        return "-"
    if bits_per_second >= 1e9:
        return f"{bits_per_second / 1e9:.2f} Gb/s"
    return f"{bits_per_second / 1e6:.1f} Mb/s"


def rate_unit(max_bits_per_second: float) -> tuple[str, float]:
    return ("Gb/s", 1e9) if max_bits_per_second >= 2e9 else ("Mb/s", 1e6)


def impairment_text(result: RunResult) -> str:
    if result.options.protocol == "udp":
        loss = result.lost_percent
        return "-" if loss is None else f"{loss:.2f}% loss"
    retr = result.retransmits
    return "-" if retr is None else f"{retr} retr"
