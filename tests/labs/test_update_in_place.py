"""An update of a running lab on one host takes away only what the edit removes (a link whose ends stay in their
nodes: its interfaces go, the nodes keep running) and applies what it adds; when the change fails half-way, what it
applied goes (interfaces in namespaces that stay too) and what it took away is made again."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from ping_through import pinging
from residue import snapshot
from spread_labs import LabBuilder, here
from vtopo.host.applier import Applier, OpFailed
from vtopo.host.deployer import Deployer, DeployError
from vtopo.lab_terms import default_prefix
from vtopo import ops as o

pytestmark = pytest.mark.privileged


def triangle_less() -> LabBuilder:
    """c1 joined to c2 and c3."""
    lab = LabBuilder("inplace", [here()])
    for name in ("c1", "c2", "c3"):
        lab.node(name, "container")
    lab.link("c1", "c2", "10.0.0.1/24", "10.0.0.2/24")
    lab.link("c1", "c3", "10.0.1.1/24", "10.0.1.3/24")
    return lab


def in_node(node: str) -> list[str]:
    return ["ip", "netns", "exec", f"{default_prefix('inplace')}-{node}"]


def interfaces(node: str) -> list[str]:
    listing = subprocess.run([*in_node(node), "ip", "-br", "link"], capture_output=True, text=True, check=True).stdout
    return sorted(line.split()[0].split("@")[0] for line in listing.splitlines() if not line.startswith("lo "))


def reaches(node: str, address: str) -> bool:
    return subprocess.run([*in_node(node), "ping", "-c", "1", "-W", "2", address], capture_output=True).returncode == 0


def refusing(patched: pytest.MonkeyPatch, refused: Callable[[o.Op], bool]) -> None:
    """The applier, patched, fails each op that `refused` names."""
    apply = Applier.apply

    def refuse(applier: Applier, op: o.Op) -> None:
        if refused(op):
            raise OpFailed(op, "refused for the test")
        apply(applier, op)

    patched.setattr(Applier, "apply", refuse)


def test_a_link_replaced_in_place_and_a_failed_change_put_back(monkeypatch: pytest.MonkeyPatch):
    before = snapshot()
    lab = triangle_less()
    deployer = Deployer()
    deployer.deploy(lab.topology)
    try:
        running = deployer.store.named("inplace")
        assert running is not None
        journal = running.journal()
        lab.topology.remove_link("c1-c3")
        lab.link("c2", "c3", "10.0.2.2/24", "10.0.2.3/24")

        with monkeypatch.context() as patched:
            refusing(patched, lambda op: isinstance(op, o.AddAddress) and op.cidr == "10.0.2.3/24")
            with pytest.raises(DeployError, match="refused for the test"):
                deployer.update(lab.topology)
        assert interfaces("c1") == ["eth0", "eth1"] and interfaces("c2") == ["eth0"]  # as it ran
        assert reaches("c1", "10.0.1.3") and sorted(map(str, running.journal())) == sorted(map(str, journal))
        assert "c2-c3" not in str(running.read()["topology"])

        with pinging(in_node("c1"), "10.0.0.2") as counted:
            report = deployer.update(lab.topology)
        assert counted[1] == 0, f"{counted[1]} of {counted[0]} pings lost"
        assert "took away" in report.notices[0], report.notices
        assert interfaces("c1") == ["eth0"] and interfaces("c2") == ["eth0", "eth1"]
        assert reaches("c2", "10.0.2.3") and not reaches("c1", "10.0.1.3")
    finally:
        deployer.destroy("inplace")
    assert snapshot() - before == {}


def test_a_router_that_loses_a_link_restarts_its_daemons_and_the_router_beside_it_runs_on():
    """r1-r3 goes: r1 and r3 get their new configuration (their daemons restart), r2 is not touched."""
    before = snapshot()
    lab = LabBuilder("inplace", [here()])
    for name in ("r1", "r2", "r3"):
        lab.node(name, "router", router_id=f"10.255.0.{name[1]}")
    lab.link("r1", "r2", "10.0.0.1/30", "10.0.0.2/30")
    lab.link("r1", "r3", "10.0.1.1/30", "10.0.1.2/30")
    deployer = Deployer()
    deployer.deploy(lab.topology)
    try:
        daemons = deployer.store.named("inplace")
        assert daemons is not None
        run_dir = daemons.facts().run_root
        pids = {name: Path(run_dir, default_prefix("inplace"), name, "zebra.pid").read_text() for name in ("r1", "r2")}
        lab.topology.remove_link("r1-r3")
        report = deployer.update(lab.topology)
        assert "took away" in report.notices[0], report.notices
        assert Path(run_dir, default_prefix("inplace"), "r2", "zebra.pid").read_text() == pids["r2"]
        restarted = Path(run_dir, default_prefix("inplace"), "r1", "zebra.pid").read_text()
        assert restarted != pids["r1"] and Path(f"/proc/{int(restarted)}").exists()
        assert "10.0.1.1" not in Path(run_dir, default_prefix("inplace"), "r1", "frr.conf").read_text()
        assert reaches("r1", "10.0.0.2") and not reaches("r1", "10.0.1.2")
    finally:
        deployer.destroy("inplace")
    assert snapshot() - before == {}


def with_ttl(ttl: str, **more: str) -> LabBuilder:
    """c1 (whose default TTL is `ttl`, with the sysctls `more`) joined to c2 and to the router r1."""
    lab = LabBuilder("inplace", [here()])
    lab.node("c1", "container", sysctls={"net.ipv4.ip_default_ttl": ttl, **more})
    lab.node("c2", "container")
    lab.node("r1", "router", router_id="10.255.0.1")
    lab.link("c1", "c2", "10.0.0.1/24", "10.0.0.2/24")
    lab.link("c1", "r1", "10.0.1.1/24", "10.0.1.2/24")
    return lab


def with_r2(ttl: str, **more: str) -> LabBuilder:
    """`with_ttl`, and a router r2 joined to c2: an edit of the lab of TTL `ttl` that only adds."""
    lab = with_ttl(ttl, **more)
    lab.node("r2", "router", router_id="10.255.0.2")
    lab.link("c2", "r2", "10.0.2.2/24", "10.0.2.3/24")
    return lab


def as_running() -> dict[str, object]:
    """Each node's interfaces (name, kind, MTU, whether set up) and IPv4 addresses, the lab's namespaces, c1's default
    TTL and whether r1's zebra runs."""
    found: dict[str, object] = {}
    for node in ("c1", "c2", "r1"):
        links = json.loads(subprocess.run([*in_node(node), "ip", "-d", "-j", "link"], capture_output=True, text=True,
                                          check=True).stdout)
        addresses = json.loads(subprocess.run([*in_node(node), "ip", "-4", "-j", "addr"], capture_output=True, text=True,
                                              check=True).stdout)
        found[node] = (sorted((link["ifname"], link.get("linkinfo", {}).get("info_kind", ""), link["mtu"],
                               "UP" in link["flags"]) for link in links),
                       sorted(f"{entry['ifname']} {address['local']}/{address['prefixlen']}" for entry in addresses
                              for address in entry["addr_info"]))
    found["namespaces"] = sorted(name for name in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                                                 check=True).stdout.split()
                                 if name.startswith(default_prefix("inplace")))
    found["ttl"] = subprocess.run([*in_node("c1"), "cat", "/proc/sys/net/ipv4/ip_default_ttl"], capture_output=True,
                                  text=True, check=True).stdout.strip()
    found["zebra"] = subprocess.run([*in_node("r1"), "pgrep", "-x", "zebra"], capture_output=True).returncode == 0
    return found


