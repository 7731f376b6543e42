"""The explained script is what a deploy does, field by field.

Every op of every shipped lab, and a specimen of every op with every field set (SPECIMENS), is applied twice: on the
real KernelHost, with the kernel and the tools replaced at their last step by recorders (tests/recorded_kernel.py:
the bytes of each netlink request read back with pyroute2's decoder, each tc request, the sysctl file written, each
ioctl, the argv and stdin of ovs-vsctl and ovs-ofctl, the JSON handed to nft, the calls into files, processes and
libvirt), and on a ScriptHost, whose lines are read back the way iproute2, tc, sysctl, ethtool, nft, ovs-vsctl and sh
read them (tests/script_reader.py). Both readings must be the same list of effects. A change to a running lab (`vtopo
node`, `vtopo link`) is checked whole as well: its explanation is the script of exactly the ops it then applies.
tests/test_explain_mutations.py breaks a copy of vtopo on purpose and watches this fail.
"""
from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from recorded_kernel import Effect, Kernel, record_kernel
from script_reader import script_effects
from vtopo import lab_operations
from vtopo import ops as o
from vtopo.compile.compiler import compile_plan
from vtopo.compile.links import shaped_links
from vtopo.compile.resolve import resolve
from vtopo.host.applier import Applier
from vtopo.host.state import SHAPED_LINKS, LabRecord
from vtopo.lab import open_lab, registry
from vtopo.lab_operations import (LiveChange, OperateError, Step, operate_node, set_link_impairment,
                                  set_link_state)
from vtopo.lab_record import consent_to_json
from vtopo.lab_terms import HostFacts, Trust
from vtopo.model import io
from vtopo.model.impairment_change import ImpairmentChange
from vtopo.model.topology import Topology
from vtopo.resources import TOPOLOGIES
from vtopo.saving import save_ops

LABS = sorted(TOPOLOGIES.glob("*.vtopo"))
PREFIX = "vfth0"

