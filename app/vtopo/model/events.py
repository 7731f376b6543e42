"""A minimal observer, so views can follow the model without the model knowing them."""
from __future__ import annotations

from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Event(Generic[T]):
    def __init__(self) -> None:
        self._listeners: list[Callable[[T], None]] = []

    def connect(self, listener: Callable[[T], None]) -> None:
        self._listeners.append(listener)

    def disconnect(self, listener: Callable[[T], None]) -> None:
        self._listeners.remove(listener)

    def emit(self, value: T) -> None:
        for listener in list(self._listeners):
            listener(value)
