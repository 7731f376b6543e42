"""VLANs on switches, deployed by a member through the agent: hosts reach their own VLAN on one switch and across a
trunk, and no other; the trunk's frames carry 802.1Q tags and the access ports' none; `vtopo save` keeps the VLANs; and
destroy leaves nothing. On OVS everywhere; on a Linux bridge where the kernel filters VLANs, and where it does not (this
machine's kernel has no 802.1Q) the deploy is refused in one line before anything is made. The teaching lab
vlans-access-trunk passes its checks as a member's, and its broken copy (a trunk that forgets VLAN 20) fails the two
checks that mistake breaks, saying which trunk and how to fix it."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_process import Agent
from members import members
from residue import snapshot
from vlan_labs import ADDRESSES, vlan_lab
from vtopo.host.facts import bridge_vlan_filtering
from vtopo.lab import open_lab
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

LAB = "vlans"
REACH = [("h1", "h2"), ("h1", "h4"), ("h3", "h5"), ("h2", "h4")]  # VLAN 10 on s1 and across the trunk, VLAN 20 too
APART = [("h1", "h3"), ("h1", "h5"), ("h3", "h4"), ("h2", "h5")]


def deployed_lab(agent: Agent, user: str, directory: Path, kind: str) -> subprocess.CompletedProcess[str]:
    path = directory / f"{LAB}.vtopo"
    io.save(vlan_lab(kind, LAB), path)
    path.chmod(0o644)
    return agent.vtopo(user, "deploy", str(path))


def prefix_of(agent: Agent, lab: str = LAB) -> str:
    return next(line.split("prefix ")[1].split(")")[0] for line in agent.vtopo(None, "status", lab).stdout.splitlines()
                if line.startswith(f"lab {lab} "))


def pings(agent: Agent, user: str, source: str, destination: str, count: int = 3) -> bool:
    return answers(agent, user, LAB, source, ADDRESSES[destination], count)


def answers(agent: Agent, user: str, lab: str, source: str, address: str, count: int = 3) -> bool:
    """Whether `address` answers `count` pings from node `source` of the member's `lab`."""
    done = agent.vtopo(user, "exec", lab, source, "--", "ping", "-c", str(count), "-i", "0.2", "-W", "1", address)
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: no answer
    return done.returncode == 0


def assert_each_host_reaches_its_own_vlan_only(agent: Agent, user: str) -> None:
    assert {pair: pings(agent, user, *pair) for pair in REACH} == {pair: True for pair in REACH}
    assert {pair: pings(agent, user, *pair, count=2) for pair in APART} == {pair: False for pair in APART}


