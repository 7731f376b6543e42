"""VLANs on switches, offline: what a deploy would type for each port on OVS and on a Linux bridge, the broadcast
domains VLANs make, the one line a Linux bridge gets where the kernel filters no VLANs, and the lab file keeping them.
(tests/golden/invalid/vlan-*.vtopo hold the design mistakes; tests/agent/test_vlans_as_member.py deploys them.)"""
from __future__ import annotations

from pathlib import Path

import pytest

from vlan_labs import vlan_lab
from vtopo.cli.main import main
from vtopo.compile.broadcast_domains import broadcast_domains_of, domain_problems
from vtopo.host.facts import bridge_vlan_filtering
from vtopo.lab_terms import HostFacts
from vtopo.checks.live import vlan_apart
from vtopo.compile.vlan_rules import vlan_gap, vlan_problems
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.model import io
from vtopo.model.problems import errors_in
from vtopo.model.topology import Endpoint, Interface, Link, Node
from vtopo.resources import TOPOLOGIES

NO_FILTERING = ("VLANs on a Linux bridge need the kernel's bridge VLAN filtering (CONFIG_BRIDGE_VLAN_FILTERING, with "
                "802.1Q), which this kernel does not have: make {switch} an Open vSwitch switch (kind ovs), which "
                "does the same VLANs on every host")


def explained(kind: str, **vlans: dict[str, str]) -> list[str]:
    """The lines of the explained script of the VLAN lab on switches of `kind`, each switch's VLANs as given."""
    topology = vlan_lab(kind)
    for switch, settings in vlans.items():
        topology.update_node(switch, settings={"vlans": settings})
    plan = compile_plan(resolve(topology, registry(), HostFacts()))
    return plan.explain().replace(f"{plan.prefix}-", "").splitlines()


def test_ovs_ports_are_added_as_a_student_adds_them():
    lines = explained("ovs")
    assert "ovs-vsctl add-port s1 s1-p1 vlan_mode=access tag=10 -- set Port s1-p1 " in "\n".join(lines)
    assert [line.split(" -- ")[0] for line in lines if line.startswith("ovs-vsctl add-port")] == [
        "ovs-vsctl add-port s1 s1-p1 vlan_mode=access tag=10",
        "ovs-vsctl add-port s1 s1-p2 vlan_mode=access tag=10",
        "ovs-vsctl add-port s1 s1-p3 vlan_mode=access tag=20",
        "ovs-vsctl add-port s2 s2-p1 vlan_mode=access tag=10",
        "ovs-vsctl add-port s2 s2-p2 vlan_mode=access tag=20",
        "ovs-vsctl add-port s1 s1-p4 vlan_mode=trunk trunks=10,20",
        "ovs-vsctl add-port s2 s2-p3 vlan_mode=trunk trunks=10,20"]


def test_a_native_vlan_leaves_untagged_and_an_unlisted_port_is_in_vlan_1():
    s1 = {"p1": "access 10", "p4": "trunk 10,20 native 30"}
    s2 = {"p3": "trunk 20,10 native 30"}
    ovs = [line.split(" -- ")[0] for line in explained("ovs", s1=s1, s2=s2) if line.startswith("ovs-vsctl add-port")]
    assert "ovs-vsctl add-port s1 s1-p2 vlan_mode=access tag=1" in ovs
    assert "ovs-vsctl add-port s1 s1-p4 vlan_mode=native-untagged tag=30 trunks=10,20" in ovs
    assert "ovs-vsctl add-port s2 s2-p3 vlan_mode=native-untagged tag=30 trunks=10,20" in ovs
    bridge = explained("bridge", s1=s1, s2=s2)
    assert [line for line in bridge if "s1-p4" in line and not line.startswith("#")][-6:] == [
        "ip link add s1-p4 master s1 numtxqueues 1 numrxqueues 1 type veth peer name s2-p3 numtxqueues 1 numrxqueues 1",
        "ip link set dev s1-p4 alias vtopo:v97dj up",
        "bridge vlan del dev s1-p4 vid 1", "bridge vlan add dev s1-p4 vid 10",
        "bridge vlan add dev s1-p4 vid 20", "bridge vlan add dev s1-p4 vid 30 pvid untagged"]
    assert not [line for line in bridge if "bridge vlan" in line and "s1-p2" in line]  # in VLAN 1 by itself


