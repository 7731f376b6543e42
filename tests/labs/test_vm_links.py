"""Two VMs wired NIC to NIC and a container wired to a VM (topologies/vm-to-vm.vtopo), deployed by a member through a
real agent and shared by the module's tests (VMs boot slowly under TCG): each link's ends meet on its own bridge, the
guests ping each other and the container pings its VM, a link goes down and up, and destroy and `vtopo cleanup`
leave nothing behind."""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_process import Agent
from members import members
from residue import snapshot
from security.members import prefix_of
from tests.labs.test_vms import GUEST_DIR, domains_listed, wait_ready
from vtopo import ops as o
from vtopo.host.applier import Applier
from vtopo.host.cleanup import cleanup
from vtopo.host.deployer import Deployer
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.model import io
from vtopo.model.rules import lab_tag
from vtopo.model.topology import Topology
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

LAB = "vm-to-vm"
VM2_ADDRESS = "10.0.40.2"
VM1_FROM_C1 = "10.0.41.1"


@dataclass
class MemberLab:
    agent: Agent
    user: str
    prefix: str

    def vtopo(self, *args: str) -> tuple[int, str]:
        done = self.agent.vtopo(self.user, *args)
        return done.returncode, done.stdout + done.stderr

    def vm1_pings_vm2(self) -> bool:
        return self.vtopo("exec", LAB, "vm1", "--", "ping", "-c", "2", "-W", "2", VM2_ADDRESS)[0] == 0


@contextmanager
def deployed_as_member(topology: Topology, vms: tuple[str, ...]) -> Iterator[MemberLab]:
    """The lab deployed by a member through a real agent, its VMs booted; destroyed after, leaving nothing behind."""
    directory = Path(tempfile.mkdtemp(prefix="vtopo-vm-lab-"))
    directory.chmod(0o755)
    path = directory / f"{topology.name}.vtopo"
    io.save(topology, path)
    path.chmod(0o644)
    before = snapshot()
    try:
        with members() as users, Agent.running() as agent:
            user = users["a"].pw_name
            deployed = agent.vtopo(user, "deploy", str(path))
            assert deployed.returncode == 0, deployed.stdout + deployed.stderr
            try:
                running = MemberLab(agent, user, prefix_of(topology.name))
                for vm in vms:
                    wait_ready(running.prefix, vm)
                yield running
            finally:
                agent.vtopo(user, "destroy", topology.name)
    finally:
        shutil.rmtree(directory)
    assert snapshot() - before == {}, "destroy left something behind"


@pytest.fixture(scope="module", params=["libvirt", "qemu"])
def lab(request: pytest.FixtureRequest) -> Iterator[MemberLab]:
    """The lab on each VM backend: libvirt domains (libvirtd started as vtopo starts it) and bare QEMU."""
    if not (GUEST_DIR / "vmlinuz").exists():
        pytest.fail(f"no guest image in {GUEST_DIR}: run `make guest`", pytrace=False)
    if request.param == "libvirt":
        request.getfixturevalue("libvirtd")
    topology = open_lab(TOPOLOGIES / f"{LAB}.vtopo").topology
    topology.vm_backend = request.param
    with deployed_as_member(topology, ("vm1", "vm2")) as running:
        assert bool(domains_listed(running.prefix)) == (request.param == "libvirt")
        yield running


def test_two_vms_linked_directly_ping_each_other_over_their_links_own_bridge(lab: MemberLab) -> None:
    taps = {f"{lab.prefix}-{vm}-nic0" for vm in ("vm1", "vm2")}
    bridge = Path(f"/sys/class/net/{lab.prefix}-vm1-nic0/master").resolve().name
    assert bridge.startswith(f"{lab.prefix}--"), "the link's own bridge, named as no node's device is"
    assert {port.name for port in Path(f"/sys/class/net/{bridge}/brif").iterdir()} == taps, "its only ports"
    assert Path(f"/sys/class/net/{bridge}/ifalias").read_text().strip() == lab_tag(lab.prefix)
    assert lab.vm1_pings_vm2()
    to_container = Path(f"/sys/class/net/{lab.prefix}-vm1-nic1/master").resolve().name
    assert {port.name for port in Path(f"/sys/class/net/{to_container}/brif").iterdir()} == {
        f"{lab.prefix}-vm1-nic1", f"{lab.prefix}-_{to_container.removeprefix(f'{lab.prefix}--')}"}, \
        "vm1's tap and the host end of c1's veth"
    pinged = lab.vtopo("exec", LAB, "c1", "--", "ping", "-c", "2", "-W", "2", VM1_FROM_C1)
    assert pinged[0] == 0, pinged[1]
    checked = lab.vtopo("check", LAB)
    assert checked[0] == 0, checked[1]


def test_a_link_between_two_vms_goes_down_and_up(lab: MemberLab) -> None:
    down = lab.vtopo("link", LAB, "vm1:nic0", "vm2:nic0", "down")
    assert down[0] == 0 and "vm1:nic0 and vm2:nic0 are set down (a bridged tap has no peer" in down[1], down[1]
    try:
        assert not lab.vm1_pings_vm2(), "no frame crosses a link that is down"
    finally:
        up = lab.vtopo("link", LAB, "vm1:nic0", "vm2:nic0", "up")
    assert up[0] == 0, up[1]
    assert lab.vm1_pings_vm2()


def test_cleanup_removes_a_vm_links_bridge_and_taps_without_a_journal() -> None:
    """The link's ops as a deploy applies them, the process holding them gone with its journal: `vtopo cleanup`
    finds the bridge and the taps by the lab's tag."""
    before = snapshot()
    topology = open_lab(TOPOLOGIES / f"{LAB}.vtopo").topology
    topology.prefix = "vzvml"  # not the member's lab's, deployed beside it
    plan = compile_plan(resolve(topology, registry()))
    link_ops = [step.op for step in plan.steps if step.op.owner == "link vm1:nic0-vm2:nic0"]
    assert any(isinstance(op, o.CreateLinkBridge) for op in link_ops)
    applier = Applier(plan.prefix)
    for op in link_ops:
        applier.apply(op)
    applier.close()
    assert Path(f"/sys/class/net/{plan.prefix}-vm1-nic0/master").exists()
    report = cleanup(Deployer(), lambda progress: None)
    assert not report.errors, report.errors
    assert snapshot() - before == {}
