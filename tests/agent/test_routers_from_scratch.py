"""Routers a student configures from nothing, as a member of the vtopo group talking to a real agent: an empty router
(Generate OSPF off, no text) validates, deploys with every routing daemon running as the member, and takes RIP, BGP
and a static route typed into vtysh; so does a teaching router running vtopo's OSPF. `vtopo save` keeps what was
typed for every daemon, and the saved file deploys again into routers running it. A member's router is as lenient as
FRR: the lines FRR skips are warnings, and the router runs the rest."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from members import owned_by
from residue import snapshot
from security.members import prefix_of
from vtopo.model import io
from vtopo.model.topology import Node, Topology
from wiring import wire

pytestmark = pytest.mark.privileged

LAB = "from-scratch"
CONVERGE_SECONDS = 60  # a BGP session within its connect retries, RIP within its first updates
COURSE_DAEMONS = {"zebra", "staticd", "ospfd", "ospf6d", "bgpd", "ripd", "ripngd", "isisd", "bfdd"}
TYPED = {  # what the student types into each router's vtysh, after `configure terminal`
    "r1": ["ip route 10.99.0.0/24 Null0", "router rip", "network 10.0.12.0/30", "network 10.1.0.0/24", "exit",
           "router bgp 65001", "neighbor 10.0.12.2 remote-as 65002"],
    "r2": ["router bgp 65002", "neighbor 10.0.12.1 remote-as 65001", "exit", "router rip", "network 10.0.12.0/30"],
}
SKIPPING = ("hostname r1\nrouter ospf6\n ospf6 router-id 10.0.12.1\nint eth1\n ipv6 ospf6 hello-interval 2\n!\n"
            "ip route 10.99.0.0/24 Null0\n")  # `int eth1` is incomplete in `router ospf6`, the line after unknown
SAVED = {  # lines of each router's saved configuration that only what was typed gives
    "r1": ["ip route 10.99.0.0/24 Null0", "router rip", " network 10.0.12.0/30", " network 10.1.0.0/24",
           "router bgp 65001", " neighbor 10.0.12.2 remote-as 65002"],
    "r2": ["router bgp 65002", " neighbor 10.0.12.1 remote-as 65001", "router rip", " network 10.0.12.0/30",
           "router ospf"],
}


def scratch_lab(path: Path) -> Path:
    """h1 - r1 - r2: r1 empty (no configuration at all), r2 running the OSPF vtopo writes, as a teaching lab's."""
    topology = Topology(name=LAB, prefix="vfs")
    for name, kind, settings in (("r1", "router", {"generate_ospf": False}), ("r2", "router", {}),
                                 ("h1", "container", {"default_route": "10.1.0.1"})):
        topology.add_node(Node(id=name, name=name, kind=kind, settings=settings))
    wire(topology, ("h1:eth0", "r1:eth0", "10.1.0.10/24", "10.1.0.1/24"),
         ("r1:eth1", "r2:eth1", "10.0.12.1/30", "10.0.12.2/30"))
    io.save(topology, path)
    return path


