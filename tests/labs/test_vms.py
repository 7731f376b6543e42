"""VM labs deploy for real under TCG, as libvirt domains and as bare QEMU processes: tap on a bridge, macvtap
(QEMU holds its /dev/tapN), vhost as it really is, a VM as a router."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from residue import snapshot
from tests.labs.test_measure_cli import interrupt_a_long_iperf, vtopo
from vtopo.host.libvirtd import answers
from vtopo.host.state import StateStore
from vtopo.ops import DOMAIN_XMLNS
from vtopo.lab import open_lab
from vtopo.resources import TOPOLOGIES

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


@pytest.fixture(params=["libvirt", "qemu"])
def backend(request) -> str:  # type: ignore[no-untyped-def]
    """Each VM test runs on both backends: libvirt domains (libvirtd started as vtopo starts it) and bare QEMU."""
    if request.param == "libvirt":
        request.getfixturevalue("libvirtd")
    return str(request.param)


def deploy_on(deployed, lab: str, backend: str):  # type: ignore[no-untyped-def]
    topology = open_lab(TOPOLOGIES / f"{lab}.vtopo").topology
    topology.vm_backend = backend
    return deployed(topology)


def qemu_of(lab, vm: str) -> int:  # type: ignore[no-untyped-def]
    state = lab.lab.vhost_state(vm)
    assert state is not None and state.pid is not None, f"{vm} has no QEMU process"
    return state.pid


def domains_listed(prefix: str) -> dict[str, str]:
    """`virsh list` as a user sees it, with each domain's vtopo metadata."""
    if not answers():
        return {}  # no libvirtd, no domain
    names = subprocess.run(["virsh", "-c", "qemu:///system", "list", "--name"], capture_output=True, text=True,
                           check=True).stdout.split()
    return {name: subprocess.run(["virsh", "-c", "qemu:///system", "metadata", name, DOMAIN_XMLNS],
                                 capture_output=True, text=True, check=True).stdout
            for name in names if name.startswith(f"{prefix}-")}


