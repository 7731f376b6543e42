"""Checks and experiments on deployed labs: the shipped checks pass, a broken copy fails the right ones, and
every reference experiment gives a complete table with finite ratios.

The tests of l2-vs-l3 come last: one deploy serves the first two (`shared`), and each broken copy after them takes
its place."""
from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vtopo.checks.engine import Outcome, run_checks
from vtopo.checks.live import LiveProbe
from vtopo.checks.spec import typed_checks
from vtopo.experiment.runner import ExperimentRun
from vtopo.lab import open_lab, registry
from vtopo.model.topology import Topology
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

TEACHING_LABS = ["bridge-veth", "macvlan-bridge", "macvlan-private", "macvlan-vepa", "host-routed-bridges",
                 "ovs-openflow", "macvlan-vs-veth", "router-on-a-stick", "l3-switch"]
CONTAINER_EXPERIMENTS = ["macvlan-vs-veth", "host-routed-bridges", "ovs-openflow"]
VM_EXPERIMENTS = ["vm-tap-vs-macvtap", "vhost-on-off"]
OSPF_CONVERGED_WITHIN_S = 40.0


def _judge(running, topology: Topology) -> dict[str, Outcome]:
    checks, problems = typed_checks(topology, registry())
    assert problems == []
    return {o.check.check.name: o for o in run_checks(checks, LiveProbe(running.lab))}


def _wait_for_ospf(running, topology: Topology) -> None:
    """OSPF needs a few hello intervals after the daemons start; wait for both routes, then judge everything."""
    checks, _ = typed_checks(topology, registry())
    learned = [c for c in checks if c.type.name == "route" and c.params.protocol == "ospf"]
    deadline = time.monotonic() + OSPF_CONVERGED_WITHIN_S
    while not all(o.passed for o in run_checks(learned, LiveProbe(running.lab))):
        assert time.monotonic() < deadline, "OSPF did not converge"
        time.sleep(0.5)


@pytest.mark.parametrize("name", TEACHING_LABS)
def test_the_teaching_labs_pass_their_own_checks(deployed, name):
    running = deployed(name)
    failed = {n: o.verdict.why for n, o in _judge(running, running.topology).items() if not o.passed}
    assert failed == {}


def _host_in_vlan_30(topology: Topology) -> None:
    """h2's switch port put in VLAN 30, which no subinterface of r1 is in: h2 is cut off from its gateway."""
    switch = topology.node_named("s1")
    assert switch is not None
    switch.settings["vlans"]["p2"] = "access 30"


def _no_vlan_20_interface(topology: Topology) -> None:
    """s1 without its SVI in VLAN 20: h3's gateway is nowhere on its VLAN."""
    switch = topology.node_named("s1")
    assert switch is not None
    del switch.settings["svis"]["vlan 20"]


@pytest.mark.parametrize("lab, broken, failing, host, destination", [
    ("router-on-a-stick", _host_in_vlan_30, {"h1 reaches h2 in the other VLAN", "h1 to h2 crosses r1 once",
                                             "h2 reaches h1 over IPv6"}, "h2", "2001:db8:20::1"),
    ("l3-switch", _no_vlan_20_interface, {"h1 reaches h3 in the other VLAN", "h1 to h3 is routed once, by s1",
                                          "h3 reaches h1 over IPv6"}, "h3", "2001:db8:20::1")])
def test_a_broken_vlan_lab_fails_the_checks_across_vlans_naming_the_lost_gateway(deployed, lab, broken, failing, host,
                                                                                 destination):
    topology = open_lab(TOPOLOGIES / f"{lab}.vtopo").topology
    broken(topology)
    outcomes = _judge(deployed(topology), topology)
    assert {name for name, o in outcomes.items() if not o.passed} == failing
    ipv6 = next(name for name in failing if "IPv6" in name)
    assert outcomes[ipv6].verdict.why == (
        f"{host} gets no reply from 2001:db8:10::11 (h1) within 2 s: {host} sends 2001:db8:10::11 to its gateway "
        f"{destination}, but no interface on the wire of {host}:eth0 has that address: set {host}'s gateway to a "
        "router on that wire")


