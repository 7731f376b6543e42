"""`vtopo deploy --update` of a lab spread over the real host and two simulated ones (b and c): each site applies only
what its part gains and loses, through its own agent, so a ping between two nodes the edit leaves alone goes on
across its tunnel without a loss; a site the edit starts using must be allowed as at deploy; a failure on one site
puts every site back as it ran, and the command says which sites changed."""
from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from ping_through import pinging
from sites.simulated import SimulatedHost, Sites
from spread_labs import LabBuilder
from vtopo.lab_terms import default_prefix

pytestmark = pytest.mark.privileged


def update(sites: Sites, lab: LabBuilder, *allowed: str) -> subprocess.CompletedProcess[str]:
    """`vtopo deploy --update` of the lab as edited, allowing only the sites named."""
    return sites.vtopo("deploy", str(sites.save(lab)), "--update", *(f"--allow-site={site}" for site in allowed))


def in_node(sites: Sites, site: str, lab: str, node: str, *argv: str) -> list[str]:
    """The command line that runs `argv` in a node's namespace on its site ("" here)."""
    argv_in = ["ip", "netns", "exec", f"{default_prefix(lab)}-{node}", *argv]
    return _host(sites, site).inside(*argv_in) if site else argv_in


def _host(sites: Sites, site: str) -> SimulatedHost:
    return {"b": sites.b, "c": sites.c}[site]


