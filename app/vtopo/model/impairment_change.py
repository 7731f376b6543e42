"""A change to a running link's impairment, which operating a running lab makes (`vtopo link ... set`, the designer's
operate panel, restoring a checkpoint): a lab file holds none, and reading one does not load it."""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtopo.model.topology import Impairment


@dataclass(frozen=True)
class ImpairmentChange:
    """A change to a running link's Impairment (`vtopo link ... set`): each value given replaces the link's, 0 removes
    it, and None keeps what the link has."""

    delay_ms: float | None = None
    jitter_ms: float | None = None
    loss_pct: float | None = None
    rate_mbit: float | None = None

    @classmethod
    def to(cls, impairment: Impairment) -> ImpairmentChange:
        """The change that makes a link's impairment `impairment`, whatever it has now."""
        return cls(impairment.delay_ms, impairment.jitter_ms, impairment.loss_pct, impairment.rate_mbit)

    @property
    def empty(self) -> bool:
        return all(value is None for value in (self.delay_ms, self.jitter_ms, self.loss_pct, self.rate_mbit))

    def applied_to(self, impairment: Impairment) -> Impairment:
        """`impairment` with each value this change gives in place of its own."""
        return replace(impairment, **{name: value for name, value in asdict(self).items() if value is not None})
