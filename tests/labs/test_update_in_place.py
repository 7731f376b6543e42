"""An update of a running lab on one host takes away only what the edit removes (a link whose ends stay in their
nodes: its interfaces go, the nodes keep running) and applies what it adds; when the change fails half-way, what it
applied goes (interfaces in namespaces that stay too) and what it took away is made again."""
from __future__ import annotations

import subprocess
from pathlib import Path

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

        apply = Applier.apply

        def refuse_c3s_new_address(applier: Applier, op: o.Op) -> None:
            if isinstance(op, o.AddAddress) and op.cidr == "10.0.2.3/24":
                raise OpFailed(op, "refused for the test")
            apply(applier, op)

        with monkeypatch.context() as patched:
            patched.setattr(Applier, "apply", refuse_c3s_new_address)
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
