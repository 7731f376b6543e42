"""A VM as the router on a stick (topologies/router-on-a-stick.vtopo with r1 a VM), deployed by a member through a real
agent and shared by the module's tests (VMs boot slowly under TCG): the built-in guest makes eth0.10 and eth0.20 on its
NIC, which is on the OVS switch's trunk, reaches the containers of both VLANs and routes between them, and destroy
leaves nothing behind."""
from __future__ import annotations

import gzip
import subprocess
from collections.abc import Iterator

import pytest

from tests.labs.test_vm_links import MemberLab, deployed_as_member
from tests.labs.test_vms import GUEST_DIR
from vtopo.lab import open_lab
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

LAB = "router-on-a-stick"
IN_VLAN = {10: "10.0.10.11", 20: "10.0.20.12"}  # h1 and h2, access ports of VLANs 10 and 20


@pytest.fixture(scope="module")
def lab() -> Iterator[MemberLab]:
    if not (GUEST_DIR / "vmlinuz").exists():
        pytest.fail(f"no guest image in {GUEST_DIR}: run `make guest`", pytrace=False)
    if b"vtopo.vlan=" not in gzip.decompress((GUEST_DIR / "initrd.img").read_bytes()):
        pytest.fail(f"the guest image in {GUEST_DIR} predates subinterfaces (its /init reads no vtopo.vlan): run "
                    "`make guest`", pytrace=False)
    topology = open_lab(TOPOLOGIES / f"{LAB}.vtopo").topology
    topology.vm_backend = "qemu"
    router = topology.node_named("r1")
    assert router is not None
    router.kind, router.settings = "vm", {"forwarding": True}
    topology.links["link-trunk"].a.port = "nic0"
    with deployed_as_member(topology, ("r1",)) as running:
        yield running


def ovs_vsctl(*args: str) -> str:
    return subprocess.run(["ovs-vsctl", *args], capture_output=True, text=True, check=True).stdout.strip()


def test_the_guest_makes_a_vlan_device_per_subinterface_on_a_trunk_port(lab: MemberLab) -> None:
    tap, switch = f"{lab.prefix}-r1-nic0", f"{lab.prefix}-s1"
    assert ovs_vsctl("port-to-br", tap) == switch
    assert ovs_vsctl("get", "port", tap, "trunks") == "[10, 20]"
    assert not [port for port in ovs_vsctl("list-ports", switch).split() if "." in port], \
        "the guest's kernel tags: no OVS internal port stands for a subinterface"
    vlans = lab.vtopo("exec", LAB, "r1", "--", "cat", "/proc/net/vlan/config")  # 8021q's table of its devices
    assert vlans[0] == 0, vlans[1]
    assert [line.replace(" ", "") for line in vlans[1].splitlines() if "|" in line][1:] == [
        "eth0.10|10|eth0", "eth0.20|20|eth0"], vlans[1]
    for vlan in IN_VLAN:
        shown = lab.vtopo("exec", LAB, "r1", "--", "ip", "address", "show", "dev", f"eth0.{vlan}")
        assert shown[0] == 0 and f"inet 10.0.{vlan}.1/24" in shown[1] and "UP" in shown[1], shown[1]


def test_the_vm_reaches_a_container_in_each_vlan(lab: MemberLab) -> None:
    for address in IN_VLAN.values():
        pinged = lab.vtopo("exec", LAB, "r1", "--", "ping", "-c", "2", "-W", "2", address)
        assert pinged[0] == 0, pinged[1]


def test_the_vm_routes_between_the_vlans_as_the_lessons_checks_ask(lab: MemberLab) -> None:
    checked = lab.vtopo("check", LAB)
    assert checked[0] == 0, checked[1]