def test_a_private_macvlan_turned_bridge_fails_its_isolation_check(deployed):
    topology = open_lab(TOPOLOGIES / "macvlan-private.vtopo").topology
    topology.update_node("mv", settings={"mode": "bridge"})
    outcome = _judge(deployed(topology), topology)["c1 cannot reach c2"]
    assert not outcome.passed and outcome.verdict.why.startswith("c1 gets replies from 10.0.")


def _assert_complete(result) -> None:
    assert result.cells and all(cell.complete for cell in result.cells), [(c.name, c.errors) for c in result.cells]
    assert result.ratios and all(math.isfinite(r.value) and r.value > 0 for r in result.ratios if not r.not_measurable)
    if result.lab == "vhost-on-off" and not Path("/dev/vhost-net").exists():
        assert [r.not_measurable for r in result.ratios] == 2 * ["neither guest uses vhost-net (this host's "
                                                                 "kernel has no vhost-net)"]
        assert "not measurable here: neither guest uses vhost-net" in result.table()
    else:
        assert not any(r.not_measurable for r in result.ratios)
    assert {"kernel", "cpu", "vm acceleration", "vhost-net", "ovs datapath"} <= set(result.host)
    if result.lab == "ovs-openflow":
        assert any(limitation.startswith("no vhost-user") for limitation in result.limitations)


@pytest.mark.parametrize("name", CONTAINER_EXPERIMENTS + VM_EXPERIMENTS)
def test_reference_experiments_give_a_complete_table(deployed, name):
    running = deployed(name)
    run = ExperimentRun(running.lab, running.topology.experiment, repeats=1, warmup=0, seconds=1)
    assert run.wait_until_answering() == []
    _assert_complete(run.run())


