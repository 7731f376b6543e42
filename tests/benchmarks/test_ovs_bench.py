"""TCP between two containers through Open vSwitch as vtopo sets it up, against a Linux bridge, in the same run.

Both labs are deployed by vtopo and stay up together; trials alternate (bridge, OVS, bridge, ...) so drift hits both
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
            "ovs-veth": ("ovsbench-veth", "ov", 84), "ovs-afxdp": ("ovsbench-xdp", "ox", 83)}
SETTINGS = {"ovs-veth": {"ports": "system"}, "ovs-afxdp": {"ports": "afxdp"}}  # the opt-in port types
LABELS = {"bridge": "Linux bridge", "ovs": "OVS, vtopo's defaults (internal ports)",
          "ovs-veth": "OVS, `ports: system` (veths)", "ovs-afxdp": "OVS, `ports: afxdp` (veths read with AF_XDP)"}


@dataclass(frozen=True)
class Trial:
    bits_per_second: float
    retransmits: int


def two_containers(kind: str) -> Topology:
    name, prefix, octet = SWITCHES[kind]
    topology = Topology(name=name, prefix=prefix)
    topology.add_node(Node(id="sw", name="sw", kind=kind.split("-")[0], settings=SETTINGS.get(kind, {})))
    for port, node in enumerate(("c1", "c2"), start=1):
        topology.add_node(Node(id=node, name=node, kind="container"))
        topology.add_link(Link(id=f"{node}-sw", a=Endpoint(node, "eth0",
                                                           Interface(addresses=[f"10.{octet}.0.{port}/24"])),
                               b=Endpoint("sw", f"p{port}")))
    return topology


@pytest.fixture(scope="module")
def labs() -> Iterator[dict[str, DeployedLab]]:
    deployer = Deployer()
    deployed: dict[str, DeployedLab] = {}
    try:
        for kind in SWITCHES:
            topology = two_containers(kind)
            deployer.deploy(topology)
            deployed[kind] = DeployedLab.find(topology.name)
        yield deployed
    finally:
        for kind in deployed:
            deployer.destroy(SWITCHES[kind][0])


def iperf3(lab: DeployedLab, kind: str) -> Trial:
    server_address = f"10.{SWITCHES[kind][2]}.0.2"
    server = subprocess.Popen(lab.command_in("c2", ["iperf3", "-s", "-1", "-p", "5320"]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        out = subprocess.run(lab.command_in("c1", ["iperf3", "-c", server_address, "-p", "5320", "-t", str(SECONDS),
                                                   "-J", "--connect-timeout", "3000"]),
                             capture_output=True, text=True, timeout=SECONDS + 30).stdout
        report = json.loads(out or "{}")
        assert "error" not in report and "end" in report, f"{kind}: {report.get('error', out[-300:])}"
        return Trial(float(report["end"]["sum_received"]["bits_per_second"]),
                     int(report["end"]["sum_sent"].get("retransmits", 0)))
    finally:
        server.kill()
        server.wait()


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
        print(f"{LABELS[kind]:<46} {summary(trials[kind])}; / bridge = {means[kind] / means['bridge']:.3f}")
    print("target: OVS / bridge >= 0.25 with retransmits near zero")
    write_fragment("ovs", ovs_markdown(trials, means, settings, facts, (min(loads), max(loads))))
    assert all(t.bits_per_second > 1e6 for kind in trials for t in trials[kind])


def ovs_markdown(trials: dict[str, list[Trial]], means: dict[str, float], settings: str, facts: str,
                 loads: tuple[float, float]) -> str:
    lines = ["### Open vSwitch against a Linux bridge", "", facts, "",
             f"TCP between two containers (iperf3, {TRIALS} trials of {SECONDS} s each, the switches alternating, load "
             f"{loads[0]:.2f}-{loads[1]:.2f}). OVS runs on its userspace datapath as vtopo set it up: {settings}.", "",
             "| switch | mean | trials | retransmits | / bridge |", "|---|---|---|---|---|"]
    for kind in SWITCHES:
        rates = ", ".join(f"{t.bits_per_second / 1e9:.2f}" for t in trials[kind])
        retransmits = ", ".join(str(t.retransmits) for t in trials[kind])
        lines.append(f"| {LABELS[kind]} | {means[kind] / 1e9:.2f} Gb/s | {rates} | {retransmits} | "
                     f"{means[kind] / means['bridge']:.2f} |")
    return "\n".join(lines)