def test_a_linux_bridge_filters_vlans_with_the_commands_a_student_types():
    lines = explained("bridge")
    assert "ip link add s1 type bridge stp_state 0 forward_delay 1500 ageing_time 30000 vlan_filtering 1" in lines
    assert [line for line in lines if "s1-p3" in line and not line.startswith("#")][-4:] == [
        "ip link add s1-p3 master s1 numtxqueues 1 numrxqueues 1 type veth peer name eth0 numtxqueues 1 numrxqueues 1 "
        "netns h3", "ip link set dev s1-p3 alias vtopo:v97dj up",
        "bridge vlan del dev s1-p3 vid 1", "bridge vlan add dev s1-p3 vid 20 pvid untagged"]
    assert [line for line in lines if line.startswith("bridge vlan") and "s2-p3" in line] == [
        "bridge vlan del dev s2-p3 vid 1", "bridge vlan add dev s2-p3 vid 10", "bridge vlan add dev s2-p3 vid 20"]


def test_a_switch_without_vlans_stays_as_it_was():
    lines = explained("bridge", s1={}, s2={})
    assert not [line for line in lines if "vlan_filtering" in line or line.startswith("bridge vlan")]
    ovs = explained("ovs", s1={}, s2={})
    assert not [line for line in ovs if "vlan_mode" in line or "tag=" in line]


def test_a_linux_bridge_with_vlans_where_the_kernel_filters_none_is_refused_in_one_line_per_switch():
    topology = vlan_lab("bridge")  # one subnet over two VLANs: a warning, and a deploy keeps the hosts apart
    refused = errors_in(resolve(topology, registry(), HostFacts(probed=True, bridge_vlans=False)).problems)
    assert [str(p) for p in refused] == [f"error: node {switch}: {NO_FILTERING.format(switch=switch)}"
                                         for switch in ("s1", "s2")]
    assert errors_in(resolve(topology, registry(), HostFacts(probed=True, bridge_vlans=True)).problems) == []
    assert errors_in(resolve(topology, registry(), HostFacts()).problems) == []  # the designer's checks know nothing of the host
    assert errors_in(resolve(vlan_lab("ovs"), registry(), HostFacts(probed=True, bridge_vlans=False)).problems) == []


def test_validate_on_this_host_says_whether_its_bridges_can_filter_vlans(tmp_path: Path, capsys):
    path = tmp_path / "vlans.vtopo"
    io.save(vlan_lab("bridge"), path)
    code = main(["validate", str(path)])
    output = capsys.readouterr().err
    if bridge_vlan_filtering():
        assert code == 0 and "VLAN" not in output
    else:  # this machine's kernel: no 802.1Q, so no VLAN filtering on bridges
        assert code == 2
        assert f"error: node s1: {NO_FILTERING.format(switch='s1')}\n" in output


def test_vlans_split_one_switch_into_broadcast_domains_that_trunks_carry_across():
    lab = resolve(vlan_lab("ovs"), registry(), HostFacts()).valid().lab
    assert [domain.describe() for domain in broadcast_domains_of(lab)] == [
        "domain 1 (VLAN 10): 10.0.0.0/24 via s1, s2: h1:eth0, h2:eth0, h4:eth0",
        "domain 2 (VLAN 20): 10.0.0.0/24 via s1, s2: h3:eth0, h5:eth0"]
    plain = vlan_lab("bridge")
    for switch in ("s1", "s2"):
        plain.update_node(switch, settings={})
    [domain] = broadcast_domains_of(resolve(plain, registry(), HostFacts()).valid().lab)
    assert [member.name for member in domain.members] == [f"h{n}:eth0" for n in range(1, 6)]


def test_a_switch_without_vlans_between_two_with_vlans_carries_each_tag_apart():
    topology = vlan_lab("ovs")
    trunk = topology.remove_link("link-trunk")
    topology.add_node(Node("mid", "mid", "bridge"))
    topology.add_link(Link("t1", trunk.a, Endpoint("mid", "p1")))
    topology.add_link(Link("t2", Endpoint("mid", "p2"), trunk.b))
    lab = resolve(topology, registry(), HostFacts()).valid().lab
    assert [[m.name for m in d.members] for d in broadcast_domains_of(lab)] == [
        ["h1:eth0", "h2:eth0", "h4:eth0"], ["h3:eth0", "h5:eth0"]]


