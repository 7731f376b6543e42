"""What a member wrote reaches the kernel and the tools only as the member: a node's sysctls from their lab file are
written by root of the lab's user namespace.

Member a deploys one lab through a real agent, shared by the module's tests. Its container c1 sets
net.ipv4.ping_group_range to "0 0": the kernel reads those group ids in the writer's user namespace, so what root
reads back names whose group 0 it was, the host's (root wrote it) or the lab's (the member's own group)."""
from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from residue import snapshot
from security.members import MembersLabs, deployed_by_each, prefix_of, saved
from vtopo.model import io
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

pytestmark = pytest.mark.privileged

LAB = "member-text"


def _lab(directory: Path) -> list[tuple[str, Path]]:
    topology = Topology(name=LAB)
    topology.add_node(Node(id="br", name="br", kind="bridge", settings={"forward_delay": 0.0}))
    topology.add_node(Node(id="c1", name="c1", kind="container",
                           settings={"sysctls": {"net.ipv4.ping_group_range": "0 0"}}))
    topology.add_link(Link(id="l1", a=Endpoint("c1", "eth0", Interface(addresses=["10.9.0.1/24"])),
                           b=Endpoint("br", "p1")))
    return [("a", saved(topology, directory))]


@pytest.fixture(scope="module")
def labs() -> Iterator[MembersLabs]:
    with deployed_by_each(_lab) as made:
        yield made


def test_a_members_sysctl_is_written_by_root_of_their_labs_user_namespace(labs: MembersLabs) -> None:
    shown = subprocess.run(["nsenter", f"--net=/run/netns/{prefix_of(LAB)}-c1", "cat",
                            "/proc/sys/net/ipv4/ping_group_range"], capture_output=True, text=True, check=True)
    gid = labs.users["a"].pw_gid
    assert shown.stdout.split() == [str(gid), str(gid)], f"group 0 of whoever wrote it: {shown.stdout!r}"


def _update(labs: MembersLabs, sysctls: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`vtopo deploy --update` of the lab by a, with c1's sysctls now `sysctls`."""
    [(_, path)] = _lab(labs.directory)
    topology = io.load(path)
    topology.node_named("c1").settings["sysctls"] = sysctls
    return labs.agent.vtopo(labs.users["a"].pw_name, "deploy", "--update", str(saved(topology, labs.directory)))


def _shown(key: str) -> list[str]:
    path = "/proc/sys/" + key.replace(".", "/")
    return subprocess.run(["nsenter", f"--net=/run/netns/{prefix_of(LAB)}-c1", "cat", path], capture_output=True,
                          text=True, check=True).stdout.split()


def test_a_sysctl_changed_by_an_update_is_written_there_too(labs: MembersLabs) -> None:
    updated = _update(labs, {"net.ipv4.ip_default_ttl": "44", "net.ipv4.ping_group_range": "0 0"})
    assert updated.returncode == 0, updated.stderr
    assert _shown("net.ipv4.ip_default_ttl") == ["44"]


def test_a_sysctl_only_the_hosts_root_could_write_is_refused_naming_the_node(labs: MembersLabs) -> None:
    """Group 1 is the host's, not the lab's: written by root, every process of group 1 would open ping sockets in
    c1."""
    topology = io.load(_lab(labs.directory)[0][1])
    topology.name = f"{LAB}-b"
    topology.node_named("c1").settings["sysctls"] = {"net.ipv4.ping_group_range": "1 1"}
    before = snapshot()
    refused = labs.agent.vtopo(labs.users["b"].pw_name, "deploy", str(saved(topology, labs.directory)))
    line = refused.stderr.splitlines()[0]
    assert refused.returncode != 0 and "node c1" in line and "ping_group_range" in line and "Invalid argument" in line, line
    assert snapshot() - before == {}
