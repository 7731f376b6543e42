"""VM labs deploy for real under QEMU (TCG here): tap on a bridge, macvtap with the seed's fd=3 recipe, vhost."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.labs.test_measure_cli import interrupt_a_long_iperf, vtopo

pytestmark = pytest.mark.privileged

GUEST_DIR = Path(os.environ.get("VTOPO_GUEST_DIR", "/var/cache/vtopo/guest"))
BOOT_SECONDS = 60


@pytest.fixture(autouse=True)
def guest_image() -> None:
    if not (GUEST_DIR / "vmlinuz").exists() or not (GUEST_DIR / "initrd.img").exists():
        pytest.fail(f"no guest image in {GUEST_DIR}: run `make guest`", pytrace=False)


def wait_ready(prefix: str, vm: str) -> str:
    console = Path(f"/run/vtopo/{prefix}/{vm}/console.log")
    deadline = time.monotonic() + BOOT_SECONDS
    while time.monotonic() < deadline:
        text = console.read_text(errors="replace") if console.exists() else ""
        if "vtopo-guest ready" in text:
            return text
        time.sleep(0.25)
    raise AssertionError(f"{vm} did not boot within {BOOT_SECONDS} s:\n{console.read_text(errors='replace')[-2000:]}")


def qemu_of(prefix: str, vm: str) -> int:
    return int(Path(f"/run/vtopo/{prefix}/{vm}/qemu.pid").read_text().split()[0])


def vtopo_iperf(lab: str, source: str, destination: str) -> float:
    """`vtopo iperf` with a VM at one end: the client runs on the other end, against the guest's iperf3 -s."""
    done = vtopo("iperf", lab, source, destination, "-t", "2", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "ok" and len(result["intervals"]) >= 2, result
    return float(result["forward"]["received"]["bits_per_second"])


def test_vm_on_tap_and_vm_on_macvtap(deployed):
    lab = deployed("vm-tap-vs-macvtap")
    prefix = lab.lab.context.names.prefix
    for vm in ("vm1", "vm2"):
        wait_ready(prefix, vm)
    qemu = qemu_of(prefix, "vm2")
    macvtap_index = int(Path(f"/sys/class/net/{prefix}-vm2-nic0/ifindex").read_text())
    assert os.readlink(f"/proc/{qemu}/fd/3") == f"/dev/tap{macvtap_index}", "the seed's 3<>/dev/tapN recipe"
    guest_mac = Path(f"/sys/class/net/{prefix}-vm2-nic0/address").read_text().strip()
    assert f"mac={guest_mac}" in Path(f"/proc/{qemu}/cmdline").read_text().replace("\0", " "), \
        "the guest's MAC must equal the macvtap's"
    assert lab.pings("host", "vm1") and lab.pings("host", "vm2")
    name = lab.lab.context.topology.name
    typed = subprocess.run([sys.executable, "-m", "vtopo", "console", name, "vm1"], input="echo vtopo-$((6*7))\n",
                           capture_output=True, text=True, timeout=30)
    assert typed.returncode == 0 and "vtopo-42" in typed.stdout, "a shell answers on the VM's serial console"
    assert "vtopo-guest ready" in Path(f"/run/vtopo/{prefix}/vm1/console.log").read_text(errors="replace")
    targets = {endpoint.name: endpoint for endpoint, _addresses in lab.lab.measurable()}
    assert targets["vm1"].can_run and targets["vm1"].servers["iperf3"] == 5201, "in the guest, against its iperf3 -s"
    assert vtopo_iperf(name, "host", "vm1") > 50e6
    assert vtopo_iperf(name, "vm2", "host") > 50e6


def test_vhost_pair_runs_both_vms(deployed):
    lab = deployed("vhost-on-off")
    prefix = lab.lab.context.names.prefix
    for vm in ("von", "voff"):
        wait_ready(prefix, vm)
        cmdline = Path(f"/proc/{qemu_of(prefix, vm)}/cmdline").read_text().replace("\0", " ")
        expected = "vhost=on" if vm == "von" and Path("/dev/vhost-net").exists() else "vhost=off"
        assert expected in cmdline
    inside = lab.run("von", "ip", "-o", "-4", "addr", "show", "eth0")
    assert inside.returncode == 0 and "10.0.20.2/24" in inside.stdout, "commands run in the guest via its console"
    assert lab.run("von", "false").returncode == 1, "with the guest command's exit status"
    name = lab.lab.context.topology.name
    assert vtopo_iperf(name, "host", "von") > 50e6, "host -> guest, as seed 002 measured"
    assert vtopo_iperf(name, "von", "voff") > 20e6, "VM -> VM, as seed 003 measured"
    rr = vtopo("rr", name, "host", "von", "-t", "2")
    assert rr.returncode == 0 and "transactions/s" in rr.stdout, "against the guest's echo server, as netperf TCP_RR"
    ping = vtopo("ping", name, "voff", "von", "-c", "3")
    assert ping.returncode == 0 and "3 received" in ping.stdout, ping.stdout + ping.stderr

    interrupt_a_long_iperf(name, "von", "voff")
    assert "iperf3 -c" not in lab.run("von", "ps").stdout, "Ctrl-C reached the client inside the guest"


def test_a_vm_routes_between_two_bridges(deployed):
    """Seed 003's Linux router gateway: containers on two bridges reach each other only through the VM."""
    lab = deployed("vm-router")
    wait_ready(lab.lab.context.names.prefix, "vmr")
    assert lab.run("vmr", "cat", "/proc/sys/net/ipv4/ip_forward").stdout.strip() == "1"
    assert "ttl=63" in lab.run("c1", "ping", "-c", "1", "-W", "2", "10.1.2.10").stdout, "one routed hop: the VM"
    assert lab.lab.target_address("c1", "c2") == ("10.1.2.10", "routed")
    assert vtopo_iperf("vm-router", "c1", "c2") > 20e6
