"""Open vSwitch on the host: the daemons, batched ovs-vsctl, OpenFlow rules, and lab-tagged objects.

Everything vtopo creates in OVS carries ``external_ids:vtopo-lab=<lab tag>`` so that listing and
cleanup only ever touch our own bridges and ports (see :func:`lab_bridges`, :func:`lab_ports`,
:func:`delete_lab`).

Facts this module is built on (verified on Debian 12, OVS 3.1):

* Without the ``openvswitch`` kernel module, OVS still works with the userspace datapath: bridges
  must be created with ``datapath_type=netdev`` (:meth:`OvsService.default_datapath` says which).
* On a netdev bridge without userspace TSO, TCP between veth ports fails until TX checksum offload is turned off
  on the namespace end of every veth (``ethtool -K IF tx off``): the userspace datapath forwards the
  partially-checksummed frames as they are, and the receiver drops them. ICMP still works, so a
  ping alone does not prove a netdev lab is usable.
* Speed on the netdev datapath (measured on a 2-core host, container to container, against ~15 Gb/s on a Linux
  bridge; tests/benchmarks/test_ovs_bench.py): system ports 0.65-0.9 Gb/s with ~45,000 retransmits in 5 s, because
  the packet socket OVS reads each port with keeps the default receive buffer (net.core.rmem_default, 208 KiB) and
  overflows. ``other_config:userspace-tso-enable=true`` gives 5-9 Gb/s but 300,000+ retransmits (64 KiB frames fill
  that buffer after three); with rmem_default at 4 MiB it reaches 13 Gb/s with ~2,000 retransmits, but that is a
  host-wide setting, so vtopo does not make it. AF_XDP ports (``type=afxdp-nonpmd``) give 1.2-3 Gb/s with no
  retransmits on a quiet host but cost ~75 MB of ovs-vswitchd memory each; ovs-vswitchd's main thread polls them,
  and while it waits for a busy CPU a port's 2,048-frame ring overflows (a few hundred drops in 2 s at 3 Gb/s
  beside a busy loop, counted as rx_queue_0_drops by the veth). OVS's own internal ports (taps it reads with virtio-net
  headers), moved into the containers, give 1.6 Gb/s without userspace TSO and 10-11 Gb/s with it, against 19 Gb/s
  on a Linux bridge, with no retransmits: they are the default, and an OVS that vtopo starts gets userspace TSO.
* ``ovs-ctl start`` needs ``--system-id`` (we pass ``random``, as Debian's own units do: it reuses
  or creates /etc/openvswitch/system-id.conf). Without systemd it daemonizes by itself.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from vtopo.host.errors import HostError
from vtopo.model.rules import ovs_lab_tag

OVS_CTL = "/usr/share/openvswitch/scripts/ovs-ctl"
OVS_RUNDIR = Path(os.environ.get("OVS_RUNDIR", "/var/run/openvswitch"))
OVS_LOGDIR = Path(os.environ.get("OVS_LOGDIR", "/var/log/openvswitch"))

# Options for `ovs-ctl start` without systemd. Mirrors Debian's ovsdb-server/ovs-vswitchd units
# (--system-id=random, --no-record-hostname); --no-mlockall because a lab tool has no need to pin
# ovs-vswitchd's ~60 MB in RAM, and mlockall can fail where RLIMIT_MEMLOCK is small.
OVS_CTL_START_OPTIONS = ("--system-id=random", "--no-record-hostname", "--no-mlockall")
USERSPACE_TSO = "userspace-tso-enable"  # set by `start` before ovs-vswitchd reads it, taken back by `stop`

_MAX_SHOWN = 300


class OvsError(HostError):
    """An OVS command failed. Names the command and what the tool said."""

    def __init__(self, command: Sequence[str], message: str, returncode: int | None = None):
        self.command = list(command)
        self.returncode = returncode
        self.detail = message.strip()
        shown = " ".join(self.command)
        if len(shown) > _MAX_SHOWN:
            shown = shown[:_MAX_SHOWN] + f" ... ({len(self.command)} args)"
        status = f" (exit {returncode})" if returncode is not None else ""
        super().__init__(f"{shown} failed{status}: {self.detail or 'no output'}")


def _run(argv: Sequence[str], *, input: str | None = None, timeout_s: float = 30.0) -> str:
    """Run a tool and return its stdout; raise OvsError with its stderr on any failure."""
    try:
        proc = subprocess.run(
            list(argv), input=input, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except FileNotFoundError as exc:
        raise OvsError(argv, f"{argv[0]} not found: is openvswitch-switch installed? ({exc})") from exc
    except subprocess.TimeoutExpired as exc:
        raise OvsError(argv, f"timed out after {timeout_s:g} s") from exc
    if proc.returncode != 0:
        raise OvsError(argv, proc.stderr or proc.stdout, proc.returncode)
    return proc.stdout


def _succeeds(argv: Sequence[str], timeout_s: float = 5.0) -> bool:
    try:
        return subprocess.run(
            list(argv), capture_output=True, timeout=timeout_s, check=False
        ).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class OvsService:
    """The host's OVS daemons (ovsdb-server + ovs-vswitchd), as managed by ovs-ctl.

    `started` is True once this object has started the daemons itself: only then should the
    caller :meth:`stop` them (never stop an OVS that someone else runs).
    """

    def __init__(self, ovs_ctl: str = OVS_CTL, *, start_timeout_s: float = 30.0):
        self.ovs_ctl = ovs_ctl
        self.start_timeout_s = start_timeout_s
        self.started = False

    # -- state ---------------------------------------------------------------------------------
    def running(self) -> bool:
        """Both daemons answer: ovsdb-server through ovs-vsctl, ovs-vswitchd through its control socket."""
        return _succeeds(["ovs-vsctl", "--timeout=2", "show"]) and _succeeds(
            ["ovs-appctl", "--timeout=2", "-t", "ovs-vswitchd", "version"]
        )

    def kernel_datapath_available(self) -> bool:
        """The openvswitch kernel module is loaded (or built in), or modprobe could load it.

        Uses `modprobe -n` (dry run), so nothing is loaded.
        """
        if Path("/sys/module/openvswitch").exists():
            return True
        if shutil.which("modprobe") is None:
            return False
        return _succeeds(["modprobe", "-n", "-q", "openvswitch"])

    def default_datapath(self) -> str:
        """'system' (kernel datapath) when the module is there, else 'netdev' (userspace)."""
        return "system" if self.kernel_datapath_available() else "netdev"

    # -- control -------------------------------------------------------------------------------
    def start(self) -> None:
        """Start OVS if it is not running. Idempotent: a running OVS is left as it is.

        ovsdb-server starts first, so that userspace TSO is on before ovs-vswitchd reads it (it does so once).
        Without a loadable kernel module on a kernel that has module support, `ovs-ctl start` would try
        `modprobe openvswitch`, then `rmmod bridge` (if no Linux bridge exists) and still fail. In that case
        ovs-vswitchd is launched directly with the arguments ovs-ctl would give it (same pid/log files, so
        `ovs-ctl stop` stops it as usual).
        """
        if self.running():
            return
        _run([self.ovs_ctl, *OVS_CTL_START_OPTIONS, "--no-ovs-vswitchd", "start"], timeout_s=self.start_timeout_s)
        vsctl([["set", "Open_vSwitch", ".", f"other_config:{USERSPACE_TSO}=true"]], options=["--no-wait"])
        if not _succeeds(["ovs-appctl", "--timeout=2", "-t", "ovs-vswitchd", "version"]):
            if self.kernel_datapath_available() or not Path("/proc/modules").exists():
                _run([self.ovs_ctl, *OVS_CTL_START_OPTIONS, "--no-ovsdb-server", "start"],
                     timeout_s=self.start_timeout_s)
            else:
                _run(self._vswitchd_argv(), timeout_s=self.start_timeout_s)
        self.started = True
        self._wait_running()

    def stop(self) -> None:
        """Stop both daemons with `ovs-ctl stop`, taking back the setting `start` made. Call only for an OVS that
        we started."""
        try:
            vsctl([["remove", "Open_vSwitch", ".", "other_config", USERSPACE_TSO]], options=["--no-wait"])
        except OvsError:  # no database answers (a start killed before it): there is nothing to take back
            pass
        _run([self.ovs_ctl, "stop"], timeout_s=self.start_timeout_s)
        self.started = False

    def _wait_running(self) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while not self.running():
            if time.monotonic() > deadline:
                raise OvsError(
                    [self.ovs_ctl, "start"],
                    f"OVS did not answer within {self.start_timeout_s:g} s; see {OVS_LOGDIR}",
                )
            time.sleep(0.05)

    @staticmethod
    def _vswitchd_argv() -> list[str]:
        return [
            "ovs-vswitchd",
            f"unix:{OVS_RUNDIR / 'db.sock'}",
            "-vconsole:emer",
            "-vsyslog:err",
            "-vfile:info",
            "--no-chdir",
            f"--log-file={OVS_LOGDIR / 'ovs-vswitchd.log'}",
            f"--pidfile={OVS_RUNDIR / 'ovs-vswitchd.pid'}",
            "--detach",
            "--monitor",
        ]


# -- ovs-vsctl / ovs-ofctl -----------------------------------------------------------------------
def userspace_tso_off() -> bool:
    """An Open vSwitch database answers, and does not turn userspace TSO on (one that vtopo starts does)."""
    if not (OVS_RUNDIR / "db.sock").exists():
        return False  # none runs (the usual case): asked of every lab validated, so no ovs-vsctl is started
    try:
        value = vsctl([["--if-exists", "get", "Open_vSwitch", ".", f"other_config:{USERSPACE_TSO}"]],
                      timeout_s=1)
    except OvsError:  # none runs, or none is installed: vtopo starts its own, with TSO on
        return False
    return value.strip() != '"true"'


VSCTL_TIMEOUT_S = 30
"""How long ovs-vsctl waits for ovs-vswitchd to apply a transaction: deleting a userspace bridge of 200 ports takes
more than 5 s on a busy machine of 2 cores."""


def vsctl(commands: list[list[str]], *, options: Sequence[str] = (), timeout_s: int = VSCTL_TIMEOUT_S) -> str:
    """Run all `commands` in ONE `ovs-vsctl --timeout=N` invocation, joined by `--`.

    One call is one OVSDB transaction: a whole lab's bridges and ports are created (or nothing
    is), and ovs-vsctl waits once for ovs-vswitchd to apply them. Each command is an argv list
    such as ``["--may-exist", "add-br", "br0"]`` (per-command options go first, as in ovs-vsctl).
    `options` are global ones such as ``--format=json``. Returns stdout (each command's output in
    turn). Raises OvsError on failure.
    """
    if not commands:
        return ""
    argv = ["ovs-vsctl", f"--timeout={timeout_s}", *options]
    for command in commands:
        if not command:
            raise ValueError("empty ovs-vsctl command")
        argv += ["--", *command]
    # ovs-vsctl enforces --timeout itself; ours is a backstop.
    return _run(argv, timeout_s=timeout_s + 5)


def add_flows(bridge: str, flows: list[str]) -> None:
    """Add OpenFlow `flows` to `bridge` in one `ovs-ofctl add-flows BR -` call (flows on stdin).

    Flows are in ovs-ofctl syntax, e.g. ``in_port=1,actions=output:3``; port numbers are the
    OpenFlow ports, which are stable when the ports were created with ``ofport_request``.
    """
    if not flows:
        return
    for flow in flows:
        if "\n" in flow or not flow.strip():
            raise ValueError(f"bad flow {flow!r}: one non-empty flow per item")
    _run(["ovs-ofctl", "add-flows", bridge, "-"], input="\n".join(flows) + "\n")


def _find_names(table: str, lab_tag: str) -> list[str]:
    out = vsctl(
        [["--columns=name", "find", table, ovs_lab_tag(lab_tag)]], options=["--format=json"]
    )
    data = json.loads(out)["data"] if out.strip() else []
    return sorted(row[0] for row in data)


def lab_bridges(lab_tag: str) -> list[str]:
    """Names of the bridges tagged external_ids:vtopo-lab=lab_tag, sorted."""
    return _find_names("Bridge", lab_tag)


def lab_ports(lab_tag: str) -> list[str]:
    """Names of the ports tagged external_ids:vtopo-lab=lab_tag (on any bridge), sorted."""
    return _find_names("Port", lab_tag)


def delete_lab(lab_tag: str) -> None:
    """Delete the lab's tagged ports and bridges in one transaction. Untagged objects are untouched.

    Deleting a bridge deletes its ports with it; tagged ports on other (untagged) bridges are
    deleted one by one.
    """
    bridges = lab_bridges(lab_tag)
    ports = lab_ports(lab_tag)
    commands = [["--if-exists", "del-port", port] for port in ports]
    commands += [["--if-exists", "del-br", bridge] for bridge in bridges]
    vsctl(commands)