def vtysh_json(agent, user: str, router: str, command: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    shown = agent.vtopo(user, "exec", LAB, router, "--", "vtysh", "-c", command)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    return json.loads(shown.stdout or "{}")


def routing(agent, user: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """What the typed lines make the routers do: r1's static route, r2's RIP route to r1's LAN, the BGP session."""
    r1_routes = vtysh_json(agent, user, "r1", "show ip route json")
    r2_routes = vtysh_json(agent, user, "r2", "show ip route json")
    peers = vtysh_json(agent, user, "r1", "show bgp summary json").get("ipv4Unicast", {}).get("peers", {})
    return {"static": [entry["protocol"] for entry in r1_routes.get("10.99.0.0/24", [])],
            "rip": [entry["protocol"] for entry in r2_routes.get("10.1.0.0/24", [])],
            "bgp": peers.get("10.0.12.2", {}).get("state")}


def wait_for_routing(agent, user: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + CONVERGE_SECONDS
    while (now := routing(agent, user)) != {"static": ["static"], "rip": ["rip"], "bgp": "Established"}:
        assert time.monotonic() < deadline, now
        time.sleep(1)


def daemons_of(router: str) -> dict[str, str]:
    """Each daemon of the router's pid files: the user ids it runs as outside (/proc/PID/status)."""
    found = {}
    for pid_file in Path(f"/run/vtopo/{prefix_of(LAB)}/{router}").glob("*.pid"):
        status = Path(f"/proc/{int(pid_file.read_text())}/status").read_text()
        found[pid_file.stem] = next(line.split()[1:] for line in status.splitlines() if line.startswith("Uid:"))
    return found


def test_a_router_from_nothing_takes_what_is_typed_keeps_it_and_runs_it_again(agent, users, readable_dir):
    a = users["a"].pw_name
    before = snapshot()
    lab_file = owned_by(scratch_lab(readable_dir / f"{LAB}.vtopo"), users["a"])
    validated = agent.vtopo(a, "validate", str(lab_file))
    assert validated.returncode == 0 and "warning" not in validated.stdout + validated.stderr, validated.stderr
    deployed = agent.vtopo(a, "deploy", str(lab_file))
    assert deployed.returncode == 0, deployed.stderr
    try:
        for router in ("r1", "r2"):  # every course daemon, each as the member (never root, never the host's frr)
            assert daemons_of(router) == {daemon: [str(users["a"].pw_uid)] * 4 for daemon in COURSE_DAEMONS}, router
        empty = agent.vtopo(a, "exec", LAB, "r1", "--", "vtysh", "-c", "show running-config")
        assert empty.returncode == 0 and "router " not in empty.stdout, empty.stdout + empty.stderr
        for router, lines in TYPED.items():
            typed = agent.vtopo(a, "exec", LAB, router, "--", "vtysh", "-c", "configure terminal",
                                *(word for line in lines for word in ("-c", line)))
            assert typed.returncode == 0 and "%" not in typed.stdout + typed.stderr, typed.stdout + typed.stderr
        wait_for_routing(agent, a)

        saved = agent.vtopo(a, "save", LAB)
        assert saved.returncode == 0, saved.stdout + saved.stderr
        kept = io.load(lab_file)
        for router, lines in SAVED.items():
            node = kept.node_named(router)
            assert node is not None
            config = node.settings["config"].splitlines()
            assert all(line in config for line in lines), (router, node.settings["config"])

        assert agent.vtopo(a, "destroy", LAB).returncode == 0
        redeployed = agent.vtopo(a, "deploy", str(lab_file))
        assert redeployed.returncode == 0, redeployed.stderr
        wait_for_routing(agent, a)
    finally:
        agent.vtopo(a, "destroy", LAB)
    assert snapshot() - before == {}


def test_a_members_router_loads_all_but_the_lines_frr_skips(agent, users, readable_dir):
    """As lenient for a member as FRR: the agent's dry run names each line FRR would skip as a warning, the lab
    deploys, and the router runs the rest of its text."""
    a = users["a"].pw_name
    before = snapshot()
    topology = Topology(name=LAB, prefix="vfs")
    topology.add_node(Node(id="r1", name="r1", kind="router", settings={"config": SKIPPING}))
    topology.add_node(Node(id="r2", name="r2", kind="router"))
    wire(topology, ("r1:eth1", "r2:eth1", "10.0.12.1/30", "10.0.12.2/30"))
    lab_file = readable_dir / f"{LAB}.vtopo"
    io.save(topology, lab_file)
    lab_file.chmod(0o644)
    validated = agent.vtopo(a, "validate", str(lab_file))
    said = validated.stdout + validated.stderr
    assert validated.returncode == 0, said
    for number, line in ((4, "int eth1"), (5, "ipv6 ospf6 hello-interval 2")):
        assert f"FRR skips line {number} of its configuration ({line!r})" in said, said
    deployed = agent.vtopo(a, "deploy", str(lab_file))
    try:
        assert deployed.returncode == 0, deployed.stderr
        assert "FRR skipped 2 line(s) of its configuration and loaded the rest (line 4, 5" in \
            deployed.stdout + deployed.stderr, deployed.stdout + deployed.stderr
        running = agent.vtopo(a, "exec", LAB, "r1", "--", "vtysh", "-c", "show running-config").stdout
        assert "router ospf6\n ospf6 router-id 10.0.12.1\n" in running and "ip route 10.99.0.0/24 Null0" in running, \
            running
    finally:
        agent.vtopo(a, "destroy", LAB)
    assert snapshot() - before == {}
