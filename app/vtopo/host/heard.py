"""What the agent hears of a deployed lab (vtopo.host.watch hears it): kept apart from the watcher, so that reading
a lab's record loads no netlink."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vtopo import ops as o
from vtopo.host.lab_parts import Interface


@dataclass(frozen=True)
class InterfaceChanged:
    """A watched interface went up or down (`up`), or away (None)."""

    interface: Interface
    up: bool | None


@dataclass(frozen=True)
class NamespaceEnded:
    netns: str


@dataclass(frozen=True)
class ProcessEnded:
    op: o.StartProcess


@dataclass(frozen=True)
class DomainEnded:
    """A VM's libvirt domain stopped or crashed."""

    op: o.StartDomain


@dataclass(frozen=True)
class DetailChanged:
    """A file changed that the status detail of node `owner` ("node srv") is read from (a DHCP server's leases)."""

    owner: str


@dataclass(frozen=True)
class Unheard:
    """The kernel said more than the watcher could take in at once: the lab may have changed unheard, until probed."""


Heard = InterfaceChanged | NamespaceEnded | ProcessEnded | DomainEnded | DetailChanged | Unheard
Listener = Callable[[str, Heard], None]
"""Called on the watching thread with the lab's name and what happened to it."""
