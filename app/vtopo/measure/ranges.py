"""The ranges a measurement's options must lie in, and what is said when one does not."""
from __future__ import annotations

Range = tuple[str, float, float, float, str]
"""(what, value, lowest, highest, the range in words: "0.1 s and 60 s")."""


def outside(*ranges: Range) -> list[str]:
    """"<what> must be between <range in words>" for each value outside its range."""
    return [f"{what} must be between {words}" for what, value, low, high, words in ranges if not low <= value <= high]
