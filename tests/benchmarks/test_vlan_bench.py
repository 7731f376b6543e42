"""Deploying 400 containers over 4 VLANs on two Open vSwitch switches joined by a trunk, against the same lab on the
same switches without VLANs, in one run with the two alternating. Prints both deploy and destroy times and their
ratio, and writes them into the README's performance section; asserts only that both labs deploy.

The goal: VLANs cost at most 1.3x the time of the same lab without them.
"""
from __future__ import annotations

import statistics

import pytest

from benchmarks.report import machine_facts, write_fragment
from benchmarks.test_deploy_bench import Timing, seconds, settle, timed
from vtopo.host.deployer import Deployer
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

CONTAINERS = 400
VLANS = (10, 20, 30, 40)
TRIALS = 3
GOAL = 1.3
SWITCHES = ("s1", "s2")
TRUNK_PORT = f"p{CONTAINERS // 2 + 1}"  # after the containers' ports


def two_switches(vlans: bool) -> Topology:
    """CONTAINERS containers, half on s1 and half on s2, joined by a link between the switches' last ports. With
    `vlans`, each container's port is an access port in one of VLANS, in turn, and the link between the switches a
    trunk carrying them all; without, the switches pass every frame as it comes. Each VLAN has a subnet of its own."""
    topology = Topology(name="vlanbench" if vlans else "novlanbench", prefix="qv" if vlans else "qn")
    ports: dict[str, dict[str, str]] = {switch: {} for switch in SWITCHES}
    for index in range(CONTAINERS):
        switch, port, vlan = SWITCHES[index % 2], f"p{index // 2 + 1}", VLANS[index // 2 % len(VLANS)]
        ports[switch][port] = f"access {vlan}"
        topology.add_node(Node(id=f"c{index}", name=f"c{index}", kind="container"))
        topology.add_link(Link(id=f"l{index}", a=Endpoint(f"c{index}", "eth0", Interface(
            addresses=[f"10.{vlan}.{index // 250}.{index % 250 + 1}/16"])), b=Endpoint(switch, port)))
    for switch in SWITCHES:
        ports[switch][TRUNK_PORT] = f"trunk {','.join(map(str, VLANS))}"
        topology.add_node(Node(id=switch, name=switch, kind="ovs", settings={"vlans": ports[switch]} if vlans else {}))
    topology.add_link(Link(id="trunk", a=Endpoint("s1", TRUNK_PORT), b=Endpoint("s2", TRUNK_PORT)))
    return topology


def deploy_and_destroy(deployer: Deployer, topology: Topology) -> Timing:
    settle()
    return timed(lambda: deployer.deploy(topology)), timed(lambda: deployer.destroy(topology.name))


def test_vlans_on_two_ovs_switches_against_the_same_lab_without() -> None:
    facts = machine_facts()
    deployer = Deployer()
    labs = {"without VLANs": two_switches(vlans=False), "4 VLANs and a trunk": two_switches(vlans=True)}
    runs: dict[str, list[Timing]] = {label: [] for label in labs}
    for _ in range(TRIALS):  # alternating, so that both see the same machine
        for label, topology in labs.items():
            runs[label].append(deploy_and_destroy(deployer, topology))
    medians = {label: (statistics.median(t[0] for t in timings), statistics.median(t[1] for t in timings))
               for label, timings in runs.items()}
    (plain, _), (tagged, _) = medians.values()
    print(f"\n{CONTAINERS} containers on two OVS switches joined by a link (median of {TRIALS}, alternating):")
    for label, (deploy, destroy) in medians.items():
        trials = ", ".join(seconds(t[0]) for t in runs[label])
        print(f"  {label:<20} deploy {seconds(deploy):>8} (trials {trials})   destroy {seconds(destroy):>8}")
    print(f"  VLANs / without: {tagged / plain:.2f}x (goal <= {GOAL}x)")
    write_fragment("vlans", vlans_markdown(runs, medians, facts))
    assert all(deploy > 0 for timings in runs.values() for deploy, _ in timings)


def vlans_markdown(runs: dict[str, list[Timing]], medians: dict[str, Timing], facts: str) -> str:
    (plain, plain_destroy), (tagged, tagged_destroy) = medians.values()
    lines = ["### VLANs on Open vSwitch", "", facts, "",
             f"{CONTAINERS} containers, half on each of two OVS switches joined by a link: with each container's port "
             f"an access port in one of {len(VLANS)} VLANs and the link a trunk carrying them all, against the same "
             f"lab with no VLANs set; median of {TRIALS} deploys each, the two alternating. Goal: at most {GOAL}x.", "",
             "| lab | deploy | trials | destroy |", "|---|---|---|---|"]
    for label, (deploy, destroy) in medians.items():
        lines.append(f"| {label} | {seconds(deploy)} | {', '.join(seconds(t[0]) for t in runs[label])} | "
                     f"{seconds(destroy)} |")
    lines += ["", f"VLANs / without: deploy {tagged / plain:.2f}x, destroy {tagged_destroy / plain_destroy:.2f}x."]
    return "\n".join(lines)
