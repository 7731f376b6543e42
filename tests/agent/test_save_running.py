"""A student's routers, configured by hand, kept in the lab: as a member of the vtopo group talking to a real agent,
they type OSPF into vtysh on routers whose configuration holds only their names, add an address and a route to a
host with `ip`, run `vtopo save`, and get back exactly those routes after a router restart, and after destroying the
lab and deploying the saved file. Another member may not save their lab."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from members import owned_by
from residue import snapshot
from vtopo.model import io
from vtopo.model.topology import Node, Topology
from wiring import wire

pytestmark = pytest.mark.privileged

LAB = "by-hand"
OSPF_SECONDS = 40
STUDENT_OSPF = {  # what the student types into each router's vtysh
    "r1": ["router ospf", "network 10.0.0.0/8 area 0", "exit", "interface eth1", "ip ospf network point-to-point",
           "ip ospf hello-interval 1", "ip ospf dead-interval 4", "ip ospf retransmit-interval 1", "exit",
           "ip route 10.99.0.0/24 Null0"],
    "r2": ["router ospf", "network 10.0.0.0/8 area 0", "exit", "interface eth1", "ip ospf network point-to-point",
           "ip ospf hello-interval 1", "ip ospf dead-interval 4", "ip ospf retransmit-interval 1"],
}


def empty_routers_lab(path: Path) -> Path:
    """h1 - r1 - r2 - h2: routers with nothing configured but their names (and ospfd running), hosts with gateways."""
    topology = Topology(name=LAB, prefix="vbh")
    for name, kind, settings in (("r1", "router", {"config": "hostname r1\n", "daemons": ["ospfd"]}),
                                 ("r2", "router", {"config": "hostname r2\n", "daemons": ["ospfd"]}),
                                 ("h1", "container", {"default_route": "10.1.0.1"}),
                                 ("h2", "container", {"default_route": "10.2.0.1"})):
        topology.add_node(Node(id=name, name=name, kind=kind, settings=settings))
    wire(topology, ("h1:eth0", "r1:eth0", "10.1.0.10/24", "10.1.0.1/24"),
         ("r1:eth1", "r2:eth1", "10.0.12.1/30", "10.0.12.2/30"), ("r2:eth0", "h2:eth0", "10.2.0.1/24", "10.2.0.10/24"))
    io.save(topology, path)
    return path


def routes(agent, user: str, router: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The router's selected routes: prefix -> protocol."""
    shown = agent.vtopo(user, "exec", LAB, router, "--", "vtysh", "-c", "show ip route json")
    assert shown.returncode == 0, shown.stderr
    return {prefix: entries[0]["protocol"] for prefix, entries in json.loads(shown.stdout).items()
            if any(entry.get("selected") for entry in entries)}


def wait_for_ospf(agent, user: str) -> dict[str, dict[str, str]]:  # type: ignore[no-untyped-def]
    """Each router's routes once both learnt the other's LAN by OSPF."""
    deadline = time.monotonic() + OSPF_SECONDS
    while True:
        tables = {router: routes(agent, user, router) for router in ("r1", "r2")}
        if tables["r1"].get("10.2.0.0/24") == "ospf" and tables["r2"].get("10.1.0.0/24") == "ospf" and \
                tables["r1"].get("10.99.0.0/24") == "static":  # staticd runs on a router nobody asked it of
            return tables
        assert time.monotonic() < deadline, tables
        time.sleep(0.5)