SPECIMENS: list[o.Op] = [
    o.CreateUserNamespace(owner="lab", path="/run/vtopo/ns/vfth0/user", uid=1001, gid=1002),
    o.CreateNamespace(owner="node c1", name="vfth0-c1"),
    o.CreateNamespace(owner="node c2", name="vfth0-c2", userns="/run/vtopo/ns/vfth0/user"),
    o.IsolateNode(owner="node c1", netns="vfth0-c1", hostname="c1", hosts_file="/run/vtopo/vfth0/hosts",
                  mount_ns="/run/vtopo/ns/vfth0/c1.mnt", uts_ns="/run/vtopo/ns/vfth0/c1.uts",
                  userns="/run/vtopo/ns/vfth0/user", binds=(("/run/vtopo/vfth0/r1", "/etc/frr"),),
                  files=(("/etc/group", "root:x:0:\nfrrvty:x:0:\n"),), host_read_only=True),
    o.RunImage(owner="node t1", netns="vfth0-t1", hostname="t1", hosts_file="/run/vtopo/vfth0/hosts",
               mount_ns="/run/vtopo/ns/vfth0/t1.mnt", uts_ns="/run/vtopo/ns/vfth0/t1.uts",
               pid_ns="/run/vtopo/ns/vfth0/t1.pid", image="vtopo/frr:latest", digest="sha256:" + "ab" * 32,
               run_root="/run/vtopo", image_owner=0, userns="/run/vtopo/ns/vfth0/user", ids=(1001, 1002),
               binds=(("/run/vtopo/vfth0/r1", "/etc/frr"),), files=(("/etc/group", "root:x:0:\n"),),
               memory_mb=128, cpus=0.5, disk_mb=64),
    o.RemoveImageContainer(owner="node t1", netns="vfth0-t1", run_root="/run/vtopo",
                           paths=("/run/vtopo/ns/vfth0/t1.mnt", "/run/vtopo/ns/vfth0/t1.uts")),
    o.SetSysctl(owner="node c2", netns="vfth0-c2", key="net.ipv4.ip_forward", value="1",
                userns="/run/vtopo/ns/vfth0/user"),
    o.CreateBridge(owner="node br", name="vfth0-br", stp=True, forward_delay_s=4.0, ageing_s=30.5),
    o.CreateBridge(owner="node br", name="vfth0-br2", stp=False, forward_delay_s=0.0, ageing_s=300.0),
    o.CreateBridge(owner="node br", name="vfth0-br3", stp=True, forward_delay_s=2.0, ageing_s=10.0,
                   vlan_filtering=True),
    o.CreateVeth(owner="link", name="vfth0-br-p1", netns=None, peer="eth0", peer_netns="vfth0-c1"),
    o.CreateVeth(owner="link", name="eth1", netns="vfth0-c1", peer="vfth0-br-p2", peer_netns=None),
    o.CreateVeth(owner="link", name="eth2", netns="vfth0-c1", peer="eth2", peer_netns="vfth0-c2"),
    o.CreateVeth(owner="link", name="vfth0-a", netns=None, peer="vfth0-b", peer_netns=None),
    o.CreateVeth(owner="link", name="vfth0-br-p3", netns=None, peer="eth7", peer_netns="vfth0-c1", master="vfth0-br"),
    o.CreateMacvlan(owner="link", name="eth3", netns="vfth0-c1", lower="vfth0-mv", lower_netns=None, mode="vepa"),
    o.CreateMacvlan(owner="link", name="eth4", netns=None, lower="vfth0-a", lower_netns=None, mode="private"),
    o.CreateVlan(owner="link", name="eth0.10", netns="vfth0-c1", parent="eth0", vid=10),
    o.CreateVlan(owner="link", name="vfth0-h-eth0.4094", netns=None, parent="vfth0-h-eth0", vid=4094),
    o.CreateMacvtap(owner="link", name="vfth0-vm1-0", lower="vfth0-mv", mode="bridge"),
    o.CreateTap(owner="link", name="vfth0-vm1-1"),
    o.CreateLinkBridge(owner="link", name="vfth0--0a1b2c", forward_delay_s=0.0),
    o.CreateVxlan(owner="link", name="eth6", netns="vfth0-c1", vni=1000007, local="198.18.0.1", remote="198.18.0.2",
                  port=4789, mtu=1450),
    o.CreateVxlan(owner="link", name="vfth0-br-t1", netns=None, vni=16777215, local="2001:db8::1",
                  remote="2001:db8::2", port=8472, mtu=1430),
    o.MoveLink(owner="node sw", name="vfth0-sw-p1", netns="vfth0-c1", new_name="eth5"),
    o.SetMaster(owner="link", name="vfth0-br-p1", master="vfth0-br", hairpin=True),
    o.SetMaster(owner="link", name="vfth0-br-p2", master="vfth0-br"),
    o.SetBridgeVlans(owner="node br", name="vfth0-br-p1", untagged=10),
    o.SetBridgeVlans(owner="node br", name="vfth0-br-p2", tagged=(10, 20, 4094)),
    o.SetBridgeVlans(owner="node br", name="vfth0-br-p3", untagged=1, tagged=(30,)),
    o.ConfigureLink(owner="link", name="eth0", netns="vfth0-c1", mtu=1400, mac="02:00:00:00:00:01",
                    alias="vtopo:vfth0", up=True),
    o.ConfigureLink(owner="link", name="vfth0-br-p1", netns=None, mtu=9000, up=False),
    o.ConfigureLink(owner="link", name="eth1", netns="vfth0-c1"),
    o.AddAddress(owner="link", name="eth0", netns="vfth0-c1", cidr="10.0.0.1/24"),
    o.AddAddress(owner="link", name="eth0", netns="vfth0-c1", cidr="2001:db8::1/64"),
    o.AddAddress(owner="link", name="vfth0-br", netns=None, cidr="192.0.2.1/28"),
    o.AddRoute(owner="node c1", netns="vfth0-c1", destination="default", gateway="10.0.0.254"),
    o.AddRoute(owner="node c1", netns="vfth0-c1", destination="198.51.100.0/24", gateway="10.0.0.253"),
    o.AddRoute(owner="node c1", netns="vfth0-c1", destination="2001:db8:1::/64", gateway="fe80::1", device="eth0"),
    o.AddRoute(owner="node h", netns=None, destination="203.0.113.0/24", gateway="192.0.2.2"),
    o.DeleteAddress(owner="node c1", name="eth0", netns="vfth0-c1", cidr="10.0.0.9/24"),
    o.DeleteAddress(owner="node c1", name="eth0", netns="vfth0-c1", cidr="2001:db8::9/64"),
    o.DeleteRoute(owner="node c1", netns="vfth0-c1", destination="default", gateway="10.0.0.254"),
    o.DeleteRoute(owner="node c1", netns="vfth0-c1", destination="198.51.100.0/24", gateway="10.0.0.253"),
    o.DeleteRoute(owner="node c1", netns="vfth0-c1", destination="2001:db8:1::/64", gateway="fe80::1", device="eth0"),
    o.SetSysctl(owner="node r1", netns="vfth0-c1", key="net.ipv4.ip_forward", value="1"),
    o.SetSysctl(owner="node r1", netns="vfth0-c1", key="net/ipv4/conf/eth0.10/rp_filter", value="2"),
    o.SetSysctl(owner="link", netns=None, key="net.ipv6.conf.vfth0-br.disable_ipv6", value="1", device="vfth0-br"),
    o.SetImpairment(owner="link", name="eth0", netns="vfth0-c1", delay_ms=20.5, jitter_ms=3, loss_pct=1.5,
                    rate_mbit=100),
    o.SetImpairment(owner="link", name="vfth0-br-p1", netns=None, delay_ms=7),
    o.SetImpairment(owner="link", name="eth1", netns="vfth0-c1", loss_pct=0.25),
    o.SetImpairment(owner="link", name="eth2", netns="vfth0-c1", rate_mbit=2.5),
    o.SetLinkState(owner="node c1", name="eth0", netns="vfth0-c1", up=False),
    o.SetLinkState(owner="link", name="vfth0-br-p1", netns=None, up=True),
    o.SetLinkState(owner="link", name="eth6", netns="vfth0-c1", up=True, carrier=False),
    o.SetLinkState(owner="link", name="vfth0-br-t1", netns=None, up=True, carrier=True),
    o.SetTxChecksum(owner="link", name="eth0", netns="vfth0-c1"),
    o.SetTxChecksum(owner="link", name="vfth0-br-p1", netns=None, enabled=True),
    o.DeleteLink(owner="link", name="vfth0-a"),
    o.DeleteLink(owner="link", name="eth9", netns="vfth0-c1"),
    o.OvsAddBridge(owner="node sw", name="vfth0-sw", datapath="netdev", fail_mode="secure", lab=PREFIX),
    o.OvsAddPort(owner="link", bridge="vfth0-sw", name="vfth0-sw-p1", ofport=1, lab=PREFIX, port_type="internal"),
    o.OvsAddPort(owner="link", bridge="vfth0-sw", name="vfth0-sw-p2", ofport=2, lab=PREFIX),
    o.OvsAddPort(owner="link", bridge="vfth0-sw", name="vfth0-sw-p3", ofport=3, lab=PREFIX, port_type="internal",
                 vlan_mode=o.OvsVlanMode.ACCESS, tag=10),
    o.OvsAddPort(owner="link", bridge="vfth0-sw", name="vfth0-sw-p4", ofport=4, lab=PREFIX,
                 vlan_mode=o.OvsVlanMode.TRUNK, trunks=(10, 20)),
    o.OvsAddPort(owner="link", bridge="vfth0-sw", name="vfth0-sw-p5", ofport=5, lab=PREFIX,
                 vlan_mode=o.OvsVlanMode.NATIVE_UNTAGGED, tag=1, trunks=(10, 4094)),
    o.OvsAddSubinterface(owner="link", bridge="vfth0-sw", name="vfth0-sw-p4.20", ofport=1000, lab=PREFIX, tag=20,
                         subinterface="eth0.20"),
    o.OvsAddFlows(owner="node sw", bridge="vfth0-sw", flows=("in_port=1,actions=output:2", "priority=0,actions=drop"),
                  ports=(1, 2)),
    o.OvsDeleteBridge(owner="node sw", name="vfth0-sw"),
    o.ContainForwarding(owner="lab", table="vtopo-vfth0", device_prefix="vfth0-"),
    o.ContainForwarding(owner="lab", table="vtopo-vfth0", device_prefix="vfth0-", host_node_devices=("vfth0-h", "x"),
                        host_addresses=("192.0.2.1", "2001:db8::1", "192.0.2.17")),
    o.RemoveNftTable(owner="lab", table="vtopo-vfth0"),
    o.MakeDirectory(owner="lab", path="/run/vtopo/vfth0"),
    o.MakeDirectory(owner="node r1", path="/run/vtopo/vfth0/r1", user="frr", mode=0o750),
    o.MakeDirectory(owner="node r2", path="/run/vtopo/vfth0/r2", ids=(1001, 1002)),
    o.RemoveDirectory(owner="lab", path="/run/vtopo/vfth0"),
    o.WriteFile(owner="node r1", path="/run/vtopo/vfth0/r1/frr.conf", content="hostname r1\nEOF\n"),
    o.WriteScript(owner="node c1", path="/run/vtopo/vfth0/c1.dhcp/udhcpc.script", content="#!/bin/sh\nexit 0\n"),
    o.WriteHostsFile(owner="lab", path="/run/vtopo/vfth0/hosts", content="10.0.0.1 c1\n"),
    o.RemoveFile(owner="lab", path="/run/vtopo/vfth0/hosts"),
    o.RemoveNamespaceFiles(owner="node c1", paths=("/run/vtopo/ns/vfth0/c1.mnt", "/run/vtopo/ns/vfth0/c1.uts")),
    o.DeleteNamespace(owner="node c1", name="vfth0-c1"),
    o.StartProcess(owner="node vm", name="qemu vm", argv=("/usr/bin/qemu-system-x86_64", "-name", "vm"),
                   netns=None, pid_file="/run/vtopo/vfth0/vm/qemu.pid", ready_path="/run/vtopo/vfth0/vm/qmp",
                   ready_banner='{"QMP"', user="vtopo-qemu", groups=("kvm",), tap_fds=((3, "vfth0-vm1-0"),),
                   tun_fds=((4, "vfth0-vm1-1"),), device_fds=((5, "/dev/vhost-net"),),
                   image_fds=((6, "/var/lib/vtopo/disk.qcow2"),),
                   directory="/run/vtopo/vfth0/vm"),
    o.StartProcess(owner="node r1", name="zebra", argv=("/usr/lib/frr/zebra", "-d"), netns="vfth0-c1",
                   pid_file="/run/vtopo/vfth0/r1/zebra.pid"),
    o.StartProcess(owner="node r2", name="zebra", argv=("/usr/lib/frr/zebra", "-d", "-u", "root"), netns="vfth0-c2",
                   pid_file="/run/vtopo/vfth0/r2/zebra.pid",
                   enter=("nsenter", "--user=/run/vtopo/ns/vfth0/user", "--net=/run/netns/vfth0-c2",
                          "--mount=/run/vtopo/ns/vfth0/c2.mnt", "--uts=/run/vtopo/ns/vfth0/c2.uts",
                          "--wdns=/var/log/frr", "--")),
    o.StopProcess(owner="node r1", name="zebra", pid_file="/run/vtopo/vfth0/r1/zebra.pid", match="/usr/lib/frr/zebra",
                  netns="vfth0-c1"),
    o.SignalProcesses(owner="node c1", netns="vfth0-c1", signal=o.Signal.STOP),
    o.SignalProcesses(owner="node c1", netns="vfth0-c1", signal=o.Signal.CONT),
    o.SignalProcesses(owner="node c1", netns="vfth0-c1", signal=o.Signal.KILL),
    o.LoadConfig(owner="node r1", node="r1", netns="vfth0-c1",
                 argv=("nsenter", "--net=/run/netns/vfth0-c1", "--", "vtysh", "-b")),
    o.RunCommand(owner="node h1", node="h1", command="echo hi", argv=("sh", "-c", "echo hi")),
    o.ReadState(owner="node r1", node="r1", command="vtysh -c 'show running-config'",
                argv=("nsenter", "--net=/run/netns/vfth0-c1", "--", "vtysh", "-c", "show running-config")),
    o.StartDomain(owner="node vm", name="vfth0-vm", uri="qemu:///system", xml="<domain>\n<name>vfth0-vm</name>\n</domain>",
                  vhost=True),
    o.ResumeDomain(owner="node vm", name="vfth0-vm", uri="qemu:///system"),
    o.DestroyDomain(owner="node vm", name="vfth0-vm", uri="qemu:///system"),
]


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Applier, Kernel]]:
    applier, kernel = record_kernel(monkeypatch, PREFIX)
    try:
        yield applier, kernel
    finally:
        applier.close()


