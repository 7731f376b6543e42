"""802.1Q subinterfaces and L3 switches, offline: the lab file keeps subinterfaces, each is a kernel VLAN device
where the host has 8021q and a tagged OVS internal port where it has not (each explained as a student would type it,
with why), the one line where neither can be made, FRR's configuration and the broadcast domains with them, and what
`vtopo save` reads; an L3 switch's interface per VLAN (SVI) routes in a namespace of the lab's own.
(tests/golden/invalid/subinterface-*.vtopo and trunk-to-node-*.vtopo hold the design mistakes;
tests/agent/test_subinterfaces_as_member.py deploys them.)"""
from __future__ import annotations

import json

import pytest

from vtopo.compile.broadcast_domains import broadcast_domains_of
from vtopo import ops as o
from vtopo.lab_terms import HostFacts, LabOwner, Trust
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.model import io
from vtopo.model.problems import LabError
from vtopo.model.topology import Subinterface, Topology
from vtopo.resources import TOPOLOGIES
from vtopo.saving import apply_state

ROUTER_ON_A_STICK = TOPOLOGIES / "router-on-a-stick.vtopo"
L3_SWITCH = TOPOLOGIES / "l3-switch.vtopo"
KERNEL_VLANS = HostFacts(probed=True, vlan_devices=True)
NO_KERNEL_VLANS = HostFacts(probed=True, vlan_devices=False)


def lab() -> Topology:
    return open_lab(ROUTER_ON_A_STICK).topology


def script(topology: Topology, facts: HostFacts) -> list[str]:
    plan = compile_plan(resolve(topology, registry(), facts))
    return plan.explain().replace(f"{plan.prefix}-", "").splitlines()


def test_the_lab_file_keeps_each_subinterface_with_its_vlan_and_addresses():
    text = io.dumps(lab())
    trunk = next(link for link in json.loads(text)["links"] if link["b"]["node"] == "s1" and link["b"]["port"] == "p4")
    assert trunk["a"]["interface"] == {"subinterfaces": [
        {"vlan": 10, "addresses": ["10.0.10.1/24", "2001:db8:10::1/64"]},
        {"vlan": 20, "addresses": ["10.0.20.1/24", "2001:db8:20::1/64"]}]}
    assert io.dumps(io.loads(text)) == text


def test_a_subinterface_vlan_outside_1_to_4094_is_named_where_it_is():
    document = json.loads(io.dumps(lab()))
    trunk = next(link for link in document["links"] if link["b"]["port"] == "p4")
    trunk["a"]["interface"]["subinterfaces"][1]["vlan"] = 4095
    with pytest.raises(LabError) as refused:
        io.loads(json.dumps(document))
    assert [str(p) for p in refused.value.problems] == [
        "error: link r1:eth0 at $.links[3].a.interface.subinterfaces[1].vlan: vlan must be between 1 and 4,094, not "
        "4,095"]


def test_where_the_kernel_has_8021q_a_subinterface_is_a_vlan_device():
    lines = script(lab(), KERNEL_VLANS)
    at = lines.index("ip -n r1 link add link eth0 name eth0.10 type vlan id 10")
    assert lines[at - 1].startswith("# [") and "create subinterface eth0.10 of eth0 in VLAN 10: a kernel 802.1Q VLAN " \
        "device, as this kernel has 8021q" in lines[at - 1]
    assert "ip -n r1 link add link eth0 name eth0.20 type vlan id 20" in lines
    assert "ip -n r1 addr add 10.0.10.1/24 dev eth0.10" in lines
    assert "ip -n r1 addr add 2001:db8:20::1/64 dev eth0.20 nodad" in lines
    assert not [line for line in lines if "p4.10" in line]


def test_without_8021q_ovs_makes_it_a_tagged_internal_port_moved_into_the_node():
    lines = script(lab(), NO_KERNEL_VLANS)
    at = next(i for i, line in enumerate(lines) if line.startswith("ovs-vsctl add-port s1 s1-p4.10 "))
    assert "make subinterface eth0.10 in VLAN 10 as s1-p4.10, a tagged internal port of OVS switch s1: this kernel " \
        "has no 802.1Q VLAN devices (8021q)" in lines[at - 1]
    assert lines[at].split(" -- ")[0] == "ovs-vsctl add-port s1 s1-p4.10 vlan_mode=access tag=10"
    assert "type=internal" in lines[at]
    assert "ip link set dev s1-p4.10 netns r1 name eth0.10" in lines
    assert "ip -n r1 addr add 10.0.10.1/24 dev eth0.10" in lines
    assert not [line for line in lines if "type vlan" in line]


