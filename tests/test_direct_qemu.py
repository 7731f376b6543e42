"""The plan for a VM on the direct QEMU backend: QEMU starts as vtopo-qemu with its full sandbox, and every tap, macvtap,
vhost-net device and disk image reaches it on a descriptor root opened (tests/labs/test_confined_vm.py runs it)."""
from __future__ import annotations

from vtopo import ops as o
from vtopo.lab_terms import HostFacts
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.model.topology import Endpoint, Interface, Link, Node
from vtopo.resources import TOPOLOGIES


def qemu_starts(facts: HostFacts, lab: str = "vm-tap-vs-macvtap") -> list[o.StartProcess]:
    plan = compile_plan(resolve(open_lab(TOPOLOGIES / f"{lab}.vtopo").topology, registry(), facts))
    return [op for op in plan.ops if isinstance(op, o.StartProcess) and op.argv[0] == "qemu-system-x86_64"]


def test_qemu_runs_as_its_user_in_the_foreground_with_the_whole_sandbox():
    for start in qemu_starts(HostFacts()):
        assert start.user == "vtopo-qemu" and start.groups == ()
        assert "-runas" not in start.argv and "-daemonize" not in start.argv
        sandbox = start.argv[start.argv.index("-sandbox") + 1]
        assert sandbox == "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"
        assert start.ready_path.endswith("/qmp.sock") and f"unix:{start.ready_path},server=on,wait=off" in start.argv
        assert "( umask 077 && exec setpriv --reuid=vtopo-qemu --regid=vtopo-qemu --clear-groups" in o.script_of(start)[-1]


def test_each_nic_is_a_descriptor_root_opened():
    vm1, vm2 = qemu_starts(HostFacts())
    assert vm1.tun_fds == ((3, "voss0-vm1-nic0"),) and not vm1.tap_fds, "a tap on a bridge: /dev/net/tun, attached"
    assert vm2.tap_fds == ((3, "voss0-vm2-nic0"),) and not vm2.tun_fds, "a macvtap: its /dev/tapN"
    for start in (vm1, vm2):
        assert "tap,id=net0,fd=3,vhost=off" in start.argv and not any("ifname=" in arg for arg in start.argv)


def test_vhost_net_is_opened_by_root_and_handed_over_too():
    (von, voff) = qemu_starts(HostFacts(vhost_net=True), "vhost-on-off")
    assert "tap,id=net0,fd=3,vhost=on,vhostfd=11" in von.argv and von.device_fds == ((11, o.VHOST_DEVICE),)
    assert "tap,id=net0,fd=3,vhost=off" in voff.argv and voff.device_fds == ()


def test_nics_get_distinct_descriptors():
    topology = open_lab(TOPOLOGIES / "vm-router.vtopo").topology
    topology.add_node(Node(id="vx", name="vx", kind="vm", settings={"vhost": True}))
    for index, bridge in enumerate(("br1", "br2")):
        topology.add_link(Link(id=f"vx-{bridge}", a=Endpoint("vx", f"nic{index}", Interface()),
                               b=Endpoint(bridge, "p9")))
    (vx,) = [op for op in compile_plan(resolve(topology, registry(), HostFacts(vhost_net=True))).ops
             if isinstance(op, o.StartProcess) and op.name == "qemu@vx"]
    assert [fd for fd, _ in vx.tun_fds] == [3, 4] and [fd for fd, _ in vx.device_fds] == [11, 12]


def test_kvm_adds_the_kvm_group_only():
    assert all(start.groups == ("kvm",) for start in qemu_starts(HostFacts(accel="kvm")))
    assert "--groups=kvm" in o.script_of(qemu_starts(HostFacts(accel="kvm"))[0])[-1]


def test_the_run_directory_belongs_to_qemu_and_no_one_else():
    plan = compile_plan(resolve(open_lab(TOPOLOGIES / "vm-tap-vs-macvtap.vtopo").topology, registry(), HostFacts()))
    made = [op for op in plan.ops if isinstance(op, o.MakeDirectory) and op.owner.startswith("node vm")]
    assert made and all(op.user == "vtopo-qemu" and op.mode == 0o700 for op in made)
