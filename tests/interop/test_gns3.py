"""A GNS3 project (tests/interop/gns3/campus, written for these tests in GNS3 2.2's project format) as a vtopo lab."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from vtopo.interop.importing import import_lab
from vtopo.lab_terms import HostFacts
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.ops import CreateLinkBridge

CAMPUS = Path(__file__).parent / "gns3" / "campus" / "campus.gns3"
VM_CHAIN = Path(__file__).parent / "gns3" / "vm-chain" / "vm-chain.gns3"
VLANS = Path(__file__).parent / "gns3" / "vlans" / "vlans.gns3"


def test_a_gns3_project_maps_node_by_node_with_its_saved_configurations() -> None:
    result = import_lab(CAMPUS, registry())
    topology = result.topology
    assert {node.name: node.kind for node in topology.nodes.values()} == {
        "PC1": "container", "PC2": "container", "web": "container", "SW1": "bridge", "OVS1": "ovs", "R1": "router",
        "R2": "router", "vm": "vm"}
    r1 = topology.node_named("R1")
    pc1 = topology.node_named("PC1")
    web = topology.node_named("web")
    assert r1 is not None and pc1 is not None and web is not None
    assert r1.settings["config"].startswith("frr version 8.4.1\n") and r1.settings["daemons"] == ["zebra", "ospfd"]
    assert pc1.settings == {"default_route": "10.10.1.1"} and web.settings == {"default_route": "10.10.1.1"}
    addresses = {f"{topology.nodes[e.node].name}:{e.port}": e.interface.addresses
                 for link in topology.links.values() for e in link.ends}
    assert addresses["PC1:eth0"] == ["10.10.1.11/24"] and addresses["web:eth0"] == ["10.10.1.20/24"]
    assert addresses["R1:eth1"] == ["10.0.12.1/30"] and addresses["SW1:p8"] == []
    notes = {a.shape: a for a in topology.annotations.values()}
    assert notes["note"].text == "Campus LAN & core (OSPF area 0)" and (notes["rect"].width, notes["rect"].height) == \
        (420, 220)
    lines = [str(notice) for notice in result.notices]
    assert "node IOU1: left out: a Cisco IOU device is not something vtopo runs; its links are left out too" in lines
    assert any(line.startswith("node vm: a VM on vtopo's built-in guest, not debian-12.qcow2") for line in lines)
    assert any(line.startswith("node R2: a router (qemu image frr-8.2.2.qcow2); no saved FRR configuration")
               for line in lines)
    assert any("R2 - IOU1: left out with IOU1" in line for line in lines)
    assert any("packet filters (delay, loss...) are not carried" in line for line in lines)
    assert sum(line.startswith("drawing ") for line in lines) == 1


def test_qemu_vms_wired_to_each_other_and_to_a_container_import_as_links_that_compile() -> None:
    """As in a training project of 32 Qemu VMs: a VM's NIC on another VM's, or on a Docker node's, with no switch
    between them."""
    topology = import_lab(VM_CHAIN, registry()).topology
    assert {node.name: node.kind for node in topology.nodes.values()} == {"PC-A": "vm", "Core": "vm", "PC-B": "vm",
                                                                         "srv": "container"}
    assert sorted(topology.describe_link(link) for link in topology.links.values()) == [
        "Core:nic1-PC-B:nic0", "PC-A:nic0-Core:nic0", "PC-B:nic1-srv:eth0"]
    plan = compile_plan(resolve(topology, registry(), HostFacts()))
    bridges = [step.op for step in plan.steps if isinstance(step.op, CreateLinkBridge)]
    assert len(bridges) == 3 and not plan.warnings


def test_ethernet_switch_ports_import_as_the_vlans_of_an_ovs_switch() -> None:
    """Access ports keep their VLAN; a dot1q port (GNS3's trunk of every VLAN, untagged in its own) is a trunk of the
    VLANs the project names with that native VLAN; what has no counterpart is said in one line."""
    result = import_lab(VLANS, registry())
    topology = result.topology
    sw1, sw2 = topology.node_named("SW1"), topology.node_named("SW2")
    assert sw1 is not None and sw2 is not None and sw1.kind == sw2.kind == "ovs"
    assert sw1.settings == {"vlans": {"p1": "access 10", "p2": "access 20", "p3": "trunk 10,20,30 native 1"}}
    assert sw2.settings == {"vlans": {"p1": "trunk 10,20,30 native 1", "p2": "access 10", "p3": "access 20",
                                      "p4": "access 30"}}
    lines = [str(notice) for notice in result.notices]
    assert ("node SW2: port p4 is a QinQ tunnel port (outer VLAN 30), which vtopo's switches do not make: it is an "
            "access port in VLAN 30, which drops frames that come tagged instead of tagging them again") in lines
    assert ("node SW1: its dot1q ports carry the VLANs the project's switches name (1, 10, 20, 30), not every VLAN "
            "1-4094 as in GNS3: tagged frames of any other VLAN are dropped") in lines
    assert not compile_plan(resolve(topology, registry(), HostFacts())).warnings


def test_a_switch_without_vlans_stays_a_linux_bridge() -> None:
    switch = import_lab(CAMPUS, registry()).topology.node_named("SW1")
    assert switch is not None and switch.kind == "bridge" and switch.settings == {}


def test_each_property_the_import_does_not_carry_is_said_in_one_line_naming_the_node(tmp_path: Path) -> None:
    """campus's Qemu FRR appliance becomes a router, a namespace: its RAM, CPUs and NIC type are said; the Qemu VM
    keeps them as its settings. A Docker node's environment, start command, hosts and volumes, a MAC address of its
    adapter, a suspended link and the project's variables are each said too; GNS3's own bookkeeping (consoles,
    symbols, labels) is nothing of the lab."""
    result = import_lab(CAMPUS, registry())
    lines = [str(notice) for notice in result.notices]
    assert [line for line in lines if line.startswith("node R2: ") and "not carried" in line] == [
        "node R2: ram 512 is not carried: a router or a container runs as a namespace on this host, with no memory "
        "of a VM's (a vtopo VM takes 64 MiB to 1 TiB)",
        "node R2: cpus 1 is not carried: a router or a container runs as a namespace on this host, with no CPUs of a "
        "VM's",
        "node R2: adapter_type e1000 is not carried: a router or a container has veth interfaces, and a vtopo VM "
        "virtio or e1000 NICs"]
    vm = result.topology.node_named("vm")
    assert vm is not None and vm.settings == {"memory_mb": 1024, "vcpus": 1, "nic_model": "virtio"}
    assert not any(line.startswith("node vm: ") and "not carried" in line for line in lines)
    project = json.loads(CAMPUS.read_text())
    project["variables"] = [{"name": "SITE", "value": "lab1"}]
    web = next(node for node in project["topology"]["nodes"] if node["name"] == "web")
    web["properties"].update(environment="TZ=UTC", start_command="nginx -g 'daemon off;'",
                             extra_hosts="db:10.10.1.30", extra_volumes=["/data"])
    web["custom_adapters"] = [{"adapter_number": 0, "mac_address": "0c:00:00:00:00:01"}]
    web["colour"] = "blue"
    project["topology"]["links"][0]["suspend"] = True
    project["topology"]["drawings"][0]["rotation"] = 90
    copy = tmp_path / "campus"
    shutil.copytree(CAMPUS.parent, copy)
    (copy / CAMPUS.name).write_text(json.dumps(project))
    lines = [str(notice) for notice in import_lab(copy / CAMPUS.name, registry()).notices]
    assert [line for line in lines if "not carried" in line and ("web" in line or "suspend" in line or
                                                                 "variables" in line)] == [
        "variables name=SITE, value=lab1 is not carried: vtopo has no project variables",
        "node web: custom_adapters adapter_number=0, mac_address=0c:00:00:00:00:01 is not carried: vtopo names a "
        "node's interfaces and picks their MAC addresses itself",
        "node web: colour blue is not carried: vtopo does not read this field, and the lab goes without it",
        "node web: environment TZ=UTC is not carried: the node's commands run with vtopo's environment; set a "
        "variable in a startup command",
        "node web: extra_hosts db:10.10.1.30 is not carried: vtopo writes each node's /etc/hosts with the lab's names",
        "node web: start_command nginx -g 'daemon off;' is not carried: a vtopo node runs no main process of an "
        "image; its startup commands run, with consent",
        "node web: extra_volumes /data is not carried: a vtopo node sees the host's own files, and nothing is mounted "
        "into it",
        "link 00000001-aaaa-4bbb-8ccc-000000000001: suspend True is not carried: the link is up in vtopo; `vtopo link "
        "LAB A B down` takes it down once deployed"]
    assert "drawing d0000001-0000-4000-8000-000000000001: rotation 90 is not carried: vtopo draws the note " \
           "unrotated" in lines


def test_a_vm_whose_adapter_type_is_not_a_name_imports_without_its_nic_model(tmp_path: Path) -> None:
    """A mutated project once had a list for the Qemu VM's adapter_type, and the import raised TypeError."""
    project = json.loads(CAMPUS.read_text())
    vm = next(node for node in project["topology"]["nodes"] if node["name"] == "Debian")
    vm["properties"]["adapter_type"] = ["virtio-net-pci"]
    copy = tmp_path / "campus"
    shutil.copytree(CAMPUS.parent, copy)
    (copy / CAMPUS.name).write_text(json.dumps(project))
    imported = import_lab(copy / CAMPUS.name, registry()).topology.node_named("vm")
    assert imported is not None and imported.settings == {"memory_mb": 1024, "vcpus": 1}
