"""A member's routing lab through the agent: its routers run in the member's user namespace, and their routes reach
the kernel there as they do in root's labs. `vtopo check` passes once the protocol has converged."""
from __future__ import annotations

import json
import shutil
import time

import pytest

from interop.ospf01 import OSPF01, without_log_path
from residue import snapshot
from vtopo.interop.importing import import_lab
from vtopo.lab import registry
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

CONVERGED_WITHIN_S = 40.0


@pytest.mark.parametrize("name", ["static-routing", "bgp-two-as"])
def test_a_members_routing_lab_passes_its_checks(agent, users, readable_dir, name):
    a = users["a"].pw_name
    before = snapshot()
    path = readable_dir / f"{name}.vtopo"
    shutil.copy(TOPOLOGIES / path.name, path)
    path.chmod(0o644)
    deployed = agent.vtopo(a, "deploy", str(path))
    assert deployed.returncode == 0, deployed.stderr
    try:
        deadline = time.monotonic() + CONVERGED_WITHIN_S
        while True:
            done = agent.vtopo(a, "check", name, "--json")
            failed = {c["name"]: c["why"] for c in json.loads(done.stdout)["checks"] if not c["passed"]}
            if not failed or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert done.returncode == 0 and failed == {}, failed
        routes = agent.vtopo(a, "exec", name, "r2", "--", "ip", "-4", "route", "show", "10.3.0.0/24")
        assert " via 10.0.23.2 dev eth2 " in routes.stdout, routes.stdout + routes.stderr
    finally:
        agent.vtopo(a, "destroy", name)
    assert snapshot() - before == {}


def test_a_members_imported_ospf01_runs_ospf_instance_1_and_spreads_its_static_routes(agent, users, readable_dir):
    """ospf01's routers run ospfd as instance 1 (`router ospf 1`) and staticd in the member's user namespace:
    router4's redistributed static route reaches router1 in OSPF."""
    a = users["a"].pw_name
    before = snapshot()
    path = readable_dir / "ospf01.vtopo"
    io.save(without_log_path(import_lab(OSPF01, registry()).topology), path)
    path.chmod(0o644)
    deployed = agent.vtopo(a, "deploy", str(path))
    assert deployed.returncode == 0, deployed.stderr
    try:
        deadline = time.monotonic() + 120  # the segment br-dr elects its DR after a dead interval (40 s)
        while True:
            shown = agent.vtopo(a, "exec", "ospf01", "router1", "--", "vtysh", "-c", "show ip route ospf json")
            learnt = json.loads(shown.stdout or "{}")
            if "4.4.4.4/32" in learnt or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert learnt["4.4.4.4/32"][0]["protocol"] == "ospf" and learnt["4.4.4.4/32"][0]["instance"] == 1, shown
    finally:
        agent.vtopo(a, "destroy", "ospf01")
    assert snapshot() - before == {}