def kernel_effects(applier: Applier, kernel: Kernel, op: o.Op) -> list[Effect]:
    kernel.effects.clear()
    applier.apply(op)
    return normalized(list(kernel.effects))


def normalized(effects: list[Effect]) -> list[Effect]:
    """A veth pair is one pair of ends, each with its namespace and queues, whichever end's namespace asked for it."""
    result = []
    for effect in effects:
        if effect[:2] == ("link", "new") and dict(effect[3]).get("IFLA_LINKINFO.IFLA_INFO_KIND") == "veth":
            fields = dict(effect[3])
            ends = {veth_end(fields, "", effect[2]), veth_end(fields, "IFLA_LINKINFO.IFLA_INFO_DATA.VETH_INFO_PEER.",
                                                               effect[2])}
            effect = ("veth", frozenset(ends), fields.get("IFLA_MASTER"), len(fields))
        result.append(effect)
    return result


def veth_end(fields: dict[str, Any], prefix: str, asked_in: str | None) -> tuple[Any, ...]:
    """The end of a veth request's `fields` whose attributes start with `prefix`: its name, namespace and queues."""
    return (fields[prefix + "IFLA_IFNAME"], fields.get(prefix + "IFLA_NET_NS_FD", asked_in),
            fields.get(prefix + "IFLA_NUM_TX_QUEUES"), fields.get(prefix + "IFLA_NUM_RX_QUEUES"))


