"""The host's libvirt daemon: is it answering, and start it the way vtopo starts Open vSwitch.

Facts this is built on (Debian 12, libvirt 9.0): without systemd, `libvirtd -d -p PIDFILE` daemonizes and writes
its pid; QEMU domains log their serial console through virtlogd (qemu.conf's default stdio_handler), which
systemd would start from its socket, so here vtopo starts `virtlogd -d -p PIDFILE` first. On a systemd host,
setup enables libvirtd and vtopo only asks systemd to start it.
"""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from vtopo.host import processes

DEFAULT_URI = "qemu:///system"
START_SECONDS = 15.0
DAEMONS = ("virtlogd", "libvirtd")  # in start order
VIRTLOGD_SOCKET = "/run/libvirt/virtlogd-sock"


class LibvirtdError(Exception):
    pass


def load_libvirt() -> Any:
    """libvirt-python, with its default error handler (which prints every error on stderr) silenced."""
    import libvirt

    libvirt.registerErrorHandler(lambda _context, _error: None, None)
    return libvirt


def answers(uri: str = DEFAULT_URI) -> bool:
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
            self.pid_dir.mkdir(parents=True, exist_ok=True)
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

    def stop(self) -> None:
        """Stop the daemons vtopo started (newest first). Others are left alone."""
        for daemon in reversed(DAEMONS):
            pid_file = self._pid_file(daemon)
            try:
                pid = int(pid_file.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pid_file.unlink(missing_ok=True)
                continue
            processes.stop_process(pid, daemon)
            pid_file.unlink(missing_ok=True)

    def _pid_file(self, daemon: str) -> Path:
        return self.pid_dir / f"{daemon}.pid"