@pytest.mark.parametrize("kind", ["ovs", "bridge"])
def test_a_subnet_per_vlan_on_one_switch_is_no_mistake(kind: str):
    topology = vlan_lab(kind)
    for host in ("h3", "h5"):
        link = topology.links[f"link-{host}"]
        topology.update_link(link.id, a=Interface(addresses=[f"10.0.20.{host[1]}/24"]))
    assert domain_problems(resolve(topology, registry(), HostFacts()).valid().lab) == []
    assert resolve(topology, registry(), HostFacts()).problems == ()


def test_a_lab_file_keeps_its_vlans(tmp_path: Path):
    topology = vlan_lab("ovs")
    path = tmp_path / "vlans.vtopo"
    io.save(topology, path)
    again = io.load(path)
    assert {node.name: node.settings for node in again.nodes.values()} == {
        node.name: node.settings for node in topology.nodes.values()}
    assert again.nodes["s1"].settings["vlans"] == {"p1": "access 10", "p2": "access 10", "p3": "access 20",
                                                   "p4": "trunk 10,20"}
    assert io.dumps(again) == io.dumps(topology)


def vlan_warnings(topology) -> list[str]:
    lab = resolve(topology, registry(), HostFacts()).valid().lab
    return [str(problem) for problem in vlan_problems(lab, broadcast_domains_of(lab))]


def test_a_gateway_plugged_into_another_vlan_is_named_with_the_port_to_move():
    """h1 and h2 use r1 (10.0.0.254) as their gateway, in VLAN 10's subnet, but r1's port is an access port in
    VLAN 20 (tests/golden/invalid/vlan-trunk-misses-gateway.vtopo has the trunk that misses the VLAN)."""
    topology = vlan_lab("ovs")
    topology.add_node(Node("r1", "r1", "router"))
    topology.add_link(Link("link-r1", Endpoint("r1", "eth0", Interface(addresses=["10.0.0.254/24"])),
                           Endpoint("s2", "p4")))
    topology.update_node("s2", settings={"vlans": {**topology.nodes["s2"].settings["vlans"], "p4": "access 20"}})
    for host in ("h1", "h2"):
        topology.update_node(host, settings={"default_route": "10.0.0.254"})
    assert [w for w in vlan_warnings(topology) if "gateway" in w] == [
        "warning: link r1:eth0-s2:p4: h1:eth0, h2:eth0 in VLAN 10 use 10.0.0.254 (r1:eth0) as their gateway, but VLAN "
        "10 does not reach it: r1:eth0 is plugged into s2:p4, an access port in VLAN 20, which does not give it VLAN "
        "10, so their frames never get there. Carry VLAN 10 to the gateway: s2: p4 = access 10"]


def test_a_router_with_an_address_in_each_subnet_of_a_vlan_joins_them():
    topology = vlan_lab("ovs")
    topology.update_link("link-h3", a=Interface(addresses=["10.0.20.3/24"]))
    topology.update_node("s1", settings={"vlans": {**topology.nodes["s1"].settings["vlans"], "p3": "access 10"}})
    assert any("the rest of VLAN 10 is on 10.0.0.0/24" in str(p) for p in domain_problems(
        resolve(topology, registry(), HostFacts()).valid().lab))
    topology.add_node(Node("r1", "r1", "router"))
    topology.add_link(Link("link-r1", Endpoint("r1", "eth0", Interface(addresses=["10.0.0.254/24", "10.0.20.254/24"])),
                           Endpoint("s1", "p5")))
    topology.update_node("s1", settings={"vlans": {**topology.nodes["s1"].settings["vlans"], "p5": "access 10"}})
    assert not [p for p in domain_problems(resolve(topology, registry(), HostFacts()).valid().lab) if "VLAN 10" in p.message]


@pytest.mark.parametrize("lab_file", sorted(TOPOLOGIES.glob("*.vtopo")), ids=lambda p: p.stem)
def test_no_shipped_lab_breaks_a_vlan_rule(lab_file: Path):
    assert vlan_warnings(open_lab(lab_file).topology) == []


