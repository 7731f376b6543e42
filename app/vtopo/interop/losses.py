"""What an importer says of the fields it does not carry: one line for each, naming the field, its value and what
vtopo does instead.

Each reader keeps an allow-list of the fields it carries (or reports itself, with words of its own); every other
field the source sets is a loss and is said, with the words a reader knows for it, or a general line."""
from __future__ import annotations

from typing import Any, Iterator, Mapping

from vtopo.model.untrusted_json import readable

SHOWN = 60  # characters of a value a notice quotes


def is_set(value: Any) -> bool:
    """Whether a field holds something: a saved default of nothing (null, "", [], {}) carries nothing to lose."""
    return value not in (None, "", [], {})


def shown(value: Any) -> str:
    """A field's value in a notice: short, on one line (no character a terminal acts on); a list by its items, an
    object by its names."""
    if isinstance(value, list):
        text = ", ".join(shown(item) for item in value)
    elif isinstance(value, dict):
        text = ", ".join(f"{key}={item}" if isinstance(item, (str, int, float)) else str(key)
                         for key, item in value.items())
    else:
        text = str(value)
    text = " ".join(readable(text).split())
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def unread(definition: Mapping[str, Any], carried: frozenset[str]) -> Iterator[str]:
    """The fields of `definition` that hold something and are not `carried`, in its order."""
    return (key for key, value in definition.items() if key not in carried and is_set(value))


def loss(field: str, value: Any, instead: Mapping[str, str], where: str = "") -> str:
    """The line of a field that is not carried: its value, where it was set when that is not the subject itself, and
    what vtopo does instead (`instead[field]`, or that the import does not read it)."""
    place = f" (set at {where})" if where else ""
    return " ".join(readable(f"{field} {shown(value)}{place} is not carried: "
                             f"{instead.get(field, 'vtopo does not read this field, and the lab goes without it')}"
                             ).split())
