"""TCP through Open vSwitch as vtopo sets it up, against a Linux bridge, in the same run: between two containers,
and from a container to a VM (the built-in guest, whose `iperf3 -s` always runs).

All labs are deployed by vtopo and stay up together; trials alternate (bridge, OVS, bridge, ...) so drift hits both
alike. Prints throughput and retransmits per trial, the means and the ratio, and writes them into the README's
performance section; asserts only that TCP works.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.report import machine_facts, write_fragment
from vtopo.deployed import DeployedLab
from vtopo.host import ovs
from vtopo.host.deployer import Deployer
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

TRIALS = 3
SECONDS = 5
SWITCHES = {"bridge": ("ovsbench-br", "ob", 81), "ovs": ("ovsbench-ovs", "oo", 82),
            "ovs-veth": ("ovsbench-veth", "ov", 84), "ovs-afxdp": ("ovsbench-xdp", "ox", 83),
            "bridge-vm": ("ovsbench-brvm", "obv", 85), "ovs-vm": ("ovsbench-ovsvm", "oov", 86)}
SETTINGS = {"ovs-veth": {"ports": "system"}, "ovs-afxdp": {"ports": "afxdp"}}  # the opt-in port types
LABELS = {"bridge": "Linux bridge", "ovs": "OVS, vtopo's defaults (internal ports)",
          "ovs-veth": "OVS, `ports: system` (veths)", "ovs-afxdp": "OVS, `ports: afxdp` (veths read with AF_XDP)",
          "bridge-vm": "Linux bridge", "ovs-vm": "OVS, vtopo's defaults (the VM's tap as a system port)"}
BASELINE = {"bridge": "bridge", "ovs": "bridge", "ovs-veth": "bridge", "ovs-afxdp": "bridge",
            "bridge-vm": "bridge-vm", "ovs-vm": "bridge-vm"}
GUEST_IPERF3_PORT = 5201
BOOT_SECONDS = 120


@dataclass(frozen=True)
class Trial:
    bits_per_second: float
    retransmits: int


def to_vm(kind: str) -> bool:
    return kind.endswith("-vm")


def two_nodes(kind: str) -> Topology:
    """c1 and c2 (a container, or a VM for the -vm cases) on one switch; c2 serves iperf3."""
    name, prefix, octet = SWITCHES[kind]
    topology = Topology(name=name, prefix=prefix)
    topology.add_node(Node(id="sw", name="sw", kind=kind.split("-")[0], settings=SETTINGS.get(kind, {})))
    for port, (node, node_kind) in enumerate((("c1", "container"), ("c2", "vm" if to_vm(kind) else "container")),
                                             start=1):
        topology.add_node(Node(id=node, name=node, kind=node_kind))
        topology.add_link(Link(id=f"{node}-sw", a=Endpoint(node, "nic0" if node_kind == "vm" else "eth0",
                                                           Interface(addresses=[f"10.{octet}.0.{port}/24"])),
                               b=Endpoint("sw", f"p{port}")))
    return topology


def wait_for_guest(lab: DeployedLab) -> None:
    console = Path(lab.context.names.node_dir("c2")) / "console.log"
    deadline = time.monotonic() + BOOT_SECONDS
    while not (console.exists() and "vtopo-guest ready" in console.read_text(errors="replace")):
        assert time.monotonic() < deadline, f"{lab.name}: the VM did not boot within {BOOT_SECONDS} s"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def labs() -> Iterator[dict[str, DeployedLab]]:
    deployer = Deployer()
    deployed: dict[str, DeployedLab] = {}
    try:
        for kind in SWITCHES:
            topology = two_nodes(kind)
            deployer.deploy(topology)
            deployed[kind] = DeployedLab.find(topology.name)
            if to_vm(kind):
                wait_for_guest(deployed[kind])
        yield deployed
    finally:
        for kind in deployed:
            deployer.destroy(SWITCHES[kind][0])


def iperf3(lab: DeployedLab, kind: str) -> Trial:
    if to_vm(kind):
        return iperf3_client(lab, kind, GUEST_IPERF3_PORT)
    server = subprocess.Popen(lab.command_in("c2", ["iperf3", "-s", "-1", "-p", "5320"]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        return iperf3_client(lab, kind, 5320)
    finally:
        server.kill()
        server.wait()


def iperf3_client(lab: DeployedLab, kind: str, port: int) -> Trial:
    out = subprocess.run(lab.command_in("c1", ["iperf3", "-c", f"10.{SWITCHES[kind][2]}.0.2", "-p", str(port),
                                               "-t", str(SECONDS), "-J", "--connect-timeout", "3000"]),
                         capture_output=True, text=True, timeout=SECONDS + 30).stdout
    report = json.loads(out or "{}")
    assert "error" not in report and "end" in report, f"{kind}: {report.get('error', out[-300:])}"
    return Trial(float(report["end"]["sum_received"]["bits_per_second"]),
                 int(report["end"]["sum_sent"].get("retransmits", 0)))


def ovs_settings() -> str:
    """What the running OVS was given: the bridge's datapath and the switch-wide other_config."""
    bridge = ovs.lab_bridges(DeployedLab.find(SWITCHES["ovs"][0]).context.names.prefix)[0]
    datapath = ovs.vsctl([["get", "Bridge", bridge, "datapath_type"]]).strip()
    other_config = ovs.vsctl([["get", "Open_vSwitch", ".", "other_config"]]).strip()
    return f"datapath_type={datapath}, other_config={other_config}"


