"""Host daemons that labs share (Open vSwitch today; libvirtd or an agent can register the same way).

Starting and stopping them is safe when several vtopo processes run at once:
- every check-then-start and every "stop after the last lab" runs under one host-wide lock (flock);
- a lab names the services it needs in its record *before* it asks for them, so a stopper that holds the lock
  sees every lab that may still need the daemon;
- the marker "<service>-started-by-vtopo" is written *before* the start, so a vtopo killed in the middle of a
  start leaves a marker that `vtopo cleanup` acts on.
vtopo only ever stops a daemon that its marker says vtopo started.
"""
from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from vtopo import ops as o
from vtopo.compile.plan import Plan
from vtopo.host import libvirt_domains, ovs
from vtopo.host.facts import libvirt_uri
from vtopo.host.libvirtd import LibvirtService
from vtopo.host.owned_files import make_directory, open_file
from vtopo.host.state import StateStore

LOCK_DIR = Path(os.environ.get("VTOPO_LOCK_DIR", "/run/vtopo-locks"))  # beside /run/vtopo, which cleanup empties


class Daemon(Protocol):
    def running(self) -> bool: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...


@dataclass(frozen=True)
class SharedService:
    name: str  # as labs list it in their record
    label: str  # as the user reads it
    daemon: Callable[[], Daemon]
    needed_by: Callable[[o.Op], bool]  # an op that cannot run without the daemon
    idle: Callable[[], bool] = lambda: True  # safe to stop: holds nothing (an OVS with any bridge keeps running)


def _ovs_idle() -> bool:
    return not ovs.OvsService().running() or not ovs.vsctl([["list-br"]]).split()


OVS = SharedService("openvswitch", "Open vSwitch (ovsdb-server and ovs-vswitchd)", ovs.OvsService,
                    lambda op: isinstance(op, (o.OvsAddBridge, o.OvsAddPort, o.OvsAddFlows)), _ovs_idle)


def _libvirtd() -> LibvirtService:
    return LibvirtService(StateStore().root, libvirt_uri())  # its pid files beside the markers


def _libvirtd_idle() -> bool:
    daemon = _libvirtd()
    return not daemon.running() or not libvirt_domains.lab_domains(daemon.uri)


LIBVIRTD = SharedService("libvirtd", "libvirtd (with virtlogd)", _libvirtd, lambda op: isinstance(op, o.StartDomain),
                         _libvirtd_idle)
SERVICES = {service.name: service for service in (OVS, LIBVIRTD)}


def services_of(plan: Plan, services: dict[str, SharedService] = SERVICES) -> list[str]:
    """The shared services the plan's ops need, by name."""
    return sorted(name for name, service in services.items() if any(service.needed_by(op) for op in plan.ops))


@contextmanager
def host_lock(name: str, lock_dir: Path = LOCK_DIR) -> Iterator[None]:
    """An exclusive lock shared by every vtopo process on this host. The lock file exists only while it is held:
    the holder unlinks it before letting go, and a waiter that wakes up on an unlinked file tries again."""
    path = lock_dir / f"{name}.lock"
    while True:
        try:
            make_directory(lock_dir, exist_ok=True)
            fd = open_file(path, os.O_RDWR | os.O_CREAT)
        except (FileExistsError, FileNotFoundError):  # another holder removed the directory while we made or used it
            continue
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        yield
    finally:
        path.unlink(missing_ok=True)
        try:
            lock_dir.rmdir()
        except OSError:
            pass  # another lock is held or waited for
        os.close(fd)


class Services:
    """Starts the shared services a lab needs and stops the ones vtopo started once no lab needs them."""

    def __init__(self, store: StateStore, services: dict[str, SharedService] | None = None,
                 lock_dir: Path = LOCK_DIR):
        self.store = store
        self.services = SERVICES if services is None else services
        self.lock_dir = lock_dir

    def marker(self, service: SharedService) -> Path:
        return self.store.marker(f"{service.name}-started-by-vtopo")

    def ensure(self, names: Iterable[str]) -> list[str]:
        """Make sure each named service runs; call it only after the lab's record lists them. Returns notices."""
        notices = []
        for name in sorted(set(names)):
            service = self.services[name]
            with host_lock(f"service-{name}", self.lock_dir):
                daemon = service.daemon()
                if daemon.running():
                    continue
                self.store.write_marker(self.marker(service).name)  # intent first: a crash in start() leaves a trace
                daemon.start()
            notices.append(f"{service.label} was not running: vtopo started it and stops it again when its last lab "
                           "is destroyed")
        return notices

    def release_unused(self) -> list[str]:
        """Stop every service vtopo started that no recorded lab needs any more. Returns what was stopped."""
        stopped = []
        for service in self.services.values():
            with host_lock(f"service-{service.name}", self.lock_dir):
                marker = self.marker(service)
                if not marker.exists() or self._in_use(service) or not service.idle():
                    continue
                service.daemon().stop()
                marker.unlink(missing_ok=True)
                stopped.append(service.label)
        self.store.remove_empty_directories()
        return stopped

    def _in_use(self, service: SharedService) -> bool:
        return any(service.name in record.services() for record in self.store.labs())
