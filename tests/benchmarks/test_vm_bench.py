"""Deploy to "ready for iperf" for one and four VMs: libvirt domains against bare QEMU processes, in the same run.

Ready means the built-in guest printed "vtopo-guest ready" on its console: its network is up and `iperf3 -s` runs.
Prints figures; asserts no times. The target is 10 s per VM under TCG.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from vtopo.host.deployer import Deployer
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

READY_LINE = "vtopo-guest ready"
GIVE_UP_SECONDS = 300


def vms_on_a_bridge(count: int, backend: str) -> Topology:
    topology = Topology(name=f"vmbench{count}", prefix="vv", vm_backend=backend)
    topology.add_node(Node(id="br", name="br", kind="bridge",
                           settings={"forward_delay": 0.0, "host_addresses": ["10.77.0.1/24"]}))
    for i in range(count):
        topology.add_node(Node(id=f"vm{i}", name=f"vm{i}", kind="vm"))
        topology.add_link(Link(id=f"l{i}", a=Endpoint(f"vm{i}", "nic0", Interface(addresses=[f"10.77.0.{i + 2}/24"])),
                               b=Endpoint("br", f"p{i + 1}")))
    return topology


def deploy_to_ready(deployer: Deployer, topology: Topology) -> tuple[float, float]:
    """(seconds until deploy returned, seconds until every guest was ready), both from the start of deploy."""
    started = time.perf_counter()
    report = deployer.deploy(topology)
    deployed = time.perf_counter() - started
    logs = [Path(f"/run/vtopo/{report.prefix}/{node.name}/console.log") for node in topology.nodes.values()
            if node.kind == "vm"]
    while waiting := [log for log in logs if not (log.exists() and READY_LINE in log.read_text(errors="replace"))]:
        assert time.perf_counter() - started < GIVE_UP_SECONDS, "not booted: " + ", ".join(
            f"{log.parent.name} ({log.read_text(errors='replace')[-300:] if log.exists() else 'no console log'})"
            for log in waiting)
        time.sleep(0.05)
    return deployed, time.perf_counter() - started


@pytest.mark.parametrize("count", [1, 4])
def test_vm_deploy_to_ready_libvirt_against_qemu(count, libvirtd):
    deployer = Deployer()
    figures = {}
    for backend in ("qemu", "libvirt"):
        topology = vms_on_a_bridge(count, backend)
        try:
            figures[backend] = deploy_to_ready(deployer, topology)
        finally:
            deployer.destroy(topology.name)
        deployed, ready = figures[backend]
        print(f"\n{count} VM(s) under TCG, {backend:<8} deploy returned {deployed:.2f} s, all ready for iperf3 "
              f"{ready:.2f} s   (target <= 10 s)", flush=True)
    print(f"  libvirt/qemu {figures['libvirt'][1] / figures['qemu'][1]:.2f}")