def test_where_neither_can_make_it_validation_says_so_in_one_line():
    topology = lab()
    switch = topology.node_named("s1")
    assert switch is not None
    switch.kind, switch.settings = "bridge", {}
    problems = [str(p) for p in resolve(topology, registry(), NO_KERNEL_VLANS).problems if p.subject_id == "r1"]
    assert problems == [
        "error: node r1: r1:eth0: subinterfaces eth0.10, eth0.20 need the kernel's 802.1Q VLAN devices (8021q, "
        "CONFIG_VLAN_8021Q), which this kernel does not have, and eth0 is linked to s1, a Linux bridge, which cannot "
        "make them as tagged ports: link eth0 to an Open vSwitch switch (kind ovs), which makes them on every host"]
    assert [p for p in resolve(topology, registry(), KERNEL_VLANS).problems if p.subject_id == "r1"] == []


def vm_on_a_stick(**settings: object) -> Topology:
    """The router-on-a-stick lab with its router a VM, its NIC nic0 on the OVS trunk with both subinterfaces."""
    topology = lab()
    router = topology.node_named("r1")
    assert router is not None
    router.kind, router.settings = "vm", dict(settings)
    for link in topology.links.values():
        for end in link.ends:
            if end.node == router.id:
                end.port = "nic0"
    return topology


@pytest.mark.parametrize("backend", ["qemu", "libvirt"])
@pytest.mark.parametrize("facts", [KERNEL_VLANS, NO_KERNEL_VLANS], ids=["8021q", "no-8021q"])
def test_a_vms_built_in_guest_makes_its_subinterfaces_from_its_kernel_command_line(facts, backend):
    topology = vm_on_a_stick()
    topology.vm_backend = backend
    assert [str(p) for p in resolve(topology, registry(), facts).problems if "subinterface" in str(p)] == []
    text = compile_plan(resolve(topology, registry(), facts)).explain()
    assert "vtopo.vlan=eth0.10 vtopo.ip=eth0.10:10.0.10.1/24 vtopo.ip=eth0.10:2001:db8:10::1/64 vtopo.vlan=eth0.20 " \
        "vtopo.ip=eth0.20:10.0.20.1/24" in text
    assert "type vlan" not in text and "p4.10" not in text, "the guest's kernel tags: no host VLAN device, no OVS port"


def test_a_vm_booting_its_own_image_is_refused_a_subinterface_in_one_line():
    problems = [str(p) for p in resolve(vm_on_a_stick(image="disk.qcow2"), registry(), KERNEL_VLANS).problems
                if "subinterface" in str(p)]
    assert problems == ["error: node r1: r1:nic0: r1 boots its own disk image, which configures its own interfaces; "
                        "vtopo makes 802.1Q subinterfaces in the built-in guest only. Set image to builtin, or remove "
                        "the subinterfaces and make them in the image"]


def test_frr_runs_ospf_and_ospf6_on_each_subinterface():
    context = resolve(lab(), registry(), KERNEL_VLANS).valid().lab
    router = context.node_named("r1")
    assert router is not None
    config = router.kind.configuration(router)
    for vlan in (10, 20):
        block = config.split(f"interface eth0.{vlan}\n")[1].split("!")[0]
        assert " ip ospf hello-interval 1" in block and " ipv6 ospf6 area 0.0.0.0" in block
        assert f" network 10.0.{vlan}.0/24 area 0.0.0.0" in config
    assert " ospf router-id 10.0.20.1" in config


def test_each_subinterface_is_in_its_vlans_broadcast_domain():
    domains = {d.members[0].name: sorted(m.name for m in d.members)
               for d in broadcast_domains_of(resolve(lab(), registry(), KERNEL_VLANS).valid().lab)}
    assert sorted(domains.values()) == [["h1:eth0", "h3:eth0", "r1:eth0.10"], ["h2:eth0", "r1:eth0.20"],
                                        ["r1:eth0"]]


