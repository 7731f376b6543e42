"""The host's libvirt daemon: is it answering, and start it the way vtopo starts Open vSwitch.

Facts this is built on (Debian 12, libvirt 9.0): without systemd, `libvirtd -d -p PIDFILE` daemonizes and writes
its pid; QEMU domains log their serial console through virtlogd (qemu.conf's default stdio_handler), which
systemd would start from its socket, so here vtopo starts `virtlogd -d -p PIDFILE` first. On a systemd host,
setup enables libvirtd and vtopo only asks systemd to start it.
"""
from __future__ import annotations

import grp
import importlib.util
import os
import socket
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

from vtopo.host import processes
from vtopo.host.owned_files import make_directory, write_file
from vtopo.lab_terms import KVM_GROUP, HostFacts

DEFAULT_URI = HostFacts.libvirt_uri
START_SECONDS = 15.0
DAEMONS = ("virtlogd", "libvirtd")  # in start order
VIRTLOGD_SOCKET = "/run/libvirt/virtlogd-sock"
KVM_DEVICE = "/dev/kvm"
KVM_WAS = "kvm-device.was"  # in the pid directory: /dev/kvm's group and mode before vtopo shared it


class LibvirtdError(Exception):
    pass


# libvirt-python is vtopo's `libvirt` extra: without it, VMs run as plain QEMU processes.
MISSING_MODULE = ("libvirt-python is not installed: pip install 'vtopo[libvirt]' (building it needs the Debian "
                  "packages libvirt-dev, pkg-config and gcc)")


def module_installed() -> bool:
    return importlib.util.find_spec("libvirt") is not None


def load_libvirt() -> Any:
    """libvirt-python, with its default error handler (which prints every error on stderr) silenced."""
    import libvirt

    libvirt.registerErrorHandler(lambda _context, _error: None, None)
    return libvirt


def answers(uri: str = DEFAULT_URI) -> bool:
    """Whether libvirtd answers at `uri`; never without libvirt-python, which vtopo talks to it through."""
    if not module_installed():
        return False
    libvirt = load_libvirt()
    try:
        libvirt.open(uri).close()
    except libvirt.libvirtError:
        return False
    return True


def _listening(path: str) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except OSError:
            return False
    return True


def systemd_runs() -> bool:
    return Path("/run/systemd/system").is_dir()


class LibvirtService:
    """libvirtd (and virtlogd) on this host. Pid files live in `pid_dir`: only daemons recorded there were started
    by vtopo, and only those does :meth:`stop` end."""

    def __init__(self, pid_dir: Path, uri: str = DEFAULT_URI):
        self.pid_dir = Path(pid_dir)
        self.uri = uri

    def running(self) -> bool:
        return answers(self.uri)

    def started_by_us(self) -> bool:
        return any(self._pid_file(daemon).exists() for daemon in DAEMONS)

    def start(self) -> None:
        """Start libvirtd if it does not answer. Idempotent."""
        if self.running():
            return
        if systemd_runs():
            subprocess.run(["systemctl", "start", "libvirtd.service"], capture_output=True, check=False)
        else:
            make_directory(self.pid_dir, exist_ok=True)
            self._share_kvm_device()
            for daemon in DAEMONS:
                if not (daemon == "virtlogd" and _listening(VIRTLOGD_SOCKET)):  # another virtlogd may serve
                    self._start_daemon(daemon)
        deadline = time.monotonic() + START_SECONDS
        while not self.running():
            if time.monotonic() > deadline:
                raise LibvirtdError(f"libvirtd did not answer at {self.uri} within {START_SECONDS:g} s; see "
                                    "/var/log/libvirt/libvirtd.log or run `libvirtd` in a terminal")
            time.sleep(0.05)

    def _start_daemon(self, daemon: str) -> None:
        pid_file = self._pid_file(daemon)
        try:
            processes.start_daemon([daemon, "-d", "-p", str(pid_file)], None, pid_file, None, START_SECONDS)
        except processes.DaemonError as error:
            raise LibvirtdError(str(error)) from error
        except FileNotFoundError as error:
            raise LibvirtdError(f"{daemon} is not installed; install libvirt-daemon-system (or run `make "
                                f"setup`)") from error

    def _share_kvm_device(self) -> None:
        """Give /dev/kvm the group and mode udev gives it on a Debian host (group kvm, read-write), where no udev did.

        libvirt runs QEMU as libvirt-qemu, and at every lookup of its cached QEMU capabilities it checks whether that
        user can open /dev/kvm. The probe that filled the cache saw KVM, so with /dev/kvm root-only the cache is
        stale at every lookup and libvirt probes QEMU again (two QEMU runs, about 5 s), several times per domain
        start: a TCG domain took 40 s to start on this host instead of 1.5 s. :meth:`stop` puts the old group and
        mode back."""
        try:
            kvm_gid = grp.getgrnam(KVM_GROUP).gr_gid
            device = os.stat(KVM_DEVICE)
        except (KeyError, OSError):
            return  # no kvm group (libvirt is not installed) or no KVM device: nothing for libvirt to find stale
        shared = stat.S_IRGRP | stat.S_IWGRP
        if device.st_gid == kvm_gid and device.st_mode & shared == shared:
            return
        write_file(self.pid_dir / KVM_WAS, f"{device.st_gid} {stat.S_IMODE(device.st_mode):o}\n")
        os.chown(KVM_DEVICE, -1, kvm_gid)
        os.chmod(KVM_DEVICE, stat.S_IMODE(device.st_mode) | shared)

    def _unshare_kvm_device(self) -> None:
        was = self.pid_dir / KVM_WAS
        try:
            gid, mode = was.read_text().split()
        except (OSError, ValueError):
            return
        os.chown(KVM_DEVICE, -1, int(gid))
        os.chmod(KVM_DEVICE, int(mode, 8))
        was.unlink()

    def stop(self) -> None:
        """Stop the daemons vtopo started (newest first), and give /dev/kvm back its group and mode. Others are
        left alone."""
        for daemon in reversed(DAEMONS):
            pid_file = self._pid_file(daemon)
            try:
                pid = int(pid_file.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pid_file.unlink(missing_ok=True)
                continue
            processes.stop_process(pid, daemon)
            pid_file.unlink(missing_ok=True)
        self._unshare_kvm_device()

    def _pid_file(self, daemon: str) -> Path:
        return self.pid_dir / f"{daemon}.pid"