def test_one_command_deploys_runs_and_destroys(tmp_path):
    """`vtopo experiment FILE` on a lab that is not deployed: the table with its ratio, and nothing left after."""
    from residue import snapshot

    before = snapshot()
    done = subprocess.run([sys.executable, "-m", "vtopo", "experiment", str(TOPOLOGIES / "macvlan-vs-veth.vtopo"),
                           "--repeat", "1", "--warmup", "0", "--seconds", "1", "--no-history", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "macvlan bridge vs veth+bridge: macvlan bridge/tcp / veth+bridge/tcp = " in done.stdout
    assert "(published: 94.033 / 94.016 Mb/s = 1.000)" in done.stdout
    assert {p.name for p in tmp_path.iterdir()} == {f"macvlan-vs-veth.experiment.{ext}" for ext in ("csv", "json", "png")}
    assert snapshot() - before == {}


def test_a_lab_written_from_the_readme_alone_deploys_and_behaves_as_it_says(deployed):
    """Two VLANs on an OVS switch, a router on a stick whose subinterfaces also serve DHCP to both, clients set to
    dhcp, and a reach check whose destination holds only a leased address."""
    running = deployed(Path(__file__).parent.parent / "data" / "readme-stick-dhcp.vtopo")
    failed = {n: o.verdict.why for n, o in _judge(running, running.topology).items() if not o.passed}
    assert failed == {}


def test_l2_vs_l3_passes_twenty_checks_in_under_five_seconds(shared):
    running = shared("l2-vs-l3")
    _wait_for_ospf(running, running.topology)
    done = subprocess.run([sys.executable, "-m", "vtopo", "check", str(TOPOLOGIES / "l2-vs-l3.vtopo"), "--json"],
                          capture_output=True, text=True, timeout=60)
    report = json.loads(done.stdout)
    assert done.returncode == 0, [c for c in report["checks"] if not c["passed"]]
    assert len(report["checks"]) == 20 and report["seconds"] < 5.0


def test_a_failed_check_names_the_link_that_is_down_on_the_path(shared):
    from vtopo.lab_operations import set_link_state

    running = shared("l2-vs-l3")
    topology = running.topology
    _wait_for_ospf(running, topology)
    set_link_state("l2-vs-l3", "h3", "lan2", up=False)
    try:
        outcomes = _judge(running, topology)
        reach, path = outcomes["h1 reaches h3"].verdict.why, outcomes["h1 to h3 crosses r1 and r2"].verdict.why
        # r2 asks for h3's MAC address three times, a second apart: the ping's 2 s end first, or r2 gives up first
        ping_says = ("h1 gets no reply from 10.2.0.10 (h3) within 2 s: ",
                     "h1 cannot reach 10.2.0.10 (h3): host unreachable (no answer to ARP/ND): ")
        assert reach in [f"{said}link h3:eth0-lan2:p2 on the path is down: h3:eth0 has no carrier"
                         for said in ping_says], reach
        assert path.startswith("h1 → 10.1.0.1 (r1) → 10.0.12.2 (r2)") and path.endswith(
            ": 10.2.0.10 was not reached: link h3:eth0-lan2:p2 on the path is down: h3:eth0 has no carrier"), path
    finally:  # the tests after this one share the lab
        set_link_state("l2-vs-l3", "h3", "lan2", up=True)
    set_link_state("l2-vs-l3", "r1", "r2", up=False)
    try:
        why = _judge(running, topology)["h1 reaches h3"].verdict.why
        assert why.endswith("r1 has no route to 10.2.0.10: link r1:eth1-r2:eth1 on the path is down: r1:eth1 has "
                            "no carrier"), why
    finally:
        set_link_state("l2-vs-l3", "r1", "r2", up=True)


def test_a_copy_without_the_router_link_fails_the_routing_checks(shared):
    topology = open_lab(TOPOLOGIES / "l2-vs-l3.vtopo").topology
    topology.remove_link("r1-eth1--r2-eth1")
    outcomes = _judge(shared(topology), topology)
    failed = {name for name, o in outcomes.items() if not o.passed}
    assert failed == {"h1 reaches h3", "h2 reaches h3", "h3 reaches h1", "h1 reaches r2's link address",
                      "h1 to h3 crosses r1 and r2", "h3 to h1 crosses r2 first", "r1 is adjacent to r2",
                      "r2 is adjacent to r1", "r1 learned lan2 by OSPF", "r2 learned lan1 by OSPF"}
    assert outcomes["r1 is adjacent to r2"].verdict.why.startswith("r1 has no OSPF neighbour r2")
    assert outcomes["h1 reaches h3"].verdict.why.startswith("h1 ")
    assert "announced" in outcomes["r1 learned lan2 by OSPF"].check.explanation


def test_a_copy_with_a_wrong_mask_fails_only_that_hosts_check(shared):
    topology = open_lab(TOPOLOGIES / "l2-vs-l3.vtopo").topology
    h2_link = topology.links["h2-eth0--lan1-p2"]
    topology.update_link(h2_link.id, a=type(h2_link.a.interface)(addresses=["10.1.0.11/8"]))
    running = shared(topology)
    _wait_for_ospf(running, topology)
    outcomes = _judge(running, topology)
    assert {name for name, o in outcomes.items() if not o.passed} == {"h2 reaches h3"}
    outcome = outcomes["h2 reaches h3"]
    assert outcome.verdict.why.startswith("h2 ") and "10.2.0.10 (h3)" in outcome.verdict.why
    assert ": the mask is wrong: h2:eth0 has 10.1.0.11/8, whose subnet 10.0.0.0/8 takes in 10.2.0.10, so h2 looks " \
           "for 10.2.0.10 on its own wire instead of sending it to a router; the rest of its wire is on " \
           "10.1.0.0/24." in outcome.verdict.why, outcome.verdict.why
    assert outcome.check.explanation.startswith("Like h1, h2 needs a /24 mask")
