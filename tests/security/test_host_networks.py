"""One member's host address must not cut off another member's lab. Member b's lab is host-routed: the host has
172.16.2.1/24 on b's bridge br2, and its connected route takes the host's traffic to b's c3 (172.16.2.10). Member a
gives the host 172.16.2.1/25 on a bridge of a's lab, a more specific route that would take that traffic into a's lab.
A subnet another deployed lab gives the host is taken: a's lab is refused in one line naming a's bridge and b's lab
(its name and owner, as `status` shows them), before anything is built; at a deploy, at a `deploy --update`, and when
both deploy at the same moment. A lab's own subnets stay its own on `deploy --update`."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from residue import snapshot
from security.members import deploy_both, deployed_by, one_line, saved, tiny_lab
from vtopo.lab import open_lab
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

ROUTED = "b-routed"  # b's lab: the host routes between 172.16.1.1/24 on br1 and 172.16.2.1/24 on br2
B_NODE = "172.16.2.10"  # b's c3, behind br2
GRAB, A_NODE = "172.16.2.1/25", "172.16.2.20"  # the host address a's bridge asks for, and a's container behind it


def routed_lab(directory: Path) -> Path:
    topology = open_lab(TOPOLOGIES / "host-routed-bridges.vtopo").topology
    topology.name = ROUTED
    return saved(topology, directory)


def with_grabbing_bridge(topology: Topology) -> Topology:
    """`topology` and a numbered bridge `grab` with the host address GRAB, with container `g1` behind it."""
    topology.add_node(Node(id="grab", name="grab", kind="bridge",
                           settings={"forward_delay": 0.0, "host_addresses": [GRAB]}))
    topology.add_node(Node(id="g1", name="g1", kind="container"))
    topology.add_link(Link(id="g1-grab", a=Endpoint("g1", "eth0", Interface(addresses=[f"{A_NODE}/25"])),
                           b=Endpoint("grab", "p1")))
    return topology


def refusal(user: str) -> str:
    return (f"error: node grab: {GRAB} overlaps an address or route that lab {ROUTED} ({user}'s), another lab deployed "
            "on this host, gives the host; the host's traffic to that lab would go into this one. Pick a subnet no "
            "deployed lab gives the host")


def host_reaches(address: str) -> bool:
    """The host's own ping reaches `address` (a node inside a namespace vtopo made)."""
    return subprocess.run(["ping", "-c", "1", "-W", "2", address], capture_output=True).returncode == 0


def test_a_host_address_over_bs_host_routed_lab_is_refused(agent, users, readable_dir):
    a, b = users["a"].pw_name, users["b"].pw_name
    with deployed_by(agent, b, routed_lab(readable_dir)):
        assert host_reaches(B_NODE)
        during = snapshot()
        grabbing = saved(with_grabbing_bridge(Topology(name="a-grab")), readable_dir)
        deployed = agent.vtopo(a, "deploy", str(grabbing))
        if deployed.returncode == 0:  # the attack: the host's route to b's c3 now leads into a's lab
            cut_off = not host_reaches(B_NODE)
            assert agent.vtopo(a, "destroy", "a-grab").returncode == 0
            pytest.fail(f"a's lab was deployed{' and cut b off' if cut_off else ''}")
        assert one_line(deployed) == refusal(b)
        assert snapshot() - during == {}, "nothing of a's lab was built"
        assert host_reaches(B_NODE), "the host's traffic to b's lab went elsewhere"


def test_an_update_that_adds_a_host_address_over_bs_lab_is_refused_and_bs_own_update_is_not(agent, users,
                                                                                            readable_dir):
    a, b = users["a"].pw_name, users["b"].pw_name
    with deployed_by(agent, b, routed_lab(readable_dir)):
        with deployed_by(agent, a, tiny_lab(readable_dir, "a-plain")):
            during = snapshot()
            grabbing = saved(with_grabbing_bridge(open_lab(readable_dir / "a-plain.vtopo").topology), readable_dir)
            assert one_line(agent.vtopo(a, "deploy", "--update", str(grabbing))) == refusal(b)
            assert snapshot() - during == {}, "nothing of a's change was built"
            assert "10.9.0.1/24" in agent.vtopo(a, "exec", "a-plain", "c1", "--", "ip", "-br", "addr").stdout
            assert host_reaches(B_NODE)
        routed = open_lab(readable_dir / f"{ROUTED}.vtopo").topology
        routed.add_node(Node(id="br3", name="br3", kind="bridge", settings={"host_addresses": ["172.16.3.1/24"]}))
        updated = agent.vtopo(b, "deploy", "--update", str(saved(routed, readable_dir)))
        assert updated.returncode == 0 and "applied only the" in updated.stdout, updated.stderr
        assert "172.16.3.1/24" in subprocess.run(["ip", "-br", "addr"], capture_output=True, text=True).stdout
        assert host_reaches(B_NODE)


def test_two_members_giving_the_host_one_subnet_at_the_same_moment_leave_one_lab(agent, users, readable_dir):
    a, b = users["a"].pw_name, users["b"].pw_name
    before = snapshot()
    grabbing = saved(with_grabbing_bridge(Topology(name="a-grab")), readable_dir)
    results = deploy_both(agent, (a, str(grabbing)), (b, str(routed_lab(readable_dir))))
    won = [user for user, result in results.items() if result.returncode == 0]
    try:
        assert len(won) == 1, {user: result.stderr for user, result in results.items()}
        if won == [b]:
            assert one_line(results[a]) == refusal(b)
            assert host_reaches(B_NODE)
        else:
            assert one_line(results[b]).startswith(f"error: node br2: 172.16.2.1/24 overlaps an address or route "
                                                   f"that lab a-grab ({a}'s), another lab deployed on this host")
            assert host_reaches(A_NODE)
    finally:
        for user in won:
            assert agent.vtopo(user, "destroy", ROUTED if user == b else "a-grab").returncode == 0
    assert snapshot() - before == {}