# ---------------------------------------------------------------- what the two sides must share


def comparable(effects: list[Effect]) -> list[Effect]:
    """Effects as both sides state them: nft's JSON as the words of the nft commands that ask the same, netem's loss
    as a number, tbf's parent (root unless netem is) stated, and the processes of a namespace found and each sent a
    signal as that signal sent to the namespace's processes (once, or again until none is left)."""
    result: list[Effect] = []
    found_in = None
    for effect in effects:
        match effect:
            case ("netns.pids_in", (netns,), ()):
                found_in = netns
            case ("processes.signal_each", (pids, signal), ()):
                assert found_in is not None and pids == [4242, 4243], effect
                result.append(("signal", found_in, signal.name.removeprefix("SIG"), False))
            case ("netns.end_processes_in", (names,), ()):
                [netns] = names
                result.append(("signal", netns, "KILL", True))
            case ("nft", commands):
                result += [("nft words", words) for words in nft_words(commands)]
            case ("qdisc", netns, device, "netem", options):
                result.append(("qdisc", netns, device, "netem", tuple(sorted(
                    (key, float(value) if key == "loss" else value) for key, value in options))))
            case ("qdisc", netns, device, "tbf", options):
                fields = dict(options)
                fields.setdefault("parent", 0xFFFFFFFF)
                result.append(("qdisc", netns, device, "tbf", tuple(sorted(fields.items()))))
            case _:
                result.append(effect)
    return result


