"""Nodes from OCI images, deployed by a member of the vtopo group through a real agent: a lab mixing a node from
vtopo's toolbox image, a router from its FRR image, a router and a container of the host's own programs. Traffic
crosses all four, the terminal's commands run in the image's own files with its own processes, the FRR image's
daemons route and `vtopo save` keeps what was typed into them, a node stops, starts and restarts, `status` shows
each image's digest, and destroy leaves no container, mount or cgroup."""
from __future__ import annotations

import time

import pytest

from image_labs import FRR, engine_leftovers, mixed_lab, own_images
from members import owned_by
from residue import snapshot
from vtopo.model import io

pytestmark = pytest.mark.privileged

LAB = "images"
CONVERGE_SECONDS = 60


@pytest.fixture(scope="module", autouse=True)
def images() -> None:
    own_images()


def wait_for_ping(agent, user: str, node: str, address: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + CONVERGE_SECONDS
    while (done := agent.vtopo(user, "exec", LAB, node, "--", "ping", "-c1", "-W1", address)).returncode:
        assert time.monotonic() < deadline, done.stdout + done.stderr
        time.sleep(1)


def test_a_members_lab_of_image_nodes_routes_measures_saves_and_leaves_nothing(agent, users, readable_dir):
    a = users["a"].pw_name
    before, engine_before = snapshot(), engine_leftovers()
    lab_file = readable_dir / f"{LAB}.vtopo"
    io.save(mixed_lab(LAB), lab_file)
    lab_file = owned_by(lab_file, users["a"])
    deployed = agent.vtopo(a, "deploy", str(lab_file))
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    try:
        wait_for_ping(agent, a, "t1", "10.2.0.10")  # toolbox -> FRR image -> host's FRR -> namespace node
        inside = agent.vtopo(a, "exec", LAB, "t1", "--", "sh", "-c",
                             "grep PRETTY /etc/os-release; hostname; grep h2 /etc/hosts; cat /proc/self/uid_map; "
                             "ps -e -o comm=")
        said = inside.stdout
        assert inside.returncode == 0, said + inside.stderr
        assert "Debian" in said and "\nt1\n" in said and "10.2.0.10\th2" in said, said
        assert f"0 {users['a'].pw_uid} 1" in " ".join(said.split()), said  # root inside is the member outside
        assert "sleep" in said.split(), said  # the image's own process, in the node's own PID namespace
        iperf = agent.vtopo(a, "iperf", LAB, "t1", "h2", "-t", "1")
        assert iperf.returncode == 0 and "receiver" in iperf.stdout, iperf.stdout + iperf.stderr
        ospf = agent.vtopo(a, "exec", LAB, "r1", "--", "vtysh", "-c", "show ip ospf neighbor")
        assert "Full" in ospf.stdout, ospf.stdout + ospf.stderr
        zebra = agent.vtopo(a, "exec", LAB, "r1", "--", "sh", "-c", "readlink -f /usr/lib/frr/zebra && "
                            "grep ' / ' /proc/1/mountinfo")
        assert "overlay" in zebra.stdout, zebra.stdout  # r1's FRR is the image's, under its overlay
        typed = agent.vtopo(a, "exec", LAB, "r1", "--", "vtysh", "-c", "configure terminal",
                            "-c", "ip route 10.99.0.0/24 Null0")
        assert typed.returncode == 0, typed.stdout + typed.stderr
        saved = agent.vtopo(a, "save", LAB)
        assert saved.returncode == 0, saved.stdout + saved.stderr
        r1 = io.load(lab_file).node_named("r1")
        assert r1 is not None and "ip route 10.99.0.0/24 Null0" in r1.settings["config"], r1
        assert r1.settings["image"] == FRR
        for action in ("stop", "start", "restart"):  # a restart starts the image afresh, its files anew
            done = agent.vtopo(a, "node", LAB, "t1", action)
            assert done.returncode == 0, done.stdout + done.stderr
        wait_for_ping(agent, a, "t1", "10.2.0.10")
        first = agent.vtopo(a, "exec", LAB, "t1", "--", "ps", "-o", "comm=", "-p", "1")
        assert first.stdout.split() == ["sleep"], first.stdout + first.stderr
        status = agent.vtopo(a, "status", "-v", LAB)
        assert "sha256:" in status.stdout, status.stdout + status.stderr
    finally:
        agent.vtopo(a, "destroy", LAB)
    assert engine_leftovers() == engine_before
    assert snapshot() - before == {}
