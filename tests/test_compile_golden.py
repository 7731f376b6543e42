"""Every lab in topologies/ compiles to its expected plan (JSON) and explanation (shell script)."""
from __future__ import annotations

import re

import pytest

from golden import GOLDEN, assert_golden
from vtopo.lab_terms import HostFacts
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.resources import TOPOLOGIES

LABS = sorted(TOPOLOGIES.glob("*.vtopo"))
FACTS = HostFacts()  # this kind of machine: userspace OVS, no vhost-net, TCG


@pytest.mark.parametrize("lab_file", LABS, ids=[p.stem for p in LABS])
def test_lab_plan_matches_golden(lab_file):
    plan = compile_plan(resolve(open_lab(lab_file).topology, registry(), FACTS))
    assert_golden(GOLDEN / "plans" / f"{lab_file.stem}.json", plan.dumps())
    assert_golden(GOLDEN / "plans" / f"{lab_file.stem}.explain", plan.explain())


@pytest.mark.parametrize("lab_file", LABS, ids=[p.stem for p in LABS])
def test_plan_is_deterministic(lab_file):
    topology = open_lab(lab_file).topology
    assert compile_plan(resolve(topology, registry(), FACTS)).dumps() == compile_plan(resolve(open_lab(lab_file).topology, registry(), FACTS)).dumps()


def test_every_lab_carries_notes():
    for lab_file in LABS:
        assert open_lab(lab_file).topology.notes.strip(), f"{lab_file.name} has no teaching notes"


def test_macvtap_lab_passes_the_tap_device_on_fd_3():
    plan = compile_plan(resolve(open_lab(TOPOLOGIES / "vm-tap-vs-macvtap.vtopo").topology, registry(), FACTS))
    script = plan.explain()
    assert "-netdev tap,id=net0,fd=3,vhost=off" in script
    assert "3<>/dev/tap$(cat /sys/class/net/" in script


def test_ovs_on_userspace_datapath_gives_each_container_its_own_port_or_turns_tx_checksum_off_on_veths():
    topology = open_lab(TOPOLOGIES / "ovs-openflow.vtopo").topology
    script = compile_plan(resolve(topology, registry(), FACTS)).explain()
    assert "datapath_type=netdev" in script
    assert script.count("type=internal") == 3 and "ethtool" not in script and "type veth" not in script
    assert re.search(r"ip link set dev \S+-sw-p1 netns \S+-c1 name eth0", script), script
    topology.nodes["sw"].settings["ports"] = "system"
    veths = compile_plan(resolve(topology, registry(), FACTS)).explain()
    assert veths.count("ethtool -K eth0 tx off") == 3 and "type=internal" not in veths
    system = compile_plan(resolve(topology, registry(), HostFacts(ovs_datapath="system")))
    assert "ethtool" not in system.explain()