def summary(trials: list[Trial]) -> str:
    rates = ", ".join(f"{t.bits_per_second / 1e6:.0f}" for t in trials)
    retransmits = ", ".join(str(t.retransmits) for t in trials)
    return (f"mean {statistics.mean(t.bits_per_second for t in trials) / 1e6:8.0f} Mb/s (trials {rates}); "
            f"retransmits {retransmits}")


def test_ovs_defaults_against_a_linux_bridge(labs: dict[str, DeployedLab]) -> None:
    trials: dict[str, list[Trial]] = {kind: [] for kind in SWITCHES}
    facts = machine_facts()
    loads = [os.getloadavg()[0]]
    for _ in range(TRIALS):
        for kind, lab in labs.items():
            trials[kind].append(iperf3(lab, kind))
        loads.append(os.getloadavg()[0])
    means = {kind: statistics.mean(t.bits_per_second for t in trials[kind]) for kind in SWITCHES}
    settings = ovs_settings()
    print(f"\nOVS as vtopo sets it up: {settings}; {TRIALS} x {SECONDS} s each, load {min(loads):.2f}-{max(loads):.2f}")
    for kind in SWITCHES:
        target = "container to VM, " if to_vm(kind) else ""
        print(f"{target}{LABELS[kind]:<46} {summary(trials[kind])}; / bridge = "
              f"{means[kind] / means[BASELINE[kind]]:.3f}")
    print("target: OVS / bridge >= 0.25 with retransmits near zero")
    write_fragment("ovs", ovs_markdown(trials, means, settings, facts, (min(loads), max(loads))))
    assert all(t.bits_per_second > 1e6 for kind in trials for t in trials[kind])


def ovs_markdown(trials: dict[str, list[Trial]], means: dict[str, float], settings: str, facts: str,
                 loads: tuple[float, float]) -> str:
    lines = ["### Open vSwitch against a Linux bridge", "", facts, "",
             f"TCP from container c1 to c2, a container or a VM under TCG (iperf3, {TRIALS} trials of {SECONDS} s "
             f"each, the labs alternating, load {loads[0]:.2f}-{loads[1]:.2f}). OVS runs on its userspace datapath as "
             f"vtopo set it up: {settings}.", "",
             "| c2 | switch | mean | trials | retransmits | / bridge |", "|---|---|---|---|---|---|"]
    for kind in SWITCHES:
        rates = ", ".join(f"{t.bits_per_second / 1e9:.2f}" for t in trials[kind])
        retransmits = ", ".join(str(t.retransmits) for t in trials[kind])
        lines.append(f"| {'VM' if to_vm(kind) else 'container'} | {LABELS[kind]} | {means[kind] / 1e9:.2f} Gb/s | "
                     f"{rates} | {retransmits} | {means[kind] / means[BASELINE[kind]]:.2f} |")
    return "\n".join(lines)