def test_a_vlan_of_two_subnets_of_equal_size_offers_a_vlan_for_one_of_them():
    topology = vlan_lab("ovs")
    for host in ("h3", "h5"):
        topology.update_link(f"link-{host}", a=Interface(addresses=[f"10.0.20.{host[1]}/24"]))
    topology.update_link("link-h1", a=Interface(addresses=["10.0.20.1/24"]))
    topology.update_node("s2", settings={"vlans": {"p1": "access 10", "p2": "access 10", "p3": "trunk 10,20"}})
    assert [str(p) for p in domain_problems(resolve(topology, registry(), HostFacts()).valid().lab)] == [
        "warning: domain 1 (h1:eth0, h2:eth0, h4:eth0, h5:eth0): VLAN 10 holds two subnets, 10.0.0.0/24 and "
        "10.0.20.0/24: their frames reach each other, but hosts on different subnets do not talk without a router, so "
        "nothing passes between them. Give every interface in it the same subnet, or move their ports into VLAN 20, "
        "that of 10.0.20.0/24: s1: p1 = access 20 and s2: p2 = access 20."]


def test_a_trunk_that_misses_a_vlan_cuts_it_and_is_named_by_validation_and_by_a_failed_check():
    topology = vlan_lab("ovs")
    for host in ("h3", "h5"):
        topology.update_link(f"link-{host}", a=Interface(addresses=[f"10.0.20.{host[1]}/24"]))
    topology.update_node("s2", settings={"vlans": {"p1": "access 10", "p2": "access 20", "p3": "trunk 10"}})
    assert vlan_warnings(topology) == [
        "warning: link s1:p4-s2:p3: h3:eth0 and h5:eth0 are in VLAN 20 on 10.0.20.0/24, but VLAN 20 does not reach "
        "from one to the other: the link s1:p4-s2:p3 on the way does not carry VLAN 20 (s2:p3 is a trunk of VLAN 10), "
        "so they cannot reach each other. Carry VLAN 20 across: s2: p3 = trunk 10,20"]
    lab = resolve(topology, registry(), HostFacts()).valid().lab
    h3, h5 = ([m for d in broadcast_domains_of(lab) for m in d.members if m.name == name][0]
              for name in ("h3:eth0", "h5:eth0"))
    assert vlan_gap(lab, h3, h5) == (
        "h3:eth0 is in VLAN 20, which does not reach h5:eth0: the link s1:p4-s2:p3 on the way does not carry VLAN 20 "
        "(s2:p3 is a trunk of VLAN 10). Carry it: s2: p3 = trunk 10,20")
    assert vlan_apart(lab, "h3:eth0", "h5:eth0") == vlan_gap(lab, h3, h5)  # a failed same-domain check says it
    assert vlan_apart(lab, "h1:eth0", "h4:eth0") == ""
    h1 = next(m for d in broadcast_domains_of(lab) for m in d.members if m.name == "h1:eth0")
    assert vlan_gap(lab, h3, h1) == (
        "h3:eth0 is in VLAN 20, which does not reach h1:eth0: h1:eth0 is plugged into s1:p1, an access port in VLAN "
        "10, which does not give it VLAN 20. Carry it: s1: p1 = access 20")


def test_a_gateway_on_a_trunk_port_gets_its_vlan_as_the_native_one_it_sends_untagged():
    topology = vlan_lab("ovs")
    topology.add_node(Node("r1", "r1", "router"))
    topology.add_link(Link("link-r1", Endpoint("r1", "eth0", Interface(addresses=["10.0.0.254/24"])),
                           Endpoint("s2", "p4")))
    topology.update_node("s2", settings={"vlans": {**topology.nodes["s2"].settings["vlans"], "p4": "trunk 10,20"}})
    topology.update_node("h1", settings={"default_route": "10.0.0.254"})
    assert [w.split(": r1:eth0 is ")[1] for w in vlan_warnings(topology) if "gateway" in w] == [
        "plugged into s2:p4, a trunk of VLANs 10 and 20, which does not give it VLAN 10 untagged, so its frames never "
        "get there. Carry VLAN 10 to the gateway: s2: p4 = trunk 20 native 10"]