def test_save_writes_the_addresses_read_on_each_subinterface_back():
    from vtopo.kinds.running import SavedState

    topology = lab()
    apply_state(topology, {"r1": SavedState(addresses={"eth0": [], "eth0.10": ["10.0.10.254/24"]})})
    [trunk] = [link for link in topology.links.values() if link.ends[1].port == "p4"]
    assert trunk.ends[0].interface.subinterfaces == [
        Subinterface(10, ["10.0.10.254/24"]), Subinterface(20, ["10.0.20.1/24", "2001:db8:20::1/64"])]


def test_an_l3_switch_gets_an_interface_per_vlan_in_a_namespace_of_its_own_that_forwards():
    lines = script(open_lab(L3_SWITCH).topology, NO_KERNEL_VLANS)
    assert "ip netns add s1" in lines
    assert [line.split(" -- ")[0] for line in lines if line.startswith("ovs-vsctl add-port s1 s1-vlan")] == [
        "ovs-vsctl add-port s1 s1-vlan10 vlan_mode=access tag=10", "ovs-vsctl add-port s1 s1-vlan20 vlan_mode=access tag=20"]
    assert "ip link set dev s1-vlan10 netns s1 name vlan10" in lines
    assert "ip -n s1 addr add 10.0.10.1/24 dev vlan10" in lines
    assert "ip netns exec s1 sysctl -qw net.ipv4.ip_forward=1" in lines
    assert "ip netns exec s1 sysctl -qw net.ipv6.conf.all.forwarding=1" in lines


def test_a_members_l3_switch_routes_in_a_namespace_of_the_members_user_namespace():
    plan = compile_plan(resolve(open_lab(L3_SWITCH).topology, registry(), NO_KERNEL_VLANS, Trust(owner=LabOwner.member(1234, 1234))))
    [own] = [op for op in plan.ops if isinstance(op, o.CreateNamespace) and op.owner == "node s1"]
    [lab_userns] = [op for op in plan.ops if isinstance(op, o.CreateUserNamespace)]
    assert own.userns == lab_userns.path and own.name == f"{plan.prefix}-s1"
    assert not [op for op in plan.ops if isinstance(op, (o.AddAddress, o.SetSysctl)) and op.netns is None]


def test_an_l3_switch_alone_still_routes_inside_the_lab_user_namespace():
    topology = open_lab(L3_SWITCH).topology
    for link in list(topology.links.values()):
        topology.remove_link(link.id)
    for name in ("h1", "h2", "h3"):
        node = topology.node_named(name)
        assert node is not None
        topology.remove_node(node.id)
    plan = compile_plan(resolve(topology, registry(), NO_KERNEL_VLANS, Trust(owner=LabOwner.member(1234, 1234))))
    [own] = [op for op in plan.ops if isinstance(op, o.CreateNamespace)]
    assert own.userns and [op.path for op in plan.ops if isinstance(op, o.CreateUserNamespace)] == [own.userns]


def test_vlan_interfaces_named_wrongly_get_one_line_each():
    topology = open_lab(L3_SWITCH).topology
    switch = topology.node_named("s1")
    assert switch is not None
    switch.settings["svis"] = {"vlan 5000": "10.0.50.1/24", "vlan 10": "10.0.10.1", "vlan 30": "10.0.30.1/24"}
    problems = [str(p) for p in resolve(topology, registry(), NO_KERNEL_VLANS).problems if p.subject_id == "s1"]
    assert problems == [
        "error: node s1: VLAN interface 'vlan 5000' of s1 must read vlan N, N a VLAN from 1 to 4094, e.g. vlan 10 = "
        "10.0.10.1/24",
        "error: node s1: VLAN interface vlan 10 of s1: '10.0.10.1' must be addresses with their prefix, e.g. "
        "10.0.10.1/24, 2001:db8:10::1/64",
        "warning: node s1: s1 has a VLAN interface in VLAN 30, but none of its ports carries VLAN 30: make a port an "
        "access port of it (e.g. p1 = access 30) or a trunk carrying it"]
