"""What this host offers, probed once before compiling: OVS datapath, vhost-net, DPDK, KVM, FRR or Quagga."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from vtopo.compile.context import HostFacts

KVM_PROBE_SECONDS = 5.0
QUAGGA_DIRS = ("/usr/lib/quagga", "/usr/sbin")


def routing_suite() -> tuple[str, str, str]:
    """(suite, daemon directory, daemon user): FRR, or Quagga when only Quagga is installed."""
    for directory in QUAGGA_DIRS:
        if not Path("/usr/lib/frr/zebra").exists() and Path(directory, "zebra").exists():
            return "quagga", directory, "quagga"
    return "frr", "/usr/lib/frr", "frr"


def netem_available() -> bool:
    if Path("/sys/module/sch_netem").exists():
        return True
    try:
        import gzip

        with gzip.open("/proc/config.gz", "rt") as config:
            return any(line.startswith("CONFIG_NET_SCH_NETEM=") for line in config)
    except OSError:
        return subprocess.run(["modprobe", "-n", "sch_netem"], capture_output=True).returncode == 0


def kvm_usable() -> bool:
    """/dev/kvm can exist and still hang a guest, so boot nothing and see whether QEMU can start KVM at all."""
    if not os.path.exists("/dev/kvm") or shutil.which("qemu-system-x86_64") is None:
        return False
    try:
        result = subprocess.run(["qemu-system-x86_64", "-machine", "q35,accel=kvm", "-nodefaults", "-display", "none",
                                 "-S", "-no-user-config", "-qmp", "stdio"], input='{"execute":"qmp_capabilities"}\n'
                                '{"execute":"quit"}\n', capture_output=True, text=True, timeout=KVM_PROBE_SECONDS)
    except subprocess.TimeoutExpired:
        return False
    return result.returncode == 0


def probe(needs_accel: bool = False) -> HostFacts:
    from vtopo.host.ovs import OvsService

    suite, daemons, user = routing_suite()
    return HostFacts(
        ovs_datapath=OvsService().default_datapath(),
        vhost_net=os.path.exists("/dev/vhost-net"),
        ovs_dpdk=False,
        netem=netem_available(),
        accel="kvm" if needs_accel and kvm_usable() else "tcg",
        frr_dir=daemons,
        routing_suite=suite,
        frr_user=user,
    )
