"""How the measure panel writes rates and impairments, in the charts, the status line and the history (a rate
itself as the canvas writes it: vtopo.gui.canvas.labels.format_rate)."""
from __future__ import annotations

from vtopo.measure import RunResult


def rate_unit(max_bits_per_second: float) -> tuple[str, float]:
    return ("Gb/s", 1e9) if max_bits_per_second >= 2e9 else ("Mb/s", 1e6)


def impairment_text(result: RunResult) -> str:
    if result.options.protocol == "udp":
        loss = result.lost_percent
        return "-" if loss is None else f"{loss:.2f}% loss"
    retr = result.retransmits
    return "-" if retr is None else f"{retr} retr"