def nft_words(commands: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """nft's JSON commands as the words of `nft add ...` that ask the same."""
    lines = []
    for command in commands:
        (verb, thing), = command.items()
        (kind, spec), = thing.items()
        if kind == "table":
            lines.append((verb, "table", spec["family"], spec["name"]))
        elif kind == "chain":
            lines.append((verb, "chain", spec["family"], spec["table"], spec["name"],
                          f"{{ type {spec['type']} hook {spec['hook']} priority {spec['prio']}; policy "
                          f"{spec['policy']}; }}"))
        else:
            lines.append((verb, "rule", spec["family"], spec["table"], spec["chain"],
                          *(word for expression in spec["expr"] for word in _nft_expression(expression))))
    return lines


def _nft_expression(expression: dict[str, Any]) -> list[str]:
    (kind, value), = expression.items()
    if kind != "match":
        return [kind]
    left = value["left"]
    if "meta" in left:
        words = [left["meta"]["key"]]
    elif "payload" in left:
        words = [left["payload"]["protocol"], left["payload"]["field"]]
    else:
        words = ["fib", *" . ".join(left["fib"]["flags"]).split(), left["fib"]["result"]]
    right = value["right"]
    shown = "{ " + ", ".join(right["set"]) + " }" if isinstance(right, dict) else right
    return [*words, *([] if value["op"] == "==" else [value["op"]]), shown]


def script_side(op: o.Op) -> list[Effect]:
    return comparable(normalized(script_effects(op, PREFIX)))


def kernel_side(applier: Applier, kernel: Kernel, op: o.Op) -> list[Effect]:
    return comparable(kernel_effects(applier, kernel, op))


def assert_faithful(applier: Applier, kernel: Kernel, op: o.Op) -> None:
    """What the kernel and the tools were asked is what the script says. Where the kernel side calls into a module of
    the host (files, processes, namespaces, libvirt), whose work no kernel request shows as data, the script's lines
    must name what the call names, and say what it does (a directory's mode, a file's content, a process's argv)."""
    done = kernel_side(applier, kernel, op)
    said = script_side(op)
    calls = [effect for effect in done if _is_call(effect, op)]
    shell = [effect for effect in said
             if effect[0] in ("shell", "file", "comment", "tolerant") or _is_call(effect, op)]
    assert [e for e in done if e not in calls] == [e for e in said if e not in shell], op
    _assert_calls_said(op, calls, shell)


def _is_call(effect: Effect, op: o.Op) -> bool:
    """A call into a host module, or (for a process start) a tap opened for the process to inherit."""
    return "." in effect[0] or effect[0] in ("unlink", "read pid", "open") or (
        effect[0] == "tun" and isinstance(op, o.StartProcess))


NAMED_IN_SCRIPT = ("netns.delete_netns", "maker.", "namespace_maker.", "oci_engine.", "files.", "shutil.", "unlink", "open", "read pid",
                   "tun", "domains.start", "domains.resume", "domains.destroy")


def _assert_calls_said(op: o.Op, calls: list[Effect], said: list[Effect]) -> None:
    words = [word for effect in said for word in _words(effect)]
    for call in calls:
        if call[0].startswith(NAMED_IN_SCRIPT):  # their arguments, not the names of keyword arguments
            for value in _values(call[1] if isinstance(call[1], tuple) else call[1:]):
                if isinstance(value, str) and value not in ("", "r", "rw"):
                    assert any(value in word for word in words), (op, call, said)
    if isinstance(op, o.IsolateNode):  # the host's files read-only inside, or not, as the script says
        [node] = [call[1][1] for call in calls if call[0] == "maker.isolate"]
        sealed = any("mount -o remount,bind,ro=recursive /;" in word for word in words)
        assert node.host_read_only == sealed == op.host_read_only, op
    if isinstance(op, o.MakeDirectory):
        [(_, (path, mode), _kw), *rest] = calls
        assert ("shell", None, ("chmod", f"{mode:o}", path)) in said
        assert [call[1] for call in rest] == ([(path, op.user or op.ids)] if op.user or op.ids else [])
    if isinstance(op, (o.WriteFile, o.WriteHostsFile)):
        [call] = calls
        assert ("file", op.path, op.content) in said
        assert call[0] == ("files.write_file" if isinstance(op, o.WriteHostsFile) else "files.write_for_daemon")
        script = isinstance(op, o.WriteScript)  # run by a daemon: executable, and said so
        assert (("shell", None, ("chmod", "750", op.path)) in said) == script
        if not isinstance(op, o.WriteHostsFile):
            assert call[1] == (op.path, op.content, script)
    if isinstance(op, (o.RunCommand, o.LoadConfig, o.ReadState)):
        [(name, (argv, _seconds), _kwargs)] = calls
        [command] = [_command(effect) for effect in said if effect[0] == "shell"]
        assert list(command) == argv == list(op.argv), op
        # a load goes on past the lines FRR skips, in the script as on the host; a startup command's failure stops both
        tolerant = isinstance(op, o.LoadConfig)
        assert name == ("processes.run_to_end" if tolerant else "processes.run_command"), op
        assert (("tolerant",) in said) == tolerant, op
    if isinstance(op, o.StartProcess):
        assert_start_said(op, calls, said)


def _command(effect: Effect) -> list[str]:
    """A shell line's words, with the `ip netns exec` the reader took apart put back."""
    _, netns, words = effect
    return (["ip", "netns", "exec", netns] if netns else []) + list(words)


def _values(value: Any) -> Iterator[Any]:
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from _values(item)
    elif isinstance(value, dict):
        yield from _values(list(value.items()))
    elif isinstance(value, Path):
        yield str(value)
    else:
        yield value


def _words(effect: Effect) -> list[str]:
    return [str(value) for value in _values(effect) if value is not None]


def assert_start_said(op: o.StartProcess, calls: list[Effect], said: list[Effect]) -> None:
    """The script runs the argv the kernel side starts, behind the same namespace entry and privilege drop, and
    redirects exactly the descriptors the kernel side hands over."""
    [(_, (argv, netns, *_rest), kwargs)] = [call for call in calls if call[0] == "processes.start_daemon"]
    options = dict(kwargs)
    [command] = [_command(effect) for effect in said if effect[0] == "shell"]
    assert argv == list(op.argv) and netns == op.netns
    if op.user:
        assert command[:5] == ["(", "umask", "077", "&&", "exec"] and command[-2:] == [")", "&"]
        assert options["umask"] == 0o077
        command = command[5:-2]
    if op.directory:
        assert command[:4] == ["(", "cd", op.directory, "&&"] and command[-1] == ")"
        assert options["cwd"] == Path(op.directory)
        command = command[4:-1]
    assert tuple(options.get("enter", ())) == op.enter
    launch = [*(op.enter or (["ip", "netns", "exec", op.netns] if op.netns else [])), *options["privileges"]]
    assert command[:len(launch) + len(argv)] == launch + argv
    redirected = {int(word.split("<")[0]) for word in command[len(launch) + len(argv):] if "<" in word}
    assert redirected == set(options["open_files"]) | set(options["inherited_fds"])


def plans() -> list[tuple[str, list[o.Op]]]:
    """Each shipped lab's ops, their teardown and what `vtopo save` reads of it, on this kind of machine and on one
    with kernel OVS, KVM and 802.1Q VLAN devices."""
    cases = []
    for lab_file in LABS:
        for facts in (HostFacts(), HostFacts(ovs_datapath="system", accel="kvm", vhost_net=True, vlan_devices=True)):
            topology = open_lab(lab_file).topology
            plan = compile_plan(resolve(topology, registry(), facts))
            saved: list[o.Op] = [*save_ops(resolve(topology, registry(), facts).valid().lab, ())]
            cases.append((lab_file.stem, plan.ops + plan.teardown() + saved))
    return cases


PLANS = plans()


@pytest.mark.parametrize("op", SPECIMENS, ids=[f"{op.name_of_op}-{i}" for i, op in enumerate(SPECIMENS)])
def test_a_specimen_of_every_op_is_explained_as_it_runs(op: o.Op, recorded: tuple[Applier, Kernel]) -> None:
    assert_faithful(*recorded, op)


@pytest.mark.parametrize("case", PLANS, ids=[f"{name}-{i % 2}" for i, (name, _) in enumerate(PLANS)])
def test_every_op_of_every_shipped_lab_is_explained_as_it_runs(case: tuple[str, list[o.Op]],
                                                               recorded: tuple[Applier, Kernel]) -> None:
    _, ops = case
    for op in ops:
        assert_faithful(*recorded, op)


def test_the_specimens_cover_every_op() -> None:
    assert {type(op) for op in SPECIMENS} == set(o.OP_TYPES.values())


def test_one_ovs_transaction_runs_what_each_op_explains(recorded: tuple[Applier, Kernel]) -> None:
    applier, kernel = recorded
    batch = [op for op in SPECIMENS if isinstance(op, (o.OvsAddBridge, o.OvsAddPort))]
    kernel.effects.clear()
    applier.apply_ovs_batch(batch)
    [(verb, argv, stdin)] = kernel.effects
    assert verb == "run" and stdin is None
    explained = [" ".join(shlex.split(line)[1:]) for op in batch for line in o.script_of(op)]
    assert " ".join(argv).split(" -- ")[1:] == " -- ".join(explained).split(" -- ")


# ---------------------------------------------------------------- a change to a running lab, whole

LIVE_LABS = ("bridge-veth", "l2-vs-l3", "router-on-a-stick", "vm-router")


def running_record(lab_file: Path, directory: Path) -> LabRecord:
    """The record a deploy of the lab under PREFIX keeps, in `directory`, with nothing of it on any host."""
    topology = open_lab(lab_file).topology
    resolved = resolve(replace(topology, prefix=PREFIX), registry(), HostFacts()).valid()
    record = LabRecord(directory / PREFIX)
    record.directory.mkdir()
    record.write({"name": topology.name, "prefix": PREFIX, "facts": asdict(HostFacts()), "owner": 0,
                  "consent": consent_to_json(Trust()), "topology": io.to_document(topology),
                  SHAPED_LINKS: {link: shaped.to_json() for link, shaped in shaped_links(resolved.this_site).items()}})
    return record


Change = Callable[..., str]


def live_changes(topology: Topology) -> list[tuple[str, Change]]:
    """Every change `vtopo node` and `vtopo link` make, each in an order the running lab allows (a node is stopped
    before it is started, a link taken down before it is brought up), on each node and link of the lab."""
    changes: list[tuple[str, Change]] = []
    for node in sorted(node.name for node in topology.nodes.values()):
        for action in ("stop", "start", "restart"):
            changes.append((f"{action} {node}", partial(operate_node, node=node, action=action)))
    for link in topology.links.values():
        a, b = (f"{topology.nodes[end.node].name}:{end.port}" for end in link.ends)
        changes += [(f"link {a} {b} down", partial(set_link_state, a=a, b=b, up=False)),
                    (f"link {a} {b} up", partial(set_link_state, a=a, b=b, up=True)),
                    (f"link {a} {b} set", partial(set_link_impairment, a=a, b=b,
                                                  change=ImpairmentChange(rate_mbit=10, delay_ms=5)))]
    return changes


@pytest.fixture(name="applied")
def fixture_applied(monkeypatch: pytest.MonkeyPatch, recorded: tuple[Applier, Kernel]) -> list[Step]:
    """Each op a live change's Applier is given (on the recorded kernel), as it is given: applied, or put back."""
    applier, _ = recorded
    steps: list[Step] = []
    putting_back: list[o.Op] = []
    apply, put_back = Applier.apply, Applier.put_back

    def applying(self: Applier, op: o.Op) -> None:
        if not putting_back:
            steps.append(Step(op))
        apply(self, op)

    def putting(self: Applier, op: o.Op) -> None:
        steps.append(Step(op, put_back=True))
        putting_back.append(op)
        try:
            put_back(self, op)
        finally:
            putting_back.pop()

    monkeypatch.setattr(Applier, "apply", applying)
    monkeypatch.setattr(Applier, "put_back", putting)
    monkeypatch.setattr(lab_operations, "Applier", lambda prefix, owner=0: applier)
    monkeypatch.setattr(applier, "close", lambda: None)  # the fixture's, closed once when the test ends
    return steps


@pytest.mark.parametrize("lab", LIVE_LABS)
def test_each_live_change_runs_the_ops_its_explanation_prints_and_each_as_explained(
        lab: str, applied: list[Step], recorded: tuple[Applier, Kernel], tmp_path: Path) -> None:
    """`vtopo node ... --explain` and `vtopo link ... --explain` print the script of exactly the ops the change then
    applies, in order, an address or route put back said to be tolerated where it is (tests/labs/
    test_operate_explained.py runs both on a deployed lab), and each op is faithful to its script."""
    record = running_record(TOPOLOGIES / f"{lab}.vtopo", tmp_path)
    ran = 0
    for name, change in live_changes(record.topology()):
        try:
            script = change(record, explain=True)
        except OperateError:  # a node that cannot be stopped (a switch), or not in the state the change needs
            continue
        applied.clear()
        change(record)
        steps = list(applied)
        header = 3  # #!/bin/sh, what it is, set -e
        assert script.splitlines()[header:] == LiveChange(steps).script(), name
        for step in steps:
            assert_faithful(*recorded, step.op)
        ran += 1
    assert ran >= 6
