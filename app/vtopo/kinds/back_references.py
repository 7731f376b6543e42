"""A field of a context that points back up to what holds it (a node's context to its lab's, an end's to its node's
and its peer's), held weakly: a lab in context is then a tree to reference counting, freed as soon as it is dropped,
with nothing for the cycle collector, which holds the interpreter lock while it scans. Whoever reads a node or an end
holds its lab in context (a ResolvedLab, a LabContext) meanwhile."""
from __future__ import annotations

import weakref
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class BackReference(Generic[T]):
    """A dataclass field held weakly (see the module), which must be given unless `optional` (then None by
    default)."""

    def __init__(self, optional: bool = False) -> None:
        self._optional = optional
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> T: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> Any:
        if instance is None:  # the dataclass asking for the field's default: None, or none when it must be given
            if self._optional:
                return None
            raise AttributeError(self._name)
        reference = instance.__dict__[self._name]
        if reference is None:
            return None
        target = reference()
        if target is None:
            raise ReferenceError(f"the {self._name} of this {type(instance).__name__} was dropped: hold the lab in "
                                 "context (its ResolvedLab or LabContext) while reading its nodes and ends")
        return target

    def __set__(self, instance: object, value: T) -> None:
        instance.__dict__[self._name] = None if value is None else weakref.ref(value)