def run_in(sites: Sites, site: str, lab: str, node: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(in_node(sites, site, lab, node, *argv), capture_output=True, text=True, timeout=60)


def reaches(sites: Sites, site: str, lab: str, node: str, address: str) -> bool:
    return run_in(sites, site, lab, node, "ping", "-c", "1", "-W", "2", address).returncode == 0


def link_details(sites: Sites, site: str, lab: str, node: str, device: str) -> str:
    """`ip -d link show` of a node's interface: its ifindex (which a rebuilt device changes) and its VXLAN id."""
    return run_in(sites, site, lab, node, "ip", "-d", "link", "show", device).stdout


def namespaces(sites: Sites, site: str) -> list[str]:
    listing = _host(sites, site).run("ip", "netns", "list") if site else \
        subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [line.split()[0] for line in listing.stdout.splitlines()]


@contextmanager
def deployed(sites: Sites, lab: LabBuilder) -> Iterator[None]:
    """The lab deployed over its sites for the block, then destroyed (the `spread` fixture checks for residue)."""
    deploying = sites.deploy(lab)
    assert deploying.returncode == 0, deploying.stderr
    try:
        yield
    finally:
        destroyed = sites.vtopo("destroy", lab.topology.name)
        assert destroyed.returncode == 0, destroyed.stderr


def pair(sites: Sites, name: str) -> LabBuilder:
    """c1 here and c2 on b, joined by a tunnel."""
    lab = sites.builder(name)
    lab.node("c1", "container")
    lab.node("c2", "container", site="b")
    lab.link("c1", "c2", "10.0.0.1/24", "10.0.0.2/24")
    return lab


def test_a_node_and_links_to_two_sites_added_while_a_ping_across_a_tunnel_goes_on(spread: Sites):
    lab = pair(spread, "grow")
    with deployed(spread, lab):
        tunnel_before = link_details(spread, "", "grow", "c1", "eth0")
        with pinging(in_node(spread, "", "grow", "c1"), "10.0.0.2") as counted:
            lab.node("c3", "container", site="c")
            lab.link("c1", "c3", "10.0.1.1/24", "10.0.1.3/24")  # a new tunnel here - c
            lab.link("c2", "c3", "10.0.2.2/24", "10.0.2.3/24")  # and b - c
            refused = update(spread, lab)
            assert refused.returncode == 1 and "site c: the lab would have vtopo connect to root@" in refused.stderr
            assert "site b" not in refused.stderr  # b runs the lab already, reached as before
            updated = update(spread, lab, "c")
            assert updated.returncode == 0, updated.stderr
        sent, losses = counted
        print(f"ping across the untouched tunnel during the update: {sent} sent, {losses} lost")
        assert losses == 0
        # the 3 ops of the new tunnel end, and the lab's nftables table made again with that tunnel's VNI rule
        assert "[local] applied only the 4 new operations and took away 1; the rest of the lab kept running" \
            in updated.stdout
        assert "[b] applied only the " in updated.stdout and "deployed site c's part of lab grow" in updated.stdout
        assert link_details(spread, "", "grow", "c1", "eth0") == tunnel_before  # the same device: not rebuilt
        assert reaches(spread, "", "grow", "c1", "10.0.1.3") and reaches(spread, "b", "grow", "c2", "10.0.2.3")
        here_c = link_details(spread, "", "grow", "c1", "eth1")
        c_here = link_details(spread, "c", "grow", "c3", "eth0")
        vni = re.search(r"vxlan id (\d+)", here_c)
        assert vni and f"vxlan id {vni.group(1)} " in c_here and f"remote {spread.c.address}" in here_c
        assert vni.group(1) not in tunnel_before  # one VNI per link


def test_a_link_between_sites_and_then_a_site_taken_away(spread: Sites):
    lab = pair(spread, "shrink")
    lab.node("c3", "container", site="c")
    lab.link("c1", "c3", "10.0.1.1/24", "10.0.1.3/24")
    lab.link("c2", "c3", "10.0.2.2/24", "10.0.2.3/24")
    with deployed(spread, lab):
        with pinging(in_node(spread, "", "shrink", "c1"), "10.0.0.2") as counted:
            lab.topology.remove_link("c1-c3")
            updated = update(spread, lab)
            assert updated.returncode == 0, updated.stderr
            assert "eth1" not in run_in(spread, "", "shrink", "c1", "ip", "-br", "link").stdout  # both ends went
            assert "eth0" not in run_in(spread, "c", "shrink", "c3", "ip", "-br", "link").stdout
            assert reaches(spread, "b", "shrink", "c2", "10.0.2.3")  # c3's other link stays

            lab.topology.remove_link("c2-c3")
            lab.topology.remove_node("c3")  # c has no node left: its part goes
            updated = update(spread, lab)
            assert updated.returncode == 0, updated.stderr
        assert counted[1] == 0, f"{counted[1]} of {counted[0]} pings lost"
        assert "destroyed site c's part of lab shrink, which the edit moved off it" in updated.stdout
        assert spread.c.residue() == []
        assert "eth1" not in run_in(spread, "b", "shrink", "c2", "ip", "-br", "link").stdout
        status = spread.vtopo("status", "shrink").stdout
        assert "site b: lab shrink" in status and "site c" not in status, status


def test_a_node_moved_to_another_site_takes_its_tunnel_along(spread: Sites):
    lab = pair(spread, "move")
    lab.node("c4", "container", site="b")
    lab.link("c1", "c4", "10.0.4.1/24", "10.0.4.4/24")
    with deployed(spread, lab):
        vni = re.search(r"vxlan id (\d+)", link_details(spread, "", "move", "c1", "eth1"))
        assert vni
        with pinging(in_node(spread, "", "move", "c1"), "10.0.0.2") as counted:
            lab.topology.nodes["c4"].site = "c"
            updated = update(spread, lab, "c")
            assert updated.returncode == 0, updated.stderr
        assert counted[1] == 0, f"{counted[1]} of {counted[0]} pings lost"
        assert f"{default_prefix('move')}-c4" not in namespaces(spread, "b")
        assert f"{default_prefix('move')}-c4" in namespaces(spread, "c")
        moved = link_details(spread, "", "move", "c1", "eth1")
        assert f"vxlan id {vni.group(1)} " in moved and f"remote {spread.c.address}" in moved  # the link's own VNI, to c
        assert reaches(spread, "", "move", "c1", "10.0.4.4")

        lab.topology.nodes["c4"].site = ""  # back here: c is no longer used, and the link no longer a tunnel
        updated = update(spread, lab)
        assert updated.returncode == 0, updated.stderr
        assert spread.c.residue() == [] and reaches(spread, "", "move", "c1", "10.0.4.4")
        assert "vxlan" not in link_details(spread, "", "move", "c1", "eth1")


def test_a_failure_on_one_site_puts_every_site_back_and_says_which_changed(spread: Sites):
    """c3 moves from b to c and c5 comes on b, where a namespace is in the way: b takes c3 away, fails to make c5 and
    makes c3 again; c, which deployed c3, destroys it again; here, c1's tunnel to c3 goes back to b."""
    lab = pair(spread, "undo")
    lab.node("c3", "container", site="b")
    lab.link("c1", "c3", "10.0.3.1/24", "10.0.3.3/24")
    with deployed(spread, lab):
        with pinging(in_node(spread, "", "undo", "c1"), "10.0.0.2") as counted:
            lab.topology.nodes["c3"].site = "c"
            lab.node("c5", "container", site="b")
            lab.link("c2", "c5", "10.0.5.2/24", "10.0.5.5/24")
            in_the_way = f"{default_prefix('undo')}-c5"
            assert spread.b.run("ip", "netns", "add", in_the_way).returncode == 0  # site b cannot make c5
            try:
                failed = update(spread, lab, "c")
            finally:
                spread.b.run("ip", "netns", "del", in_the_way)
        assert counted[1] == 0, f"{counted[1]} of {counted[0]} pings lost"
        said = failed.stderr
        assert failed.returncode == 1 and "error: the update of lab undo failed:" in said, said
        assert f"site b: node c5: a network namespace named {in_the_way} already exists" in said
        assert "its part runs as it did" in said
        assert "site local: updated, then put back as it ran" in said
        assert "site c: deployed its new part, then destroyed it again" in said
        assert "every site runs its part as it did before the update" in said
        assert spread.c.residue() == []
        assert f"{default_prefix('undo')}-c3" in namespaces(spread, "b")
        assert f"remote {spread.b.address}" in link_details(spread, "", "undo", "c1", "eth1")
        assert reaches(spread, "", "undo", "c1", "10.0.3.3") and reaches(spread, "", "undo", "c1", "10.0.0.2")
        status = spread.vtopo("status", "undo")
        assert status.returncode == 0 and "c5" not in status.stdout and "site c" not in status.stdout, status.stdout
