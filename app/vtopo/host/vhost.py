"""Is vhost-net really in effect for a VM? Look where the vhost-net experiment looked: QEMU's descriptors
(/proc/PID/fd holding /dev/vhost-net) and the kernel's `vhost-PID` threads, beside the driver libvirt reports."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from vtopo.ops import VHOST_DEVICE


@dataclass(frozen=True)
class VhostState:
    backend: str  # "libvirt" or "qemu"
    pid: int | None
    vhost_fd: bool
    threads: tuple[str, ...]
    drivers: tuple[str, ...]  # what libvirt reports per NIC; empty for a bare QEMU process
    kernel_has_vhost: bool

    @property
    def summary(self) -> str:
        if self.vhost_fd:
            return f"on: QEMU holds {VHOST_DEVICE}" + (f", kernel threads {', '.join(self.threads)}"
                                                        if self.threads else "")
        if not self.kernel_has_vhost:
            return "off: the kernel has no vhost-net"
        if self.pid is None:
            return "unknown: the VM is not running"
        return "off: QEMU moves the packets itself" + (" (<driver name='qemu'/>)" if "qemu" in self.drivers else "")

    def lines(self) -> list[str]:
        return [f"backend: {self.backend}", f"QEMU pid: {self.pid if self.pid is not None else '-'}",
                f"{VHOST_DEVICE} among its descriptors: {'yes' if self.vhost_fd else 'no'}",
                f"vhost threads: {', '.join(self.threads) or 'none'}",
                *([f"libvirt interface drivers: {', '.join(d or 'default' for d in self.drivers)}"]
                  if self.backend == "libvirt" else []),
                f"vhost-net: {self.summary}"]


def holds_vhost(pid: int) -> bool:
    fd_dir = Path(f"/proc/{pid}/fd")
    try:
        entries = list(fd_dir.iterdir())
    except OSError:
        return False
    for entry in entries:
        try:
            if os.readlink(entry) == VHOST_DEVICE:
                return True
        except OSError:
            continue
    return False


def vhost_threads(pid: int) -> tuple[str, ...]:
    """The kernel's vhost worker threads for QEMU `pid`, named vhost-PID."""
    wanted = f"vhost-{pid}"
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == wanted:
                    found.append(f"{wanted} (pid {entry.name})")
            except OSError:
                continue
    return tuple(found)


def inspect(backend: str, pid: int | None, drivers: tuple[str, ...] = ()) -> VhostState:
    kernel = os.path.exists(VHOST_DEVICE)
    if pid is None or not Path(f"/proc/{pid}").exists():
        return VhostState(backend, None, False, (), drivers, kernel)
    return VhostState(backend, pid, holds_vhost(pid), vhost_threads(pid), drivers, kernel)
