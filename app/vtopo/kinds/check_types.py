"""The contract of a check type: what it asks of a deployed lab and how it judges the answer.

Built-in types live in vtopo.checks; a node kind adds its own through `NodeKind.check_types()` (the router adds
`ospf-neighbor`). Parameters are declared like node settings, so the loader validates them the same way.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol


@dataclass(frozen=True)
class Verdict:
    """A check's outcome."""

    passed: bool
    why: str
    """What was observed, in one sentence: "h1 gets no reply from 10.2.0.10 (h3) within 2 s"."""


def with_cause(what: str, cause: str) -> str:
    """What was seen, then why (a probe's diagnosis), or where to look when the lab shows no cause."""
    return f"{what}: {cause}" if cause else f"{what}; check the links, addresses and routes on the path"


class Probe(Protocol):
    """What a check may ask of a deployed lab. The live probe asks the kernel; unit tests pass a fake."""

    def address_of(self, source: str, destination: str) -> str:
        """The address of `destination` that `source` would aim at."""

    def addresses_of(self, node: str) -> list[str]:
        """Every IP address of `node`, without prefix length."""

    def node_of(self, address: str) -> str | None:
        """The node that owns `address`, if any."""

    def reach(self, source: str, destination: str, address: str) -> str | None:
        """None when `source` gets an echo reply from `address`, else why not."""

    def hops(self, source: str, address: str) -> list[str]:
        """The address answering at each TTL from 1 on; the last is `address` itself when it was reached."""

    def diagnose(self, source: str, destination: str, address: str) -> str:
        """What keeps `source`'s packets from `address` (of `destination`) or its replies from coming back, in one
        sentence a student can act on (a link down on the path, a wrong mask, a missing route); "" when nothing
        shows."""

    def run(self, node: str, argv: list[str]) -> str:
        """The standard output of `argv` run inside `node`."""

    def same_domain(self, a: str, b: str) -> bool:
        """Whether interfaces `a` and `b` ("node:port") share one L2 broadcast domain."""

    def apart(self, a: str, b: str) -> str:
        """What keeps interfaces `a` and `b` out of one broadcast domain, where the lab shows it (a VLAN that stops on
        the way, and the lines that carry it); "" otherwise."""

    def rate(self, source: str, destination: str, seconds: int) -> float:
        """TCP throughput from `source` to `destination` in bit/s, over `seconds`."""

    def leased_addresses(self, interface: str) -> list[str]:
        """The addresses (with prefix) that a DHCP client holds on `interface` ("node:port"): those the kernel keeps
        with a lifetime, the lease's."""

    def dhcp_diagnosis(self, interface: str) -> str:
        """Why a DHCP client on `interface` may get no lease, in one sentence a student can act on: what answers DHCP
        on its broadcast domain, or that nothing does and which router would have to relay."""


class CheckType(ABC):
    """One type of check, e.g. `reach`. Subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    summary: ClassVar[str]
    params_type: ClassVar[type]
    node_fields: ClassVar[tuple[str, ...]] = ()
    """Parameters that name a node: the loader checks they exist, the designer highlights them."""
    interface_fields: ClassVar[tuple[str, ...]] = ()
    """Parameters that name an interface as NODE:PORT."""
    exclusive: ClassVar[bool] = False
    """True for a check that loads the lab (a throughput test): it runs alone, after the others."""
    settles: ClassVar[bool] = False
    """True for a check that waits for what the lab settles into a while after its deploy (a DHCP lease): it runs
    before the others, which may need it."""

    def problems(self, params: Any) -> list[tuple[str, str]]:
        """(field, message) for what the parameter types alone cannot say, e.g. two options that exclude each other."""
        return []

    @abstractmethod
    def describe(self, params: Any) -> str:
        """The expectation in plain words, used when the check has no explanation of its own."""

    @abstractmethod
    def run(self, params: Any, probe: Probe) -> Verdict:
        """Ask the lab and judge the answer."""
