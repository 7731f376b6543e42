"""What this host offers, probed once before compiling: OVS datapath, vhost-net, DPDK, KVM, FRR or Quagga."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from vtopo.compile.context import HostFacts

KVM_PROBE_SECONDS = 5.0
QUAGGA_DIRS = ("/usr/lib/quagga", "/usr/sbin")


def frr_directory() -> str:
    """FRR's daemons; Quagga's when only Quagga is installed (same configuration language)."""
    for directory in ("/usr/lib/frr", *QUAGGA_DIRS):
        if Path(directory, "zebra").exists() and Path(directory, "ospfd").exists():
            return directory
    return "/usr/lib/frr"


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

    return HostFacts(
        ovs_datapath=OvsService().default_datapath(),
        vhost_net=os.path.exists("/dev/vhost-net"),
        ovs_dpdk=False,
        accel="kvm" if needs_accel and kvm_usable() else "tcg",
        frr_dir=frr_directory(),
    )
