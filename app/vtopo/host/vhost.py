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
    vhost_fd: bool | None  # None: this process may not read QEMU's descriptors (only root and QEMU's user may)
    threads: tuple[str, ...]
    drivers: tuple[str, ...]  # what libvirt reports per NIC; empty for a bare QEMU process
    kernel_has_vhost: bool
    asked: bool = False  # whether the lab asks for vhost-net

    @property
    def in_effect(self) -> bool | None:
        """Whether vhost-net moves this VM's packets; None when this process cannot tell."""
        if not self.kernel_has_vhost:
            return False
        return None if self.pid is None else self.vhost_fd

    @property
    def summary(self) -> str:
        if self.vhost_fd:
            return f"on: QEMU holds {VHOST_DEVICE}" + (f", kernel threads {', '.join(self.threads)}"
                                                        if self.threads else "")
        if not self.kernel_has_vhost:
            return "off: the kernel has no vhost-net"
        if self.pid is None:
            return "unknown: the VM is not running"
        if self.vhost_fd is None:
            return "unknown: only root sees QEMU's descriptors"
        return "off: QEMU moves the packets itself" + (" (<driver name='qemu'/>)" if "qemu" in self.drivers else "")

    def lines(self) -> list[str]:
        return [f"backend: {self.backend}", f"QEMU pid: {self.pid if self.pid is not None else '-'}",
                f"{VHOST_DEVICE} among its descriptors: {_yes_no(self.vhost_fd)}",
                f"vhost threads: {', '.join(self.threads) or 'none'}",
                *([f"libvirt interface drivers: {', '.join(d or 'default' for d in self.drivers)}"]
                  if self.backend == "libvirt" else []),
                f"vhost-net: {self.summary}"]


def _yes_no(answer: bool | None) -> str:
    return "unknown" if answer is None else "yes" if answer else "no"


def holds_vhost(pid: int) -> bool | None:
    """Whether QEMU `pid` holds /dev/vhost-net; None when this process may not look (not root, not QEMU's user)."""
    fd_dir = Path(f"/proc/{pid}/fd")
    try:
        entries = list(fd_dir.iterdir())
    except PermissionError:
        return None
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


def inspect(backend: str, pid: int | None, drivers: tuple[str, ...] = (), asked: bool = False) -> VhostState:
    kernel = os.path.exists(VHOST_DEVICE)
    if pid is None or not Path(f"/proc/{pid}").exists():
        return VhostState(backend, None, False, (), drivers, kernel, asked)
    return VhostState(backend, pid, holds_vhost(pid), vhost_threads(pid), drivers, kernel, asked)
