"""Where a measurement runs: a node name and the function that wraps an argv to run inside it.

The runners know nothing about labs. The caller hands them, for each side, an `InNode`: a function
that turns an argv into the argv that runs it inside that node (`NodeKind.command_in` is one).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

InNode = Callable[[list[str]], list[str]]


Refusal = Callable[[str], "str | None"]
"""Why a node must not send to an address, or None when it may."""


def on_host(argv: list[str]) -> list[str]:
    """The `InNode` of the host itself: the argv unchanged."""
    return list(argv)


def in_netns(netns: str) -> InNode:
    """The `InNode` of a node that is a named network namespace."""

    def wrap(argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", netns, *argv]

    return wrap


@dataclass(frozen=True)
class MeasureEndpoint:
    """One side of a measurement: the node's name (for messages) and how to run a command in it.

    A node vtopo cannot run commands in has no `in_node`, and `cannot_run` says why. `servers` are the
    services that always listen in the node, by name (IPERF3_SERVER, ECHO_SERVER) with their ports: a VM's
    guest runs both, and runs aim at them instead of starting their own.
    """

    name: str
    in_node: InNode | None = on_host
    servers: Mapping[str, int] = field(default_factory=dict)
    cannot_run: str = ""
    refuses: Refusal | None = None
    """Why traffic from this node to an address must not be sent (the host would route it out of the lab), or
    None when it may; runners ask before sending anything."""

    def check_address(self, address: str) -> None:
        """Raise UnreachableError when this node must not send to `address`."""
        why = self.refuses(address) if self.refuses is not None else None
        if why:
            raise UnreachableError(why)

    @property
    def can_run(self) -> bool:
        return self.in_node is not None

    def argv(self, argv: list[str]) -> list[str]:
        if self.in_node is None:
            raise MeasureError(self.cannot_run or f"vtopo cannot run commands in {self.name}")
        return list(self.in_node(list(argv)))


def not_installed(node: str, program: str, said: str) -> str:
    """One line saying that `node` has no `program`, when what running it there printed (`said`) is a shell's
    "not found" or nsenter's "failed to execute"; "" otherwise."""
    lowered, name = said.lower(), program.rsplit("/", 1)[-1].lower()
    if f"{name}: not found" in lowered or f"{name}: command not found" in lowered or \
            f"failed to execute {name}: no such file" in lowered:
        return (f"{node} has no {name}: a node from an image runs that image's programs alone (vtopo's toolbox "
                "image has ping, iperf3 and tcpdump), any other node this host's")
    return ""


class MeasureError(Exception):
    """A measurement could not run or failed; the message names the node and what went wrong."""


class UnreachableError(MeasureError):
    """The destination address cannot be reached from the source node."""
