"""Where pasted copies and new notes go: clear of the nodes already drawn, so nothing lands on top of another."""
from __future__ import annotations

from collections.abc import Iterable

from vtopo.model.topology import Position

NODE_ROOM = 80.0  # a node with its name takes about this much in each direction from its centre
STEP = 40.0  # how far a copy or a note moves on when its place is taken
MAX_STEPS = 500


class Occupied:
    """The nodes' positions by cell of NODE_ROOM, so that finding a free place costs no scan of a large lab."""

    def __init__(self, positions: Iterable[Position]) -> None:
        self._cells: dict[tuple[int, int], list[Position]] = {}
        for position in positions:
            self._cells.setdefault(_cell(position.x, position.y), []).append(position)

    def near(self, x: float, y: float) -> bool:
        """Whether a node is closer than NODE_ROOM to (x, y), in both directions."""
        column, row = _cell(x, y)
        return any(abs(p.x - x) < NODE_ROOM and abs(p.y - y) < NODE_ROOM
                   for dx in (-1, 0, 1) for dy in (-1, 0, 1) for p in self._cells.get((column + dx, row + dy), ()))

    def in_box(self, left: float, top: float, width: float, height: float) -> bool:
        """Whether a node's icon (NODE_ROOM / 2 around its centre) reaches into the box."""
        margin = NODE_ROOM / 2
        columns = range(_cell(left - margin, 0)[0], _cell(left + width + margin, 0)[0] + 1)
        rows = range(_cell(0, top - margin)[1], _cell(0, top + height + margin)[1] + 1)
        return any(left - margin < p.x < left + width + margin and top - margin < p.y < top + height + margin
                   for column in columns for row in rows for p in self._cells.get((column, row), ()))


def clear_offset(points: list[Position], offset: Position, occupied: Occupied) -> Position:
    """`offset`, moved on diagonally a step at a time until none of the points it moves lands on a node."""
    x, y = offset.x, offset.y
    for _ in range(MAX_STEPS):
        if not any(occupied.near(p.x + x, p.y + y) for p in points):
            break
        x, y = x + STEP, y + STEP
    return Position(round(x, 1), round(y, 1))


def clear_box(at: Position, width: float, height: float, occupied: Occupied) -> Position:
    """A place for a box (a note) at `at`, or below it, that covers no node."""
    y = at.y
    for _ in range(MAX_STEPS):
        if not occupied.in_box(at.x, y, width, height):
            break
        y += STEP
    return Position(at.x, round(y, 1))


def _cell(x: float, y: float) -> tuple[int, int]:
    return int(x // NODE_ROOM), int(y // NODE_ROOM)
