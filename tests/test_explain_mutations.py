"""The faithfulness test can fail: each mutation below breaks one side of a copy of vtopo on purpose (what the kernel
host asks, what netlink packs, or what the script says), and tests/test_explain_faithful.py, run on that copy, must
catch it. The unbroken copy passes, so it is the mutation that fails it, not the copying."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
COPIED = ("app", "plugins", "topologies", "resources", "setup.cfg", "pyproject.toml", "tests/conftest.py",
          "tests/recorded_kernel.py", "tests/script_reader.py", "tests/test_explain_faithful.py")

MUTATIONS = {
    "a bridge's STP flag inverted in the kernel host": (
        "app/vtopo/host/kernel_host.py", "add_bridge(name, None, stp=stp,", "add_bridge(name, None, stp=not stp,"),
    "a bridge's two timers exchanged in the kernel host": (
        "app/vtopo/host/kernel_host.py", "forward_delay=forward_delay, ageing_time=ageing_time,",
        "forward_delay=ageing_time, ageing_time=forward_delay,"),
    "1 added to every MTU in netlink": (
        "app/vtopo/host/rtnl_wire.py", "u32(IFLA_MTU, value)", "u32(IFLA_MTU, value + 1)"),
    "routes tagged proto boot by netlink": (
        "app/vtopo/host/netlink.py", "wire.route(network, via, _RT_TABLE_MAIN, protocol,",
        "wire.route(network, via, _RT_TABLE_MAIN, RouteProtocol.BOOT,"),
    "routes explained as proto boot": (
        "app/vtopo/ops/script.py", '"proto", protocol.word)', '"proto", "boot")'),
    "STP explained as off whatever it is": (
        "app/vtopo/ops/script.py", '"stp_state", str(int(stp)),', '"stp_state", "0",'),
    "IPv6 addresses made with duplicate address detection": (
        "app/vtopo/host/kernel_host.py", "add_address(name, netns, cidr, nodad=nodad)",
        "add_address(name, netns, cidr, nodad=False)"),
    "netem's delay in the wrong unit": (
        "app/vtopo/host/netlink.py", "delay=round(delay_ms * 1000)", "delay=round(delay_ms * 100)"),
    "a veth's peer left in the first end's namespace": (
        "app/vtopo/host/netlink.py",
        "peer_link = wire.attribute(wire.VETH_INFO_PEER, _named_link(peer, *placement, *sized))",
        "peer_link = wire.attribute(wire.VETH_INFO_PEER, _named_link(peer, *sized))"),
    "a veth's ends made with the kernel's default queues, one per CPU, by netlink": (
        "app/vtopo/host/netlink.py", "sized = [wire.queues(queues)] if queues else []", "sized = []"),
    "a veth's queues explained as one more than made": (
        "app/vtopo/ops/script.py", 'sized = ["numtxqueues", str(queues), "numrxqueues", str(queues)]',
        'sized = ["numtxqueues", str(queues + 1), "numrxqueues", str(queues + 1)]'),
    "VLAN filtering left off by the kernel host": (
        "app/vtopo/host/kernel_host.py", "ageing_time=ageing_time,\n                                vlan_filtering=vlan_filtering)",
        "ageing_time=ageing_time,\n                                vlan_filtering=False)"),
    "a native VLAN sent tagged by netlink": (
        "app/vtopo/host/netlink.py", "(wire.BRIDGE_VLAN_INFO_UNTAGGED if untagged else 0)", "0"),
    "trunk VLANs explained as untagged": (
        "app/vtopo/ops/script.py", '*(["untagged"] if untagged else [])', '"untagged"'),
    "a subinterface tagged with the wrong VLAN by netlink": (
        "app/vtopo/host/rtnl_wire.py", "u16(IFLA_VLAN_ID, vid)", "u16(IFLA_VLAN_ID, vid + 1)"),
    "a subinterface made on the wrong parent by the kernel host": (
        "app/vtopo/host/kernel_host.py", "self.netlink.add_vlan(name, netns, parent, vid)",
        "self.netlink.add_vlan(name, netns, name, vid)"),
    "a subinterface's VLAN explained as another": (
        "app/vtopo/ops/script.py", '"type", LinkType.VLAN, "id", str(vid)', '"type", LinkType.VLAN, "id", "1"'),
    "a subinterface made in the host's namespace by netlink": (
        "app/vtopo/host/netlink.py", "self._change_link(netns, _named_link(name, parent_link, wire.vlan_kind(vid))",
        "self._change_link(None, _named_link(name, parent_link, wire.vlan_kind(vid))"),
    "a stopped node's processes resumed by the kernel host": (
        "app/vtopo/host/kernel_host.py", 'Signals[f"SIG{signal}"]', "Signals.SIGCONT"),
    "a restarted node's processes killed once by the kernel host, not until none is left": (
        "app/vtopo/host/kernel_host.py", "namespaces.end_processes_in({netns})",
        "processes.signal_each(namespaces.pids_in(netns), Signals.SIGKILL)"),
    "a tunnel's carrier explained as kept whatever it is": (
        "app/vtopo/ops/script.py", '"protodown", "off" if carrier else "on"', '"protodown", "off"'),
    "a tunnel's carrier cut by netlink where it should be kept": (
        "app/vtopo/host/netlink.py", "[wire.proto_down(not carrier)]", "[wire.proto_down(True)]"),
    "the qdiscs of a link's impairment before a live change left in place by netlink": (
        "app/vtopo/host/netlink.py", 'ipr.tc("del", index=index, parent=_TC_H_ROOT)', "pass"),
    "a node's state read by another command than the one explained, by the kernel host": (
        "app/vtopo/host/kernel_host.py", "processes.run_command(list(argv), READ_SECONDS, whole=True, owner=",
        "processes.run_command(list(argv[1:]), READ_SECONDS, whole=True, owner="),
    "what `vtopo save` reads explained as another command": (
        "app/vtopo/ops/script.py", 'reads it back into the lab", sh(*argv))', 'reads it back into the lab", sh(*argv[:-1]))'),
    "a live change's addresses and routes put back as new ones, where its explanation tolerates them there still": (
        "app/vtopo/lab_operations.py", "(applier.put_back if step.put_back else applier.apply)(step.op)",
        "applier.apply(step.op)"),
    "a live change's last op left out when it runs": (
        "app/vtopo/lab_operations.py", "    for step in change.steps:\n", "    for step in change.steps[:-1]:\n"),
    "a MAC address dropped by the kernel host": (
        "app/vtopo/host/kernel_host.py", "self.netlink.set_link(name, netns, mtu=mtu, mac=mac,",
        "self.netlink.set_link(name, netns, mtu=mtu, mac=None,"),
}


def faithfulness_on_a_copy(tmp_path: Path, mutation: tuple[str, str, str] | None) -> subprocess.CompletedProcess[str]:
    for name in COPIED:
        source, target = CHECKOUT / name, tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target)
    if mutation is not None:
        path, original, broken = mutation
        text = (tmp_path / path).read_text()
        assert text.count(original) == 1, f"the mutation's text is no longer in {path}: update it"
        (tmp_path / path).write_text(text.replace(original, broken))
    environment = {**os.environ, "PYTHONPATH": f"{tmp_path / 'app'}:{tmp_path / 'plugins'}",
                   "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "tests/test_explain_faithful.py"], cwd=tmp_path, env=environment, capture_output=True,
                          text=True, timeout=300)


def test_the_unbroken_copy_passes(tmp_path: Path) -> None:
    run = faithfulness_on_a_copy(tmp_path, None)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=list(MUTATIONS))
def test_the_faithfulness_test_catches(mutation: str, tmp_path: Path) -> None:
    run = faithfulness_on_a_copy(tmp_path, MUTATIONS[mutation])
    assert run.returncode == 1 and " failed" in run.stdout, run.stdout[-3000:] + run.stderr[-3000:]