FAILING = {"an unknown sysctl": None, "an address": o.AddAddress, "a veth pair": o.CreateVeth,
           "a router's daemon": o.StartProcess}
EDITS = {"rebuilding": (lambda more: with_ttl("45", **more), "deployed again as it ran before the update"),
         "in place": (lambda more: with_r2("44", **more), "the lab runs on as it was")}


@pytest.mark.parametrize("edit_kind", EDITS)
@pytest.mark.parametrize("failing", FAILING)
def test_an_update_that_fails_after_one_that_worked_leaves_the_lab_as_that_one_left_it(
        monkeypatch: pytest.MonkeyPatch, failing: str, edit_kind: str):
    """The first update changes c1's default TTL (which rebuilds the lab); the second, which changes it again (the
    lab is rebuilt) or adds a router (in place), fails at the kernel's refusal of an unknown sysctl or at a fault
    injected into one kind of operation: the lab runs as the first update left it, and the error says how."""
    before = snapshot()
    deployer = Deployer()
    deployer.deploy(with_ttl("64").topology)
    try:
        deployer.update(with_ttl("44").topology)
        updated = as_running()
        assert updated["ttl"] == "44" and updated["zebra"], updated
        kind = FAILING[failing]
        edited, advice = EDITS[edit_kind]
        edit = edited({} if kind else {"net.ipv4.no_such_thing": "1"})
        failed: list[o.Op] = []

        def first_of_its_kind(op: o.Op) -> bool:
            """The first op of the kind `failing` names (the deploy that puts the lab back makes its own)."""
            if kind is None or failed or not isinstance(op, kind):
                return False
            failed.append(op)
            return True

        with monkeypatch.context() as patched:
            refusing(patched, first_of_its_kind)
            with pytest.raises(DeployError, match=advice):
                deployer.update(edit.topology)
        assert as_running() == updated
        assert reaches("c1", "10.0.0.2") and reaches("c1", "10.0.1.2")
        record = deployer.store.named("inplace")
        assert record is not None and "no_such_thing" not in json.dumps(record.read()["topology"])
        assert '"44"' in json.dumps(record.read()["topology"])
    finally:
        deployer.destroy("inplace")
    assert snapshot() - before == {}


def test_an_update_whose_lab_cannot_be_deployed_again_says_the_lab_is_gone(monkeypatch: pytest.MonkeyPatch):
    """The rebuild fails, and so does deploying the lab as it ran (every address refused): no lab is left, nothing of
    it either, and the error says so."""
    before = snapshot()
    deployer = Deployer()
    deployer.deploy(with_ttl("64").topology)
    try:
        with monkeypatch.context() as patched:
            refusing(patched, lambda op: isinstance(op, o.AddAddress))
            with pytest.raises(DeployError, match="so did deploying the lab again as it ran before it: it is not deployed"):
                deployer.update(with_ttl("44").topology)
        assert deployer.store.named("inplace") is None
    finally:
        if deployer.store.named("inplace") is not None:
            deployer.destroy("inplace")
    assert snapshot() - before == {}
