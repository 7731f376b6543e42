"""A stretch of terminal cells selected with the mouse, in reading order, as xterm selects."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

Cell = tuple[int, int]
"""(line, column)"""


@dataclass
class Selection:
    anchor: Cell
    end: Cell

    @property
    def empty(self) -> bool:
        return self.anchor == self.end

    def spans(self, columns: int) -> Iterator[tuple[int, int, int]]:
        """(line, first column, column after the last) for each line the selection covers."""
        (first_line, first_column), (last_line, last_column) = sorted((self.anchor, self.end))
        for line in range(first_line, last_line + 1):
            start = first_column if line == first_line else 0
            stop = last_column if line == last_line else columns
            if stop > start:
                yield line, start, stop

    def text(self, display: list[str]) -> str:
        """The selected characters, each line's trailing blanks dropped, lines joined by newlines."""
        columns = max((len(line) for line in display), default=0)
        return "\n".join(display[line][start:stop].rstrip() for line, start, stop in self.spans(columns)
                         if line < len(display))
