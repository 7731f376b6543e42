"""VMs as libvirt domains, compiled: golden domain XML for each VM lab, valid against libvirt's own schema; the
lab's backend choice; the connection URI is the user's; vhost on and off in the XML."""
from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from pathlib import Path

import pytest

from golden import GOLDEN, assert_golden
from vtopo import ops as o
from vtopo.host.facts import libvirt_uri
from vtopo.host.services import services_of
from vtopo.lab_terms import HostFacts, Trust
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.model import io
from vtopo.model.problems import Severity, errors_in
from vtopo.model.topology import Endpoint, Link, Node
from vtopo.resources import TOPOLOGIES

LIBVIRT = HostFacts(libvirt=True)  # this machine with libvirtd running
VM_LABS = sorted(path for path in TOPOLOGIES.glob("*.vtopo") if '"kind": "vm"' in path.read_text())


def domains_of(plan_facts: HostFacts, lab: str, **lab_fields: str) -> list[o.StartDomain]:
    topology = open_lab(TOPOLOGIES / f"{lab}.vtopo").topology
    for key, value in lab_fields.items():
        setattr(topology, key, value)
    return [op for op in compile_plan(resolve(topology, registry(), plan_facts)).ops if isinstance(op, o.StartDomain)]


def assert_valid(domain: o.StartDomain, directory: Path) -> None:
    """Against libvirt's own schema, where virt-xml-validate (and the xmllint it runs) is installed."""
    if shutil.which("virt-xml-validate") and shutil.which("xmllint"):
        path = directory / f"{domain.name}.xml"
        path.write_text(domain.xml)
        checked = subprocess.run(["virt-xml-validate", str(path), "domain"], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_vm_labs_are_found():
    assert {p.stem for p in VM_LABS} >= {"vhost-on-off", "vm-router", "vm-tap-vs-macvtap"}


@pytest.mark.parametrize("lab_file", VM_LABS, ids=[p.stem for p in VM_LABS])
def test_domain_xml_matches_golden_and_libvirts_schema(lab_file, tmp_path):
    started = domains_of(LIBVIRT, lab_file.stem)
    vms = [node for node in open_lab(lab_file).topology.nodes.values() if node.kind == "vm"]
    assert len(started) == len(vms), "each VM is one domain"
    for op in started:
        assert_golden(GOLDEN / "domains" / f"{op.name.split('-', 1)[1]}@{lab_file.stem}.xml", op.xml)
        assert_valid(op, tmp_path)


def test_the_domain_carries_the_lab_prefix_and_node_id_in_its_metadata():
    (op,) = [op for op in domains_of(LIBVIRT, "vm-router")]
    prefix = compile_plan(resolve(open_lab(TOPOLOGIES / "vm-router.vtopo").topology, registry(), LIBVIRT)).prefix
    assert op.name == f"{prefix}-vmr"
    tag = ElementTree.fromstring(op.xml).find(f"metadata/{{{o.DOMAIN_XMLNS}}}node")
    assert tag is not None and tag.get("prefix") == prefix and tag.get("node") == "vmr"
    assert isinstance(op.inverse(), o.DestroyDomain) and op.inverse().name == op.name


def test_a_domain_starts_once_its_bridges_are_up_and_tagged():
    """As a process does: its first frames cross bridges that are up, and a deploy killed once it runs leaves no
    bridge that `vtopo cleanup` cannot find by its tag."""
    plan = compile_plan(resolve(open_lab(TOPOLOGIES / "vm-router.vtopo").topology, registry(), LIBVIRT))
    ops = plan.ops
    bridges = {op.name for op in ops if isinstance(op, o.CreateBridge)}
    ups = [index for index, op in enumerate(ops) if isinstance(op, o.ConfigureLink) and op.name in bridges]
    (start,) = [index for index, op in enumerate(ops) if isinstance(op, o.StartDomain)]
    assert len(ups) == len(bridges) == 2 and max(ups) < start


def test_the_lab_chooses_the_backend():
    assert domains_of(LIBVIRT, "vhost-on-off"), "auto: libvirt when libvirtd answers"
    assert not domains_of(HostFacts(), "vhost-on-off"), "auto: bare QEMU when it does not"
    assert not domains_of(LIBVIRT, "vhost-on-off", vm_backend="qemu")
    assert domains_of(HostFacts(), "vhost-on-off", vm_backend="libvirt"), "vtopo starts libvirtd for this lab"
    qemu = compile_plan(resolve(open_lab(TOPOLOGIES / "vhost-on-off.vtopo").topology, registry(), replace(LIBVIRT, libvirt=False)))
    assert any(isinstance(op, o.StartProcess) and op.argv[0] == "qemu-system-x86_64" for op in qemu.ops)


def test_a_bad_backend_names_the_field():
    topology = open_lab(TOPOLOGIES / "vm-router.vtopo").topology
    topology.vm_backend = "xen"
    problems = [p for p in resolve(topology, registry(), LIBVIRT).problems if p.path == "$.lab.vm_backend"]
    assert problems and "libvirt" in problems[0].message


def test_the_backend_round_trips_through_the_file():
    topology = open_lab(TOPOLOGIES / "vm-router.vtopo").topology
    topology.vm_backend = "libvirt"
    assert io.from_document(io.to_document(topology)).vm_backend == "libvirt"


def test_the_uri_is_the_users_not_the_lab_files(monkeypatch):
    monkeypatch.delenv("VTOPO_LIBVIRT_URI", raising=False)
    assert libvirt_uri() == "qemu:///system"
    monkeypatch.setenv("VTOPO_LIBVIRT_URI", "qemu+ssh://root@lab-host/system")
    remote = replace(LIBVIRT, libvirt_uri=libvirt_uri())
    ops = domains_of(remote, "vm-router")
    assert ops[0].uri == "qemu+ssh://root@lab-host/system"
    assert o.script_of(ops[0])[0].startswith("virsh -c qemu+ssh://root@lab-host/system create")
    assert o.script_of(ops[0].inverse()) == [f"virsh -c qemu+ssh://root@lab-host/system destroy {ops[0].name}"]
    document = io.to_document(open_lab(TOPOLOGIES / "vm-router.vtopo").topology)
    document["lab"]["libvirt_uri"] = "qemu+ssh://root@elsewhere/system"
    from_file = [op for op in compile_plan(resolve(io.from_document(document), registry(), remote)).ops if isinstance(op, o.StartDomain)]
    assert {op.uri for op in from_file} == {"qemu+ssh://root@lab-host/system"}, "a lab file cannot move the VMs"


def test_vhost_on_and_off_as_libvirt_spells_them():
    with_vhost = replace(LIBVIRT, vhost_net=True)
    drivers = {op.name.rsplit("-", 1)[1]: ElementTree.fromstring(op.xml).find("devices/interface/driver").get("name")
               for op in domains_of(with_vhost, "vhost-on-off")}
    assert drivers == {"von": "vhost", "voff": "qemu"}
    without = {op.name.rsplit("-", 1)[1]: op.vhost for op in domains_of(LIBVIRT, "vhost-on-off")}
    assert without == {"von": False, "voff": False}, "no vhost-net in the kernel: asked for off, and said so"


def test_a_macvtap_nic_is_the_macvtap_vtopo_made_with_its_mac():
    plan = compile_plan(resolve(open_lab(TOPOLOGIES / "vm-tap-vs-macvtap.vtopo").topology, registry(), LIBVIRT))
    macvtap = next(op for op in plan.ops if isinstance(op, o.CreateMacvtap))
    mac = next(op.mac for op in plan.ops if isinstance(op, o.ConfigureLink) and op.name == macvtap.name)
    domain = next(op for op in plan.ops if isinstance(op, o.StartDomain) and macvtap.name in op.xml)
    interface = ElementTree.fromstring(domain.xml).find("devices/interface")
    assert interface.get("type") == "ethernet" and interface.find("target").get("managed") == "no"
    assert interface.find("mac").get("address") == mac, "the guest's MAC must equal the macvtap's"
    assert f"up:/{macvtap.name}" in domain.requires(), "started once its NICs are configured and tagged"


def test_a_vhost_user_nic_is_refused_with_what_this_host_lacks():
    topology = open_lab(TOPOLOGIES / "ovs-openflow.vtopo").topology
    topology.add_node(Node(id="vu", name="vu", kind="vm", settings={"vhost_user": True}))
    topology.add_link(Link(id="vu-ovs", a=Endpoint("vu", "nic0"), b=Endpoint("sw", "p9")))
    (problem,) = [p for p in errors_in(resolve(topology, registry(), LIBVIRT).problems) if p.subject == "node vu"]
    assert "does not make vhost-user ports yet" in problem.message and "dpdk-init=true" in problem.message
    assert "needs KVM: under TCG emulation QEMU 7.2 crashes" in problem.message
    (with_dpdk,) = [p for p in errors_in(resolve(topology, registry(), replace(LIBVIRT, ovs_dpdk=True, accel="kvm")).problems)
                    if p.subject == "node vu"]
    assert "dpdk-init" not in with_dpdk.message and "needs KVM" not in with_dpdk.message


def test_libvirtd_is_a_shared_service_of_a_libvirt_lab_only():
    topology = open_lab(TOPOLOGIES / "vm-router.vtopo").topology
    assert "libvirtd" in services_of(compile_plan(resolve(topology, registry(), LIBVIRT)))
    assert "libvirtd" not in services_of(compile_plan(resolve(topology, registry(), HostFacts())))


def test_a_vm_on_a_userspace_ovs_checksums_its_frames_in_full(tmp_path):
    topology = open_lab(TOPOLOGIES / "ovs-openflow.vtopo").topology
    topology.add_node(Node(id="vo", name="vo", kind="vm"))
    topology.add_link(Link(id="vo-ovs", a=Endpoint("vo", "nic0"), b=Endpoint("sw", "p9")))
    (domain,) = [op for op in compile_plan(resolve(topology, registry(), LIBVIRT)).ops if isinstance(op, o.StartDomain)]
    driver = ElementTree.fromstring(domain.xml).find("devices/interface/driver")
    assert driver is not None and driver.find("host").get("csum") == "off", "as QEMU's csum=off on the direct backend"
    assert_valid(domain, tmp_path)


def test_a_vm_that_boots_a_disk_image_runs_as_qemu_on_a_descriptor_vtopo_opened():
    topology = open_lab(TOPOLOGIES / "vm-router.vtopo").topology
    topology.nodes["vmr"].settings["image"] = "/srv/images/router.qcow2"
    trust = Trust(images=frozenset({"/srv/images/router.qcow2"}))
    plan = compile_plan(resolve(topology, registry(), LIBVIRT, trust))
    assert not [op for op in plan.ops if isinstance(op, o.StartDomain)], "libvirt would open the image by its path"
    (qemu,) = [op for op in plan.ops if isinstance(op, o.StartProcess) and op.argv[0] == "qemu-system-x86_64"]
    assert qemu.image_fds == ((20, "/srv/images/router.qcow2"),)
    assert not [p for p in resolve(topology, registry(), LIBVIRT, trust).problems if "runs as a QEMU process" in p.message]
    topology.vm_backend = "libvirt"
    (warning,) = [p for p in resolve(topology, registry(), LIBVIRT, trust).problems if "runs as a QEMU process" in p.message]
    assert warning.subject == "node vmr" and warning.severity is Severity.WARNING


def test_every_domain_is_created_paused_and_resumed_once_all_exist():
    plan = compile_plan(resolve(open_lab(TOPOLOGIES / "vhost-on-off.vtopo").topology, registry(), LIBVIRT))
    started = [index for index, op in enumerate(plan.ops) if isinstance(op, o.StartDomain)]
    resumed = [op for op in plan.ops[max(started):] if isinstance(op, o.ResumeDomain)]
    assert len(started) == 2 and {op.name for op in resumed} == {plan.ops[i].name for i in started}
    assert all("--paused" in o.script_of(plan.ops[i])[0] for i in started)
    assert o.script_of(resumed[0]) == [f"virsh -c qemu:///system resume {resumed[0].name}"]
