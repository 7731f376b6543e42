"""What every op is: typed data naming the resources it needs and makes, its inverse and its shell equivalent.

An op whose inverse is None is undone by removing what it lives in (an address goes with its interface, an
interface inside a lab namespace goes with the namespace). Ops are plain data: the host layer applies them, and
explain() renders them from the same fields and constants, so the script a student reads is what runs.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, fields
from typing import Any, ClassVar

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


# ---------------------------------------------------------------- rendering, for explain()
# Every value is shell-quoted, and text that goes into a comment has its control characters escaped, so no value
# can end a comment or a quoted word and run a command of its own in the explained script.

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def sh(*argv: str) -> str:
    return shlex.join(argv)


def comment(text: str) -> str:
    """`text`, safe to put after a `#`: control characters (a newline first of all) are written as escapes."""
    return CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def heredoc(command: str, content: str) -> list[str]:
    """`command` reading `content` from a here-document, with a delimiter that no line of the content equals."""
    lines = content.rstrip("\n").split("\n")
    delimiter, number = "EOF", 0
    while delimiter in lines:
        number += 1
        delimiter = f"EOF{number}"
    return [f"{command} <<'{delimiter}'", *lines, delimiter]


def ip_cmd(netns: str | None, *args: str) -> str:
    return sh("ip", *(["-n", netns] if netns else []), *args)


def in_netns(netns: str | None, argv: list[str] | tuple[str, ...]) -> str:
    return sh("ip", "netns", "exec", netns, *argv) if netns else sh(*argv)


def tap_device(interface: str) -> str:
    """The shell's words for the character device of a macvtap: /dev/tapN, N its ifindex."""
    return f"/dev/tap$(cat {shlex.quote(f'/sys/class/net/{interface}/ifindex')})"


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

    def explain(self) -> list[str]:
        raise NotImplementedError

    def inverse(self) -> Op | None:
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
