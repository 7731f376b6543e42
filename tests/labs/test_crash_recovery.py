"""kill -9 at every phase of a deploy (the KVM probe, the Open vSwitch start, any op of a lab with containers,
routers, OVS and a VM): `vtopo cleanup` then leaves the host exactly as it was."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crashes import deploy_killed_at_call
from residue import snapshot, this_machines
from vtopo import ops as o
from vtopo.lab_terms import HostFacts
from vtopo.host import facts as host_facts
from vtopo.host.applier import Applier
from vtopo.host.cleanup import cleanup
from vtopo.host.deployer import OVS_BATCHED, Deployer
from vtopo.host.netns import netns_path
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.model import io
from vtopo.model.topology import Endpoint, Interface, Link, Node
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

MIXED = Path(__file__).parents[1] / "data" / "mixed.vtopo"
GUEST_DIR = os.environ.get("VTOPO_GUEST_DIR", HostFacts.guest_dir)

KILLED_IN_OVS_START = """
import os, sys
from vtopo.host import ovs
from vtopo.host.deployer import OVS_BATCHED, Deployer
from vtopo.lab import open_lab
real_run = ovs._run
def run(argv, **options):
    output = real_run(argv, **options)
    if argv[-1] == "start":
        os._exit(9)  # the daemons run, nothing after the start was recorded
    return output
ovs._run = run
Deployer().deploy(open_lab(sys.argv[1]).topology)
"""


def proc_files(name: str) -> list[str]:
    """/proc/PID/<name> of every process, read as text; processes that end meanwhile are skipped."""
    texts = []
    for path in Path("/proc").glob(f"[0-9]*/{name}"):
        try:
            texts.append(path.read_bytes().decode(errors="replace"))
        except OSError:
            continue
    return texts


def ovs_daemons() -> set[str]:
    """This machine's Open vSwitch daemons (not those of scripts/fresh-machine.sh's machine, which may run beside)."""
    return this_machines({"ovsdb-server", "ovs-vswitchd"})


def recovered(before: object) -> list[str]:
    report = cleanup(Deployer(), lambda progress: None)
    assert not report.errors, report.errors
    assert snapshot() - before == {}
    return report.strays


def test_kill_during_the_kvm_probe_leaves_no_qemu():
    if not (os.path.exists("/dev/kvm") and Path(GUEST_DIR, "vmlinuz").exists()):
        pytest.skip("no /dev/kvm or no guest kernel: vtopo does not probe KVM here")
    before = snapshot()
    prober = subprocess.Popen([sys.executable, "-c", "import sys; from vtopo.host.facts import kvm_usable; "
                               "kvm_usable(sys.argv[1])", GUEST_DIR])
    name = f"{host_facts.PROBE_NAME}{prober.pid}"
    deadline = time.monotonic() + 10
    while not any(name in cmdline for cmdline in proc_files("cmdline")):
        if time.monotonic() > deadline or prober.poll() is not None:
            prober.kill()
            pytest.skip("the KVM probe finished before it could be killed (KVM works here)")
        time.sleep(0.02)
    os.kill(prober.pid, signal.SIGKILL)
    prober.wait()
    assert host_facts.orphaned_probes(), "the probe outlives the vtopo that started it"
    strays = recovered(before)
    assert any("KVM probe" in stray for stray in strays)
    assert not host_facts.orphaned_probes()


def test_kill_during_the_ovs_start_and_cleanup_stops_the_daemons(ovs_stopped):
    before = snapshot()
    crashed = subprocess.run([sys.executable, "-c", KILLED_IN_OVS_START, str(MIXED)])
    assert crashed.returncode == 9 and ovs_daemons(), "killed right after ovs-ctl started a daemon"
    recovered(before)
    assert not ovs_daemons(), "vtopo started OVS for the killed deploy, so cleanup stops it"


def mixed_with_a_vm(directory: Path) -> Path:
    topology = open_lab(MIXED).topology
    topology.add_node(Node(id="vm1", name="vm1", kind="vm"))
    topology.add_link(Link(id="vm1-sw", a=Endpoint("vm1", "nic0", Interface(addresses=["10.2.0.20/24"])),
                           b=Endpoint("sw", "p3")))
    path = directory / "mixed-vm.vtopo"
    path.write_text(json.dumps(io.to_document(topology)))
    return path


def host_calls(path: Path) -> tuple[int, int]:
    """How many apply calls a deploy of the lab makes, and which one starts the VM. Open vSwitch changes wait in
    one batch until a later step depends on one of them, or the plan ends, as the deployer does."""
    calls, vm_call, pending = 0, 0, set()
    for step in compile_plan(resolve(open_lab(path).topology, registry())).steps:
        if isinstance(step.op, OVS_BATCHED):
            pending.add(step.index)
            continue
        if pending.intersection(step.deps):
            calls, pending = calls + 1, set()
        calls += 1
        if isinstance(step.op, o.StartProcess) and step.op.owner == "node vm1":
            vm_call = calls
    return calls + (1 if pending else 0), vm_call


def test_kill_at_random_ops_of_a_lab_with_containers_routers_ovs_and_a_vm(tmp_path):
    lab = mixed_with_a_vm(tmp_path)
    calls, vm_call = host_calls(lab)
    assert vm_call, "the VM is started by the plan"
    before = snapshot()
    for call in sorted({1, vm_call + 1, *random.Random(11).sample(range(2, calls), 3)}):
        assert deploy_killed_at_call(lab, call) == 9, f"the deploy should have been killed at call {call} of {calls}"
        recovered(before)


def test_kill_after_the_dhcp_server_relay_and_clients_started_and_cleanup_ends_them():
    """The dhcp-relay lab's deploy dies once every dnsmasq and udhcpc runs: cleanup ends them and removes their
    directories, leases and scripts with the rest of the lab."""
    lab = TOPOLOGIES / "dhcp-relay.vtopo"
    steps = compile_plan(resolve(open_lab(lab).topology, registry())).steps
    last_dhcp = max(i for i, step in enumerate(steps) if isinstance(step.op, o.StartProcess)
                    and step.op.argv[0] in ("dnsmasq", "busybox"))
    before = snapshot()
    assert deploy_killed_at_call(lab, last_dhcp + 2, made=True) == 9  # one call more for the lab's user namespace
    assert sorted(name.partition("(")[0] for name in this_machines({"dnsmasq", "busybox"})) == [
        "busybox", "busybox", "dnsmasq", "dnsmasq"]
    recovered(before)


def test_cleanup_removes_an_untagged_host_end_at_once_though_something_still_holds_its_namespace():
    """A deploy killed after making a container's veth and before configuring it leaves the host end without the
    lab's tag; only the namespace is marked. Cleanup must not wait for the namespace to die, which happens when
    nothing holds it any more (here: this test's descriptor of it)."""
    before = snapshot()
    applier = Applier("vzk9q")
    applier.apply(o.CreateNamespace(owner="node c1", name="vzk9q-c1"))
    applier.apply(o.CreateVeth(owner="link c1:eth0-br1:p1", name="vzk9q-br1-p1", netns=None, peer="eth0",
                               peer_netns="vzk9q-c1"))
    applier.close()
    holder = os.open(netns_path("vzk9q-c1"), os.O_RDONLY)
    try:
        strays = recovered(before)
    finally:
        os.close(holder)
    assert strays == ["namespace vzk9q-c1"]