@contextmanager
def frames_on(device: str, netns: str | None = None) -> Iterator[list[str]]:
    """What tcpdump -e shows of each frame on `device` (in `netns`, or the host's) while the block runs."""
    where = ["ip", "netns", "exec", netns] if netns else []
    dump = subprocess.Popen([*where, "tcpdump", "-e", "-n", "-l", "-i", device], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    shown: list[str] = []
    try:
        assert dump.stderr is not None
        for line in dump.stderr:  # its banner, then "listening on DEVICE", or its error and the end
            if line.startswith("listening on"):
                break
        else:
            raise AssertionError(f"tcpdump on {device} did not start listening")
        yield shown
        time.sleep(0.5)
    finally:
        dump.send_signal(signal.SIGINT)
        out, _ = dump.communicate(timeout=10)
        shown.extend(line for line in out.splitlines() if line.strip())


def switched(frames: list[str], prefix: str, trunk: tuple[str, str] = ("s1-p4", "s2-p3")) -> list[str]:
    """The frames the switches sent on their trunk, without those the host's own kernel sends from the trunk's two
    veth ends (IPv6 router solicitations and multicast reports, untagged, that no switch forwards)."""
    own = {Path(f"/sys/class/net/{prefix}-{end}/address").read_text().strip() for end in trunk}
    return [line for line in frames if line.split()[1] not in own]


def untagged(frames: list[str]) -> list[str]:
    return [line for line in frames if "ethertype 802.1Q (0x8100)" not in line]


def test_ovs_vlans_keep_hosts_apart_on_a_switch_and_across_a_trunk_that_tags_them(
        agent: Agent, users, readable_dir: Path) -> None:
    a = users["a"]
    before = snapshot()
    deployed = deployed_lab(agent, a.pw_name, readable_dir, "ovs")
    assert deployed.returncode == 0, deployed.stderr
    try:
        prefix = prefix_of(agent)
        assert_each_host_reaches_its_own_vlan_only(agent, a.pw_name)
        port = subprocess.run(["ovs-vsctl", "get", "port", f"{prefix}-s1-p1", "tag"], capture_output=True, text=True)
        assert port.stdout.strip() == "10"
        trunk = subprocess.run(["ovs-vsctl", "get", "port", f"{prefix}-s1-p4", "vlan_mode", "trunks"],
                               capture_output=True, text=True)
        assert trunk.stdout.split("\n")[:2] == ["trunk", "[10, 20]"]
        with frames_on(f"{prefix}-s1-p4") as on_trunk, frames_on("eth0", f"{prefix}-h1") as on_access:
            assert pings(agent, a.pw_name, "h1", "h4") and pings(agent, a.pw_name, "h3", "h5")
        icmp = [line for line in on_trunk if "ICMP" in line]
        assert {"vlan 10", "vlan 20"} <= {line.split(": ")[1].split(",")[0] for line in icmp}, on_trunk
        assert switched(on_trunk, prefix) and untagged(switched(on_trunk, prefix)) == []
        assert [line for line in on_access if "ICMP" in line] and not [line for line in on_access if "vlan" in line]
        os.chown(readable_dir, a.pw_uid, a.pw_gid)  # a saves the lab there
        saved = agent.vtopo(a.pw_name, "save", LAB, "-o", str(readable_dir / "saved.vtopo"))
        assert saved.returncode == 0, saved.stderr
        kept = io.load(readable_dir / "saved.vtopo")
        assert {n.name: n.settings.get("vlans") for n in kept.nodes.values() if n.kind == "ovs"} == {
            n.name: n.settings["vlans"] for n in vlan_lab("ovs").nodes.values() if n.kind == "ovs"}
    finally:
        destroyed = agent.vtopo(a.pw_name, "destroy", LAB)
    assert destroyed.returncode == 0, destroyed.stderr
    assert snapshot() - before == {}


def test_linux_bridge_vlans_work_where_the_kernel_filters_them_or_are_refused_in_one_line(
        agent: Agent, users, readable_dir: Path) -> None:
    """Where the kernel has bridge VLAN filtering the Linux bridges do what OVS does; where it has not (this machine's
    kernel), the host probe finds that out and the deploy is refused, naming each switch, before it makes anything."""
    a = users["a"].pw_name
    before = snapshot()
    deployed = deployed_lab(agent, a, readable_dir, "bridge")
    if not bridge_vlan_filtering():
        assert deployed.returncode != 0
        assert ("error: node s1: VLANs on a Linux bridge need the kernel's bridge VLAN filtering "
                "(CONFIG_BRIDGE_VLAN_FILTERING, with 802.1Q), which this kernel does not have: make s1 an Open vSwitch "
                "switch (kind ovs), which does the same VLANs on every host") in deployed.stderr.splitlines()
        assert "Traceback" not in deployed.stderr
        assert snapshot() - before == {}
        return
    assert deployed.returncode == 0, deployed.stderr
    try:
        prefix = prefix_of(agent)
        assert_each_host_reaches_its_own_vlan_only(agent, a)
        shown = subprocess.run(["bridge", "vlan", "show", "dev", f"{prefix}-s1-p1"], capture_output=True, text=True)
        assert "10 PVID Egress Untagged" in " ".join(shown.stdout.split()), shown.stdout
        with frames_on(f"{prefix}-s1-p4") as on_trunk:
            assert pings(agent, a, "h1", "h4") and pings(agent, a, "h3", "h5")
        assert switched(on_trunk, prefix) and untagged(switched(on_trunk, prefix)) == []
    finally:
        destroyed = agent.vtopo(a, "destroy", LAB)
    assert destroyed.returncode == 0, destroyed.stderr
    assert snapshot() - before == {}


LESSON = "vlans-access-trunk"
BROKEN = f"{LESSON}-broken"
LESSON_ADDRESSES = {"h1": "10.0.10.1", "h2": "10.0.20.2", "h3": "10.0.10.3", "h4": "10.0.20.4"}


@dataclass(frozen=True)
class Lesson:
    agent: Agent
    user: str
    broken_deploy: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def lesson() -> Iterator[Lesson]:
    """The teaching lab and its broken copy, whose trunk end s2:p3 forgot VLAN 20, deployed by member a, once for
    this module's tests of them."""
    directory = Path(tempfile.mkdtemp(prefix="vtopo-agent-labs-"))
    directory.chmod(0o755)
    with members() as users, Agent.running() as agent:
        a = users["a"].pw_name
        before = snapshot()
        shutil.copy(TOPOLOGIES / f"{LESSON}.vtopo", directory / f"{LESSON}.vtopo")
        broken = open_lab(TOPOLOGIES / f"{LESSON}.vtopo").topology
        broken.update_lab(name=BROKEN)
        broken.id = f"lab-{BROKEN}"
        broken.update_node("s2", settings={"vlans": {**broken.nodes["s2"].settings["vlans"], "p3": "trunk 10"}})
        io.save(broken, directory / f"{BROKEN}.vtopo")
        for path in directory.iterdir():
            path.chmod(0o644)
        try:
            for lab in (LESSON, BROKEN):
                deployed = agent.vtopo(a, "deploy", str(directory / f"{lab}.vtopo"))
                assert deployed.returncode == 0, deployed.stderr
            yield Lesson(agent, a, deployed)
        finally:
            for lab in (LESSON, BROKEN):
                agent.vtopo(a, "destroy", lab)
            shutil.rmtree(directory, ignore_errors=True)
        assert snapshot() - before == {}


def checked(lesson: Lesson, lab: str) -> tuple[int, dict[str, dict[str, object]]]:
    done = lesson.agent.vtopo(lesson.user, "check", lab, "--json")
    return done.returncode, {c["name"]: c for c in json.loads(done.stdout)["checks"]}


def test_the_vlan_lesson_passes_its_checks_as_a_members_lab(lesson: Lesson) -> None:
    code, checks = checked(lesson, LESSON)
    assert code == 0 and {name: c["why"] for name, c in checks.items() if not c["passed"]} == {}
    assert len(checks) == 8


def test_the_lessons_trunk_tags_every_frame_and_its_access_ports_none(lesson: Lesson) -> None:
    prefix = prefix_of(lesson.agent, LESSON)
    with frames_on(f"{prefix}-s1-p3") as on_trunk, frames_on("eth0", f"{prefix}-h1") as on_access:
        assert answers(lesson.agent, lesson.user, LESSON, "h1", LESSON_ADDRESSES["h3"])
        assert answers(lesson.agent, lesson.user, LESSON, "h2", LESSON_ADDRESSES["h4"])
    icmp = [line for line in on_trunk if "ICMP" in line]
    assert {"vlan 10", "vlan 20"} <= {line.split(": ")[1].split(",")[0] for line in icmp}, on_trunk
    trunk = switched(on_trunk, prefix, ("s1-p3", "s2-p3"))
    assert trunk and untagged(trunk) == []
    assert [line for line in on_access if "ICMP" in line] and not [line for line in on_access if "vlan" in line]


def test_the_lessons_vlans_keep_hosts_apart_even_on_one_subnet(lesson: Lesson) -> None:
    """h2, in VLAN 20, given an address in VLAN 10's subnet beside its own, still reaches no one in VLAN 10, nor does
    anyone in VLAN 10 reach it: ARP requests stay in their VLAN. h3 reaches h1 across the trunk meanwhile."""
    agent, a = lesson.agent, lesson.user
    address = ["ip", "addr", "{}", "10.0.10.2/24", "dev", "eth0"]
    added = agent.vtopo(a, "exec", LESSON, "h2", "--", *[w.format("add") for w in address])
    assert added.returncode == 0, added.stderr
    try:
        assert not answers(agent, a, LESSON, "h2", LESSON_ADDRESSES["h1"], count=2)
        assert not answers(agent, a, LESSON, "h3", "10.0.10.2", count=2)
        assert answers(agent, a, LESSON, "h3", LESSON_ADDRESSES["h1"])
    finally:
        agent.vtopo(a, "exec", LESSON, "h2", "--", *[w.format("del") for w in address])


def test_the_broken_lesson_is_warned_of_and_fails_the_checks_its_trunk_breaks(lesson: Lesson) -> None:
    warning = ("warning: link s1:p3-s2:p3: h2:eth0 and h4:eth0 are in VLAN 20 on 10.0.20.0/24, but VLAN 20 does not "
               "reach from one to the other: the link s1:p3-s2:p3 on the way does not carry VLAN 20 (s2:p3 is a trunk "
               "of VLAN 10), so they cannot reach each other. Carry VLAN 20 across: s2: p3 = trunk 10,20")
    assert f"note: {warning}" in lesson.broken_deploy.stdout.splitlines()  # the agent's progress passes it on
    code, checks = checked(lesson, BROKEN)
    assert code != 0
    assert {name for name, c in checks.items() if not c["passed"]} == {"h2 reaches h4", "h2 and h4 share VLAN 20"}
    gap = ("h2:eth0 is in VLAN 20, which does not reach h4:eth0: the link s1:p3-s2:p3 on the way does not carry VLAN "
           "20 (s2:p3 is a trunk of VLAN 10). Carry it: s2: p3 = trunk 10,20")
    assert str(checks["h2 reaches h4"]["why"]).endswith(f": {gap}"), checks["h2 reaches h4"]["why"]
    assert checks["h2 and h4 share VLAN 20"]["why"] == f"h2:eth0 and h4:eth0 are on separate L2 segments: {gap}"
