"""libvirt's lifecycle events of the labs' domains, for the agent's watcher: a VM that stops or crashes (`virsh
destroy`, QEMU killed, the guest powered off) is told as it happens, not found by the next probe.

libvirt delivers events on its own event loop, which runs on a thread of this module's; each connection it opens
(one per URI) is opened after that loop is registered, as libvirt requires."""
from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from typing import Any

from vtopo import ops as o
from vtopo.host.libvirtd import load_libvirt

Ended = Callable[[str, o.StartDomain], None]
"""Called on libvirt's event thread with the lab and the op of a watched domain that is no longer running."""

_loop_guard = threading.Lock()


@functools.cache
def _libvirt_loop() -> threading.Thread:
    """libvirt's default event loop, on a daemon thread started once per process (libvirt takes one)."""
    libvirt = load_libvirt()
    libvirt.virEventRegisterDefaultImpl()
    thread = threading.Thread(target=_loop_forever, args=(libvirt,), name="vtopo libvirt events", daemon=True)
    thread.start()
    return thread


def _loop_forever(libvirt: Any) -> None:
    while True:
        libvirt.virEventRunDefaultImpl()


class DomainEvents:
    """The watched domains, by (URI, name), and a connection per URI that hears their lifecycle."""

    def __init__(self, ended: Ended) -> None:
        self._ended = ended
        self._guard = threading.Lock()
        self._watched: dict[tuple[str, str], tuple[str, o.StartDomain]] = {}  # (URI, name) -> lab, its op
        self._connections: dict[str, tuple[Any, int]] = {}  # URI -> connection, its callback's id

    def watch(self, lab: str, domains: Iterable[o.StartDomain]) -> list[o.StartDomain]:
        """Watch a lab's `domains`; those that are not running now, which no event will report."""
        libvirt = load_libvirt()
        gone = []
        for op in domains:
            try:
                connection = self._connection(op.uri)
                running = bool(connection.lookupByName(op.name).isActive())
            except libvirt.libvirtError:  # no libvirtd, or no such domain
                running = False
            if not running:
                gone.append(op)
                continue
            with self._guard:
                self._watched[(op.uri, op.name)] = (lab, op)
        return gone

    def forget(self, lab: str) -> None:
        with self._guard:
            self._watched = {key: watched for key, watched in self._watched.items() if watched[0] != lab}

    def close(self) -> None:
        libvirt = load_libvirt()
        with self._guard:
            self._watched.clear()
            connections, self._connections = self._connections, {}
        for connection, callback in connections.values():
            try:
                connection.domainEventDeregisterAny(callback)
                connection.close()
            except libvirt.libvirtError:  # libvirtd went away first
                pass

    def _connection(self, uri: str) -> Any:
        with self._guard:
            if uri in self._connections:
                return self._connections[uri][0]
        with _loop_guard:
            _libvirt_loop()
        libvirt = load_libvirt()
        connection = libvirt.open(uri)
        callback = connection.domainEventRegisterAny(None, libvirt.VIR_DOMAIN_EVENT_ID_LIFECYCLE, self._lifecycle,
                                                     uri)
        connection.registerCloseCallback(self._closed, uri)
        with self._guard:
            self._connections[uri] = (connection, callback)
        return connection

    def _lifecycle(self, _connection: Any, domain: Any, event: int, _detail: int, uri: str) -> None:
        libvirt = load_libvirt()
        if event not in (libvirt.VIR_DOMAIN_EVENT_STOPPED, libvirt.VIR_DOMAIN_EVENT_CRASHED):
            return
        with self._guard:
            watched = self._watched.pop((uri, domain.name()), None)
        if watched is not None:
            self._ended(*watched)

    def _closed(self, _connection: Any, _reason: int, uri: str) -> None:
        """libvirtd went away (its QEMU processes may outlive it): the next watch connects anew."""
        with self._guard:
            self._connections.pop(uri, None)
