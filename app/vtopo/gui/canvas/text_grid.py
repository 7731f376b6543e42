"""Where the canvas's texts are (the links' labels, the nodes' icons and names), filed in square cells: a label about
to be placed looks only at the texts in the cells it would cover. At a switch of a thousand ports, looking at every
label of every link at the switch cost seconds, and placing all of them took minutes."""
from __future__ import annotations

import math
from typing import Callable, Generic, Hashable, Iterator, TypeVar

from PySide6.QtCore import QRectF

CELL = 64.0  # about a label's size: a place tried looks at one to four cells

Owner = TypeVar("Owner", bound=Hashable)
Cell = tuple[int, int]


def _cells(rect: QRectF) -> tuple[int, int, int, int]:
    """The first and last columns and rows of the cells `rect` covers."""
    return (math.floor(rect.left() / CELL), math.floor(rect.right() / CELL),
            math.floor(rect.top() / CELL), math.floor(rect.bottom() / CELL))


class TextGrid(Generic[Owner]):
    """The rectangles each owner (a node or a link item) covers with texts. An owner whose texts changed is marked,
    and asked for them again before the next look: a drag moves many, and each is asked once, when it matters."""

    def __init__(self) -> None:
        self._cells: dict[Cell, dict[Owner, list[QRectF]]] = {}
        self._filed: dict[Owner, list[Cell]] = {}
        self._stale: dict[Owner, Callable[[], list[QRectF]]] = {}
        self._bare: set[Owner] = set()
        """Owners whose texts went, passed over where they are still filed until they have texts again: the
        thousand links a drag of a bridge stretches lose their labels in one step, and taking them out of their
        cells then cost more than the rest of that step."""

    def mark(self, owner: Owner, rects: Callable[[], list[QRectF]]) -> None:
        """`owner`'s texts changed (or it came): `rects` tells where they now are, in scene coordinates."""
        self._stale[owner] = rects

    def drop(self, owner: Owner) -> None:
        """`owner` went, with its texts."""
        self._stale.pop(owner, None)
        self._unfile(owner)

    def clear(self) -> None:
        self._cells.clear()
        self._filed.clear()
        self._stale.clear()
        self._bare.clear()

    def owners_over(self, rect: QRectF) -> Iterator[Owner]:
        """The owners of the texts `rect` intersects (one whose texts span several cells may come more than once)."""
        if self._stale:
            self.file_marked()
        left, right, top, bottom = _cells(rect)
        cells, bare = self._cells, self._bare
        for column in range(left, right + 1):
            for row in range(top, bottom + 1):
                for owner, texts in cells.get((column, row), {}).items():
                    if owner in bare:
                        continue
                    for text in texts:
                        if text.intersects(rect):
                            yield owner
                            break

    def file_marked(self) -> None:
        """Ask the owners marked since for their texts now."""
        stale, self._stale = self._stale, {}
        for owner, rects in stale.items():
            texts = [text for text in rects() if not text.isEmpty()]
            if not texts:
                if owner in self._filed:
                    self._bare.add(owner)
                continue
            self._unfile(owner)
            filed = []
            for text in texts:
                left, right, top, bottom = _cells(text)
                for column in range(left, right + 1):
                    for row in range(top, bottom + 1):
                        self._cells.setdefault((column, row), {}).setdefault(owner, []).append(text)
                        filed.append((column, row))
            self._filed[owner] = filed

    def _unfile(self, owner: Owner) -> None:
        self._bare.discard(owner)
        for cell in self._filed.pop(owner, ()):
            texts = self._cells.get(cell)
            if texts is not None and texts.pop(owner, None) is not None and not texts:
                del self._cells[cell]
