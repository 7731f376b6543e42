"""What a member wrote reaches the kernel and the tools only as the member: a node's sysctls from their lab file are
written by root of the lab's user namespace, and their capture filter is compiled by a tcpdump of theirs (Debian's
tcpdump, run by root, compiles it as root and drops to user tcpdump only after: the filter's names are looked up in
/etc/hosts, /etc/services and the resolver by root).

Member a deploys one lab through a real agent, shared by the module's tests. Its container c1 sets
net.ipv4.ping_group_range to "0 0": the kernel reads those group ids in the writer's user namespace, so what root
reads back names whose group 0 it was, the host's (root wrote it) or the lab's (the member's own group)."""
from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from security.members import MembersLabs, deployed_by_each, prefix_of, saved, tiny_lab
from vtopo.model import io
from vtopo.model.topology import Node, Topology

pytestmark = pytest.mark.privileged

LAB, BRIDGE_LAB = "member-text", "member-text-bridge"
MARKERS = {"c1:eth0": "10.254.77.1", "br": "10.254.77.2"}  # in the member's filter: finds the processes holding it


def _lab(directory: Path) -> list[tuple[str, Path]]:
    """c1 (10.9.1.1) and c2 (10.9.1.2) on bridge br; c1 sets ping_group_range."""
    topology = io.load(tiny_lab(directory, LAB, address="10.9.1.1/24", nodes=2))
    topology.node_named("c1").settings["sysctls"] = {"net.ipv4.ping_group_range": "0 0"}
    bridge_alone = Topology(name=BRIDGE_LAB)  # no container: the lab has no user namespace
    bridge_alone.add_node(Node(id="br", name="br", kind="bridge", settings={"forward_delay": 0.0}))
    return [("a", saved(topology, directory)), ("b", saved(bridge_alone, directory))]


@pytest.fixture(scope="module")
def labs() -> Iterator[MembersLabs]:
    with deployed_by_each(_lab) as made:
        yield made


def test_a_members_sysctl_is_written_by_root_of_their_labs_user_namespace(labs: MembersLabs) -> None:
    shown = subprocess.run(["nsenter", f"--net=/run/netns/{prefix_of(LAB)}-c1", "cat",
                            "/proc/sys/net/ipv4/ping_group_range"], capture_output=True, text=True, check=True)
    gid = labs.users["a"].pw_gid
    assert shown.stdout.split() == [str(gid), str(gid)], f"group 0 of whoever wrote it: {shown.stdout!r}"


def _holding(marker: str) -> list[int]:
    """The processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:  # ended meanwhile
            continue
    return found


def _identity(pid: int) -> tuple[int, int, int]:
    """The process's real uid and its effective capabilities, as the host sees them, and the inode of its user
    namespace."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return int(status["Uid"].split()[0]), int(status["CapEff"], 16), os.stat(f"/proc/{pid}/ns/user").st_ino


@pytest.mark.parametrize("target", MARKERS)
def test_a_members_capture_filter_is_compiled_by_a_tcpdump_of_theirs(labs: MembersLabs, target: str) -> None:
    """On a node's port (in a namespace of the lab's), the tcpdump that holds the member's filter runs as the member,
    root of their lab's user namespace; on a whole bridge (in the host's), as the member with no capability, and
    root's, which listens there, holds none of it."""
    member = labs.users["a"]
    capture = labs.agent.spawn(member.pw_name, "capture", LAB, target, "-f", f"icmp and not host {MARKERS[target]}",
                               "-c", "1000")
    try:
        deadline = time.monotonic() + 20
        while not (holders := [pid for pid in _holding(MARKERS[target]) if Path(f"/proc/{pid}/comm").read_text().strip()
                               == "tcpdump"]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert holders, f"no tcpdump holds the filter (the capture's status: {capture.poll()})"
        lab_userns = os.stat(f"/run/vtopo/ns/{prefix_of(LAB)}/user").st_ino
        for uid, capabilities, userns in map(_identity, holders):
            assert uid == member.pw_uid and (userns == lab_userns if target == "c1:eth0" else capabilities == 0)
    finally:
        capture.terminate()
        capture.communicate(timeout=30)


def test_a_filtered_capture_on_a_lab_with_no_user_namespace_runs_as_its_member(labs: MembersLabs) -> None:
    member = labs.users["b"]
    marker = "10.254.77.3"
    capture = labs.agent.spawn(member.pw_name, "capture", BRIDGE_LAB, "br", "-f", f"not host {marker}")
    try:
        assert capture.stderr is not None and "capturing on br" in capture.stderr.readline()
        [holder] = [pid for pid in _holding(marker) if Path(f"/proc/{pid}/comm").read_text().strip() == "tcpdump"]
        assert _identity(holder)[:2] == (member.pw_uid, 0)
    finally:
        capture.terminate()
        capture.communicate(timeout=30)


@pytest.mark.parametrize("target", MARKERS)
def test_the_members_filter_keeps_what_it_names_of_the_traffic_there(labs: MembersLabs, target: str) -> None:
    """The capture still is what the member asked: c1's pings to c2 and their answers, without the ARP beside them."""
    member = labs.users["a"].pw_name
    capture = labs.agent.spawn(member, "capture", LAB, target, "-f", "icmp", "-c", "4")
    pings = labs.agent.spawn(member, "exec", LAB, "c1", "--", "ping", "-c", "30", "-i", "0.2", "10.9.1.2")
    try:
        lines, messages = capture.communicate(timeout=30)
    finally:
        pings.terminate()
        pings.communicate(timeout=30)
    assert capture.returncode == 0 and "4 packets captured" in messages, messages
    assert len(lines.splitlines()) == 4 and all("ICMP" in line for line in lines.splitlines()), lines


@pytest.mark.parametrize("target", MARKERS)
def test_a_filter_tcpdump_refuses_is_said_before_anything_listens(labs: MembersLabs, target: str) -> None:
    refused = labs.agent.vtopo(labs.users["a"].pw_name, "capture", LAB, target, "-f", "icmp and (", "-c", "1")
    assert refused.returncode != 0 and "syntax error" in refused.stderr, refused.stderr
    assert not _holding("icmp and (")


def _update(labs: MembersLabs, sysctls: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`vtopo deploy --update` of the lab by a, with c1's sysctls now `sysctls`."""
    path = _lab(labs.directory)[0][1]
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
    c1. The update is refused and the member's lab runs again as it ran before it, its sysctls too."""
    ran = {key: _shown(key) for key in ("net.ipv4.ip_default_ttl", "net.ipv4.ping_group_range")}
    refused = _update(labs, {"net.ipv4.ping_group_range": "1 1"})
    line = refused.stderr.splitlines()[0]
    assert refused.returncode != 0 and "node c1" in line and "ping_group_range" in line and "Invalid argument" in line, line
    assert "deployed again as it ran before the update" in line, line
    assert {key: _shown(key) for key in ran} == ran
    pinged = labs.agent.vtopo(labs.users["a"].pw_name, "exec", LAB, "c1", "--", "ping", "-c", "1", "-W", "2",
                              "10.9.1.2")
    assert pinged.returncode == 0, pinged.stdout + pinged.stderr
