"""The lines that changed between two texts (the Explain dock's script before and after an edit), without Qt: the
designer's checker finds them beside the script it writes, and the dock edits only those lines (panels.line_changes).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass

PIECE_CHARS = 1 << 16
"""How much text one split takes at a time: the split of a whole 3 MB script holds the interpreter 4 ms, which the
GUI thread then waits for."""
SMALL_MIDDLE = 4000
"""Lines left between the common start and end of two texts of different lengths up to which they are compared
line by line (difflib: quadratic at worst); past it the middle is replaced at once."""


@dataclass(frozen=True)
class LineChange:
    """Lines [start, end) of the old text (blocks of the document) become `lines`."""

    start: int
    end: int
    lines: tuple[str, ...]


def line_changes(old: str, new: str) -> list[LineChange]:
    """The changes that turn `old` into `new`, as lines (split at "\\n", as a QTextDocument splits its blocks),
    in order."""
    before, after = _lines(old), _lines(new)
    head = 0
    limit = min(len(before), len(after))
    while head < limit and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < limit - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    was, now = before[head:len(before) - tail], after[head:len(after) - tail]
    if len(was) == len(now):  # edits in place (a rename): the runs of lines that differ
        return _runs(head, was, now)
    if len(was) + len(now) <= SMALL_MIDDLE:
        matcher = difflib.SequenceMatcher(None, was, now, autojunk=False)
        return [LineChange(head + i1, head + i2, tuple(now[j1:j2]))
                for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    return [LineChange(head, head + len(was), tuple(now))]


def _lines(text: str) -> list[str]:
    """text.split("\n"), a piece at a time."""
    lines: list[str] = []
    start = 0
    while (end := text.find("\n", start + PIECE_CHARS)) != -1:
        lines += text[start:end].split("\n")
        start = end + 1
    lines += text[start:].split("\n")
    return lines


def _runs(head: int, was: list[str], now: list[str]) -> list[LineChange]:
    changes: list[LineChange] = []
    start = None
    for i, (a, b) in enumerate(zip(was, now)):
        if a != b and start is None:
            start = i
        elif a == b and start is not None:
            changes.append(LineChange(head + start, head + i, tuple(now[start:i])))
            start = None
    if start is not None:
        changes.append(LineChange(head + start, head + len(was), tuple(now[start:])))
    return changes
