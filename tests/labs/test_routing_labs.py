"""The routing teaching labs deployed for real: each passes all its own checks once its protocol has converged, and a
broken copy of it (the mistake a student makes) fails exactly the checks that mistake breaks, each saying why in a
line that points at the fix. A lab and its broken copy are deployed side by side, once per lab."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass

import pytest

from vtopo.checks.engine import Outcome, run_checks
from vtopo.checks.live import LiveProbe
from vtopo.checks.spec import typed_checks
from vtopo.lab import open_lab, registry
from vtopo.model.topology import Topology
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

CONVERGED_WITHIN_S = 40.0  # RIP's 5 s updates and BGP's 1 s connect retries converge well within this


@dataclass(frozen=True)
class Mistake:
    """A student's mistake: in `router`'s configuration, `wrong` where the lab has `right` ("" adds `wrong`)."""
    router: str
    right: str
    wrong: str
    fails: dict[str, str]  # each check it breaks, and the start of the one line that check says


MISTAKES = {
    "static-routing": Mistake("r2", "ip route 10.1.0.0/24 10.0.12.1\n", "", {
        "h1 reaches h3": "h1 ",
        "h3 reaches h1": "h3 ",
        "r2 routes lan1 via r1": "r2 has no route to 10.1.0.0/24; check that a neighbour announces it",
        "h1 to h3 crosses r1 and r2 and r3": "h1 → r1: 10.3.0.10 (h3) was not reached: on the way back, r2 has no "
                                             "route to 10.1.0.10: neither a static route nor a routing protocol",
    }),
    "rip-ring": Mistake("r3", " network 10.3.0.0/24\n", "", {
        "h1 reaches h3": "h1 ",
        "h3 reaches h1": "h3 ",
        "r1 learned lan3 by RIP": "r1 has no route to 10.3.0.0/24",
        "r2 learned lan3 by RIP": "r2 has no route to 10.3.0.0/24",
        "h1 to h3 crosses r1 and r3": "h1: 10.3.0.10 (h3) was not reached: r1 has no route to 10.3.0.10",
    }),
    "ospf-ring": Mistake("r3", " network 10.0.13.0/30 area 0\n", " network 10.0.13.0/30 area 1\n", {
        "r1 is adjacent to r3": "r1 has no OSPF neighbour r3 (neighbour ids: 2.2.2.2); check the link between them, "
                                "its addresses, areas",
        "r1 learned lan3 by OSPF": "r1 routes 10.3.0.0/24 via 10.0.12.2 on eth1 (ospf), not via 10.0.13.2",
        "r3 learned lan1 by OSPF": "r3 routes 10.1.0.0/24 via 10.0.23.1 on eth2 (ospf), not via 10.0.13.1",
        "h1 to h3 crosses r1 and r3": "h1 → r1 → r2 → r3 → h3: crosses r1, r2, r3, not r1, r3; check the routes",
    }),
    "bgp-two-as": Mistake("r3", "remote-as 65001\n", "remote-as 65003\n", {
        "r2 and r3 peer by eBGP": "r2's BGP session with r3 (10.0.23.2) is ",
        "r3 receives lan1 from AS 65001": "r3's BGP session with r2 (10.0.23.1) is ",
        "r1 and r2 peer by iBGP": "r1 does not receive 10.3.0.0/24 from r2 (it has it from no neighbour); check "
                                  "that r2 announces it",
        "h1 reaches h3": "h1 ",
        "h3 reaches h1": "h3 ",
        "r1 routes lan3 via r2": "r1 has no route to 10.3.0.0/24",
        "h1 to h3 crosses r1 and r2 and r3": "h1: 10.3.0.10 (h3) was not reached: r1 has no route to 10.3.0.10",
    }),
    "ospf-multi-area": Mistake("r3", " network 10.0.23.0/30 area 1\n", " network 10.0.23.0/30 area 0\n", {
        "r2 is adjacent to r3": "r2 has no OSPF neighbour r3 (neighbour ids: 1.1.1.1); check the link between them, "
                                "its addresses, areas",
        "r3 is adjacent to r2": "r3 has no OSPF neighbour r2 (neighbour ids: none)",
        "r1 learned lan3 from the ABR": "r1 has no route to 10.3.0.0/24",
        "r3 learned lan1 from the ABR": "r3 has no route to 10.1.0.0/24",
        "h1 reaches h3": "h1 ",
        "h1 to h3 crosses r1 and r2 and r3": "h1: 10.3.0.10 (h3) was not reached: r1 has no route to 10.3.0.10",
    }),
    "dual-stack-ospf": Mistake("r2", " ipv6 ospf6 area 0\n ipv6 ospf6 network", " ipv6 ospf6 network", {
        "r1 is adjacent to r2 in OSPFv3": "r1 has no OSPFv3 neighbour r2 (neighbour ids: none)",
        "r1 learned lan2 over IPv6": "r1 has no route to 2001:db8:2::/64",
        "r2 learned lan1 over IPv6": "r2 has no route to 2001:db8:1::/64",
        "h1 reaches h2 over IPv6": "h1 ",
        "h2 reaches h1 over IPv6": "h2 ",
        "h1 to h2 over IPv6 crosses r1 and r2": "h1: 2001:db8:2::10 (h2) was not reached: r1 has no route to "
                                                "2001:db8:2::10",
    }),
}


def broken_copy(topology: Topology, mistake: Mistake) -> Topology:
    broken = topology.copy()
    broken.update_lab(name=f"{topology.name}-broken")
    broken.id = f"{topology.id}-broken"
    router = broken.node_named(mistake.router)
    assert router is not None
    config = router.settings["config"]
    assert config.count(mistake.right) == 1, (mistake.right, config)
    broken.update_node(router.id, settings={**router.settings, "config": config.replace(mistake.right, mistake.wrong)})
    return broken


def judge(running, topology: Topology) -> dict[str, Outcome]:
    checks, problems = typed_checks(topology, registry())
    assert problems == []
    return {o.check.check.name: o for o in run_checks(checks, LiveProbe(running.lab))}


def settled(running, topology: Topology, failing: set[str]) -> dict[str, Outcome]:
    """The outcomes once exactly `failing` fail: routing protocols take a few timer rounds after the deploy."""
    deadline = time.monotonic() + CONVERGED_WITHIN_S
    while True:
        outcomes = judge(running, topology)
        failed = {name for name, outcome in outcomes.items() if not outcome.passed}
        if failed == failing or time.monotonic() > deadline:
            assert failed == failing, {name: outcomes[name].verdict.why for name in failed ^ failing}
            return outcomes
        time.sleep(1)


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_a_routing_lab_passes_its_checks_and_its_broken_copy_fails_the_right_ones(deployed, name):
    topology = open_lab(TOPOLOGIES / f"{name}.vtopo").topology
    mistake = MISTAKES[name]
    broken = broken_copy(topology, mistake)
    good, bad = deployed(topology), deployed(broken)
    settled(good, topology, set())
    outcomes = settled(bad, broken, set(mistake.fails))
    for check, start in mistake.fails.items():
        why = outcomes[check].verdict.why
        assert why.startswith(start) and "\n" not in why, (check, why)


def test_vtopo_check_passes_the_static_routing_lab(deployed):
    """Static routes are in place as soon as the routers are up: `vtopo check` passes at once, no waiting."""
    deployed("static-routing")
    done = subprocess.run([sys.executable, "-m", "vtopo", "check", str(TOPOLOGIES / "static-routing.vtopo"), "--json"],
                          capture_output=True, text=True, timeout=60)
    report = json.loads(done.stdout)
    assert done.returncode == 0, [c for c in report["checks"] if not c["passed"]]
    assert len(report["checks"]) == 7


def test_a_teaching_routers_vtysh_takes_a_static_route_rip_and_bgp(deployed):
    """On the teaching lab's r1, which runs vtopo's OSPF: a static route to Null0, `router rip` and `router bgp 1`
    typed into vtysh are each taken by its daemon (the running configuration is what the daemons hold), and the
    static route reaches the kernel."""
    lab = deployed("l2-vs-l3")
    typed = lab.run("r1", "vtysh", "-c", "configure terminal", "-c", "ip route 10.99.0.0/24 Null0", "-c", "router rip",
                    "-c", "network 10.0.12.0/30", "-c", "exit", "-c", "router bgp 1", "-c", "end")
    assert typed.returncode == 0 and "%" not in typed.stdout + typed.stderr, typed.stdout + typed.stderr
    running = lab.run("r1", "vtysh", "-c", "show running-config").stdout.splitlines()
    for line in ("ip route 10.99.0.0/24 Null0", "router rip", " network 10.0.12.0/30", "router bgp 1", "router ospf"):
        assert line in running, (line, running)
    kernel = lab.run("r1", "ip", "route", "show", "10.99.0.0/24").stdout
    assert kernel.startswith("blackhole 10.99.0.0/24 proto static"), kernel
