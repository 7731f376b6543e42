"""What every op is: typed data naming the resources it needs and makes, what it asks of the host, and its inverse.

An op whose inverse is None is undone by removing what it lives in (an address goes with its interface, an
interface inside a lab namespace goes with the namespace). `apply(host)` is the op's one description of what it
does (see vtopo.ops.host): the kernel host does it, the script host writes it down, so the script a student reads
is what runs.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from vtopo.ops.host import Host

HOST = ""  # the resource name of the host's own network namespace
OP_TYPES: dict[str, type[Op]] = {}
"""Every op class by name, filled as they are defined: the journal rebuilds ops from it."""


def ns_resource(netns: str | None) -> str:
    return f"netns:{netns or HOST}"


def dev_resource(netns: str | None, name: str) -> str:
    return f"dev:{netns or HOST}/{name}"


def up_resource(netns: str | None, name: str) -> str:
    """An interface that is up: with its veth peer up too, it has carrier."""
    return f"up:{netns or HOST}/{name}"


def addresses_resource(netns: str | None) -> str:
    return f"addr:{netns or HOST}"


@dataclass(frozen=True, kw_only=True)
class Op:
    """Base of every op. `owner` names the node or link the op belongs to, for messages."""

    owner: str
    summary_text: ClassVar[str] = ""
    waiting_text: ClassVar[str] = ""  # what a deploy waits for while this op runs, when that can take long

    def __init_subclass__(cls, register: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if register:
            OP_TYPES[cls.__name__] = cls

    @property
    def name_of_op(self) -> str:
        return type(self).__name__

    def requires(self) -> frozenset[str]:
        return frozenset()

    def provides(self) -> frozenset[str]:
        return frozenset()

    def apply(self, host: Host) -> None:
        """Ask `host` for what this op does (see vtopo.ops.host)."""
        raise NotImplementedError

    def inverse(self) -> Op | None:
        """The op that removes what this one made: undoing is applying it, on the host as in the script."""
        return None

    def summary(self) -> str:
        return self.summary_text.format(**{f.name: getattr(self, f.name) for f in fields(self)})

    def doing(self) -> str:
        """What a deploy's progress says while this op runs: what it waits for, when that can take long."""
        text = self.waiting_text or self.summary_text
        return text.format(**{f.name: getattr(self, f.name) for f in fields(self)})

    def to_json(self) -> dict[str, Any]:
        """The op as JSON data. Its fields hold plain values and tuples of them: nothing to copy deeply, which
        `asdict` would do for each of a deploy's thousands of journal lines."""
        return {"op": self.name_of_op, **{f.name: _json_value(getattr(self, f.name)) for f in fields(self)}}


def _json_value(value: Any) -> Any:
    return [_json_value(item) for item in value] if isinstance(value, tuple) else value


def op_from_json(data: dict[str, Any]) -> Op:
    """Rebuild an op from `Op.to_json()` output (the journal stores ops this way)."""
    data = dict(data)
    cls = OP_TYPES[data.pop("op")]
    kwargs = {}
    for f in fields(cls):
        if f.name in data:
            value = data[f.name]
            if isinstance(value, list):
                value = tuple(tuple(v) if isinstance(v, list) else v for v in value)
            kwargs[f.name] = value
    return cls(**kwargs)