def test_ospf_typed_by_hand_survives_save_restart_and_redeploy(agent, users, readable_dir):
    a, b = users["a"].pw_name, users["b"].pw_name
    before = snapshot()
    lab_file = owned_by(empty_routers_lab(readable_dir / f"{LAB}.vtopo"), users["a"])
    deployed = agent.vtopo(a, "deploy", str(lab_file))
    assert deployed.returncode == 0, deployed.stderr
    try:
        assert routes(agent, a, "r1").get("10.2.0.0/24") is None  # nothing routes yet
        for router, lines in STUDENT_OSPF.items():
            typed = agent.vtopo(a, "exec", LAB, router, "--", "vtysh", "-c", "configure terminal",
                                *(word for line in lines for word in ("-c", line)))
            assert typed.returncode == 0, typed.stdout + typed.stderr
        for command in (["ip", "address", "add", "10.1.0.20/24", "dev", "eth0"],
                        ["ip", "route", "add", "10.9.0.0/16", "via", "10.1.0.1"]):
            done = agent.vtopo(a, "exec", LAB, "h1", "--", *command)
            assert done.returncode == 0, done.stderr
        learnt = wait_for_ospf(agent, a)

        refused = agent.vtopo(b, "save", LAB)
        assert refused.returncode != 0 and f"belongs to {a}; only {a} or root" in refused.stderr, refused.stderr

        as_deployed = lab_file.read_text()
        explained = agent.vtopo(a, "save", LAB, "--explain")
        assert explained.returncode == 0 and lab_file.read_text() == as_deployed, explained.stderr
        for node, command in (("r1", "vtysh -c"), ("r2", "vtysh -c"), ("h1", "ip -j address show"),
                              ("h2", "ip -j -4 route show")):
            assert any(line.startswith(f"# node {node}: read what {node} runs now: {command}")
                       for line in explained.stdout.splitlines()), explained.stdout
        ran = subprocess.run(["sh", "-c", explained.stdout], capture_output=True, text=True, check=False)
        assert ran.returncode == 0 and "network 10.0.0.0/8 area 0" in ran.stdout, ran.stdout + ran.stderr
        assert '"10.1.0.20"' in ran.stdout, "the script read what save reads: h1's address added by hand"

        saved = agent.vtopo(a, "save", LAB)
        assert saved.returncode == 0, saved.stdout + saved.stderr
        assert f"into {lab_file}" in saved.stdout and "+   network 10.0.0.0/8 area 0" in saved.stdout, saved.stdout
        kept = io.load(lab_file)
        r1, h1 = kept.node_named("r1"), kept.node_named("h1")
        assert r1 is not None and h1 is not None
        assert "router ospf" in r1.settings["config"] and " ip ospf hello-interval 1" in r1.settings["config"]
        assert "ip route 10.99.0.0/24 Null0" in r1.settings["config"].splitlines()
        hostnames = [line for line in r1.settings["config"].splitlines() if line.startswith("hostname")]
        assert hostnames == ["hostname r1"], "the daemons run in r1's UTS namespace: none says the host's name"
        status = agent.vtopo(a, "status", LAB)
        assert status.returncode == 0 and status.stdout.splitlines()[0].endswith(": running"), status.stdout
        assert h1.settings["routes"] == ["10.9.0.0/16 via 10.1.0.1"]
        assert h1.settings["default_route"] == "10.1.0.1"
        h1_end = next(end for link in kept.links.values() for end in link.ends if end.node == h1.id)
        assert h1_end.interface.addresses == ["10.1.0.10/24", "10.1.0.20/24"]

        restarted = agent.vtopo(a, "node", LAB, "r1", "restart")
        assert restarted.returncode == 0, restarted.stderr
        assert wait_for_ospf(agent, a) == learnt  # the restarted router came back with what was saved

        assert agent.vtopo(a, "destroy", LAB).returncode == 0
        redeployed = agent.vtopo(a, "deploy", str(lab_file))
        assert redeployed.returncode == 0, redeployed.stderr
        assert wait_for_ospf(agent, a) == learnt
        h1_routes = agent.vtopo(a, "exec", LAB, "h1", "--", "ip", "route", "show", "10.9.0.0/16")
        assert "via 10.1.0.1" in h1_routes.stdout, h1_routes.stdout + h1_routes.stderr
        h1_addresses = agent.vtopo(a, "exec", LAB, "h1", "--", "ip", "-brief", "address", "show", "eth0")
        assert "10.1.0.20/24" in h1_addresses.stdout, h1_addresses.stdout
    finally:
        agent.vtopo(a, "destroy", LAB)
    assert snapshot() - before == {}
