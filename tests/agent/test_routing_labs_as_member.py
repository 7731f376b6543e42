"""A member's routing lab through the agent: its routers run in the member's user namespace, and their routes reach
the kernel there as they do in root's labs. `vtopo check` passes once the protocol has converged."""
from __future__ import annotations

import json
import shutil
import time

import pytest

from fast_ospf import with_fast_hellos
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


def test_a_members_imported_ospf01_runs_staticd_and_ospf_instance_1_so_redistributed_static_routes_spread(
        agent, users, readable_dir):
    """ospf01's daemons files turn staticd off and run ospfd as instance 1 (`router ospf 1`). FRR starts staticd
    whatever the file says, and so does vtopo, in the member's user namespace: each router's static route is there,
    and OSPF instance 1 carries the ones it redistributes to the other routers (router3's own names a next hop on a
    port with no link, so it stays inactive, as it would under containerlab; and router3 is the next hop the others
    name, so it takes none of them from OSPF, as RFC 2328 says of a forwarding address of its own).
    Its hellos are made fast: the test is about what OSPF carries, not when."""
    a = users["a"].pw_name
    before = snapshot()
    path = readable_dir / "ospf01.vtopo"
    io.save(with_fast_hellos(without_log_path(import_lab(OSPF01, registry()).topology)), path)
    path.chmod(0o644)
    deployed = agent.vtopo(a, "deploy", str(path))
    assert deployed.returncode == 0, deployed.stderr

    def vtysh(router: str, command: str) -> dict[str, list[dict[str, object]]]:
        shown = agent.vtopo(a, "exec", "ospf01", router, "--", "vtysh", "-c", command)
        return json.loads(shown.stdout or "{}")  # type: ignore[no-any-return]

    try:
        statics = {"router4": "4.4.4.4/32", "router5": "5.5.5.5/32", "router6": "6.6.6.6/32"}
        for router, prefix in statics.items():
            shown = vtysh(router, "show ip route static json")
            assert shown[prefix][0]["installed"], f"{router} lacks its static route {prefix}: {shown}"
        deadline = time.monotonic() + 120
        for router in ("router1", "router2", "router6"):
            wanted = {prefix for owner, prefix in statics.items() if owner != router}
            while True:
                ospf = vtysh(router, "show ip route ospf json")
                if wanted <= {prefix for prefix, routes in ospf.items() if routes[0].get("installed")}:
                    break
                assert time.monotonic() < deadline, f"{router} did not learn {sorted(wanted)} in OSPF: {sorted(ospf)}"
                time.sleep(1)
        assert vtysh("router1", "show ip route ospf json")["4.4.4.4/32"][0]["instance"] == 1
    finally:
        agent.vtopo(a, "destroy", "ospf01")
    assert snapshot() - before == {}
