"""Contexts that `resolve` builds field by field (an end's medium, then its device), and then freezes: once a lab is
resolved, what reads it (lowering, the agent, the designer) cannot change it, and assigning to one of its contexts
raises at once instead of changing what every other reader sees."""
from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any


class FreezesOnceResolved:
    """A dataclass whose fields may be assigned until `freeze`, and never after."""

    _frozen = False

    def freeze(self) -> None:
        object.__setattr__(self, "_frozen", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if self._frozen:
            raise FrozenInstanceError(f"cannot assign to {name} of this {type(self).__name__}: a lab in context is "
                                      "frozen once resolved; resolve the lab as changed instead")
        super().__setattr__(name, value)