def assert_backend(lab, backend: str, vms: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    prefix = lab.lab.context.names.prefix
    listed = domains_listed(prefix)
    if backend == "libvirt":
        assert set(listed) == {f"{prefix}-{vm}" for vm in vms}, "virsh list shows the lab's VMs"
        for vm in vms:
            node_id = lab.lab.node(vm).node.id
            assert f'prefix="{prefix}"' in listed[f"{prefix}-{vm}"] and f'node="{node_id}"' in listed[f"{prefix}-{vm}"]
    else:
        assert not listed, "bare QEMU: no domain"
    for vm in vms:
        assert lab.lab.vhost_state(vm).backend == backend


def vtopo_iperf(lab: str, source: str, destination: str) -> float:
    """`vtopo iperf` with a VM at one end: the client runs on the other end, against the guest's iperf3 -s."""
    done = vtopo("iperf", lab, source, destination, "-t", "2", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "ok" and len(result["intervals"]) >= 2, result
    return float(result["forward"]["received"]["bits_per_second"])


def test_vm_on_tap_and_vm_on_macvtap(backend, deployed):
    lab = deploy_on(deployed, "vm-tap-vs-macvtap", backend)
    prefix = lab.lab.context.names.prefix
    for vm in ("vm1", "vm2"):
        wait_ready(prefix, vm)
    assert_backend(lab, backend, ("vm1", "vm2"))
    qemu = qemu_of(lab, "vm2")
    macvtap_index = int(Path(f"/sys/class/net/{prefix}-vm2-nic0/ifindex").read_text())
    descriptors = {os.readlink(fd) for fd in Path(f"/proc/{qemu}/fd").iterdir()}
    assert f"/dev/tap{macvtap_index}" in descriptors, "QEMU holds the macvtap's /dev/tapN (the seed's recipe)"
    if backend == "qemu":
        assert os.readlink(f"/proc/{qemu}/fd/3") == f"/dev/tap{macvtap_index}", "the seed's 3<>/dev/tapN"
    macvtap_mac = Path(f"/sys/class/net/{prefix}-vm2-nic0/address").read_text().strip()
    assert lab.run("vm2", "cat", "/sys/class/net/eth0/address").stdout.strip() == macvtap_mac, \
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


def test_vhost_pair_runs_both_vms(backend, deployed):
    lab = deploy_on(deployed, "vhost-on-off", backend)
    prefix = lab.lab.context.names.prefix
    kernel_vhost = Path("/dev/vhost-net").exists()
    for vm in ("von", "voff"):
        wait_ready(prefix, vm)
        state = lab.lab.vhost_state(vm)
        assert state.vhost_fd == (vm == "von" and kernel_vhost), "what QEMU holds is what was asked and possible"
        if not kernel_vhost:
            assert state.summary == "off: the kernel has no vhost-net" and not state.threads
        if backend == "libvirt":
            assert state.drivers == ("vhost" if vm == "von" and kernel_vhost else "qemu",)
    assert_backend(lab, backend, ("von", "voff"))
    status = vtopo("status", "-v", "vhost-on-off")
    assert status.returncode == 0 and f"backend: {backend}" in status.stdout and "vhost-net: " in status.stdout
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


def test_a_vm_routes_between_two_bridges(backend, deployed):
    """Seed 003's Linux router gateway: containers on two bridges reach each other only through the VM."""
    lab = deploy_on(deployed, "vm-router", backend)
    wait_ready(lab.lab.context.names.prefix, "vmr")
    assert_backend(lab, backend, ("vmr",))
    assert lab.run("vmr", "cat", "/proc/sys/net/ipv4/ip_forward").stdout.strip() == "1"
    # both backends start QEMU unprivileged and in the foreground: its whole sandbox applies
    qemu = qemu_of(lab, "vmr")
    status = dict(line.split(":", 1) for line in Path(f"/proc/{qemu}/status").read_text().splitlines())
    assert status["Uid"].split()[0] != "0" and status["Seccomp"].strip() == "2"
    assert int(status["CapEff"], 16) == int(status["CapPrm"], 16) == 0, "no capability left"
    sandbox = Path(f"/proc/{qemu}/cmdline").read_text().split("\0")
    assert any("spawn=deny" in arg and "elevateprivileges=deny" in arg for arg in sandbox), sandbox
    assert "ttl=63" in lab.run("c1", "ping", "-c", "1", "-W", "2", "10.1.2.10").stdout, "one routed hop: the VM"
    assert lab.lab.target_address("c1", "c2") == ("10.1.2.10", "routed")
    assert vtopo_iperf("vm-router", "c1", "c2") > 20e6


KILLED_AFTER_THE_VM_STARTS = """
import os, sys
from vtopo.ops import StartDomain, StartProcess
from vtopo.host.applier import Applier
from vtopo.host.deployer import Deployer
from vtopo.lab import open_lab
real = Applier.apply
def apply(self, op):
    real(self, op)
    if isinstance(op, (StartDomain, StartProcess)):
        os._exit(9)  # killed mid-deploy, with the VM running: no rollback, no destroy
Applier.apply = apply
topology = open_lab(sys.argv[1]).topology
topology.vm_backend = sys.argv[2]
Deployer().deploy(topology)
"""


def test_cleanup_after_a_kill_mid_deploy_removes_the_vm(backend):
    before = snapshot()
    crashed = subprocess.run([sys.executable, "-c", KILLED_AFTER_THE_VM_STARTS, str(TOPOLOGIES / "vm-router.vtopo"),
                              backend])
    assert crashed.returncode == 9
    left = snapshot() - before
    assert left.get("domains" if backend == "libvirt" else "processes"), "the crash left the VM running"
    done = vtopo("cleanup")
    assert done.returncode == 0 and "destroyed lab vm-router" in done.stdout, done.stdout + done.stderr
    assert snapshot() - before == {}, "no domain, tap or process is left"


def test_cleanup_finds_a_domain_by_its_metadata_when_the_journal_is_lost(libvirtd):
    before = snapshot()
    crashed = subprocess.run([sys.executable, "-c", KILLED_AFTER_THE_VM_STARTS, str(TOPOLOGIES / "vm-router.vtopo"),
                              "libvirt"])
    assert crashed.returncode == 9
    shutil.rmtree(StateStore().labs_dir)  # only the tags are left
    done = vtopo("cleanup")
    assert done.returncode == 0 and "libvirt domain " in done.stdout and "-vmr (lab vm-router)" in done.stdout
    assert snapshot() - before == {}


def guest_addresses(lab, vm: str) -> str:  # type: ignore[no-untyped-def]
    return lab.run(vm, "ip", "-o", "addr", "show", "dev", "lo", check=True, timeout=60).stdout


def test_a_libvirt_vm_runs_startup_commands_stops_and_boots_again_on_the_same_taps(libvirtd) -> None:
    """Under libvirt, stop destroys the (transient) domain and start creates it again on the same taps; the guest
    boots afresh, so its startup commands run again."""
    from tests.labs.conftest import Running
    from vtopo.host.deployer import Deployer, Progress
    from vtopo.lab_terms import Trust
    from vtopo.lab_operations import operate_node

    before = snapshot()
    topology = open_lab(TOPOLOGIES / "vm-tap-vs-macvtap.vtopo").topology
    topology.vm_backend = "libvirt"
    topology.node_named("vm1").startup_commands = ["ip addr add 10.99.0.1/32 dev lo", "echo started on $(hostname)"]
    deployer, log = Deployer(), []
    report = deployer.deploy(topology, log.append, consent=Trust(startup_commands=frozenset({"vm1"})))
    try:
        lab = Running(deployer, topology)
        prefix = report.prefix
        output = [progress.message for progress in log if progress.stage == "output"]
        assert output[0] == "$ ip addr add 10.99.0.1/32 dev lo" and output[1].startswith("$ echo started on"), output
        assert "10.99.0.1/32" in guest_addresses(lab, "vm1")
        tap = int(Path(f"/sys/class/net/{prefix}-vm1-nic0/ifindex").read_text())
        first = qemu_of(lab, "vm1")

        operate_node(topology.name, "vm1", "stop")
        assert f"{prefix}-vm1" not in domains_listed(prefix) and f"{prefix}-vm2" in domains_listed(prefix)
        assert not Path(f"/proc/{first}").exists() or "Z" in Path(f"/proc/{first}/stat").read_text().split(")")[1][:3]
        assert not lab.pings("host", "vm1", count=1)

        operate_node(topology.name, "vm1", "start")
        assert f"{prefix}-vm1" in domains_listed(prefix)
        wait_ready(prefix, "vm1")
        assert qemu_of(lab, "vm1") != first
        assert int(Path(f"/sys/class/net/{prefix}-vm1-nic0/ifindex").read_text()) == tap, "the same tap"
        assert "10.99.0.1/32" in guest_addresses(lab, "vm1"), "the startup commands ran again on the fresh boot"
        deadline = time.monotonic() + 30
        while not lab.pings("host", "vm1", count=1) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert lab.pings("host", "vm1", count=1)
    finally:
        deployer.destroy(topology.name)
    assert snapshot() - before == {}
