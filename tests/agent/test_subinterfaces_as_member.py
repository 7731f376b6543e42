"""802.1Q subinterfaces and an L3 switch, deployed by a member through the agent: router-on-a-stick and l3-switch pass
their checks (hosts ping across VLANs through the router's subinterfaces or the switch's SVIs), the node shows each
subinterface in its VLAN (a kernel VLAN device where the host has 8021q, else a port OVS tags), FRR runs OSPF on it,
the switch routes in a namespace of the member's user namespace, and destroy leaves nothing. On a Linux bridge, which
makes no tagged ports, subinterfaces are kernel VLAN devices where the kernel has 8021q, and where it has not (this
machine's kernel) the deploy is refused in one line before anything is made."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agent_process import Agent
from residue import snapshot
from security.attacks import owning_userns
from vtopo.host.facts import vlan_devices
from vtopo.model import io
from vtopo.model.topology import Endpoint, Interface, Link, Node, Position, Subinterface, Topology
from vtopo.ops import NETNS_DIR
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

SETTLED_WITHIN_S = 20.0


def deployed(agent: Agent, user: str, directory: Path, name: str) -> subprocess.CompletedProcess[str]:
    path = directory / f"{name}.vtopo"
    shutil.copy(TOPOLOGIES / path.name, path)
    path.chmod(0o644)
    return agent.vtopo(user, "deploy", str(path))


def prefix_of(agent: Agent, name: str) -> str:
    return next(line.split("prefix ")[1].split(")")[0] for line in agent.vtopo(None, "status", name).stdout.splitlines()
                if line.startswith(f"lab {name} "))


def failed_checks(agent: Agent, user: str, name: str) -> dict[str, str]:
    """The lab's checks that fail, once they all pass or SETTLED_WITHIN_S has gone by (IPv6 neighbours settle)."""
    deadline = time.monotonic() + SETTLED_WITHIN_S
    while True:
        done = agent.vtopo(user, "check", name, "--json")
        failed = {c["name"]: c["why"] for c in json.loads(done.stdout)["checks"] if not c["passed"]}
        if not failed or time.monotonic() > deadline:
            return failed
        time.sleep(1)


def in_node(agent: Agent, user: str, lab: str, node: str, *argv: str) -> str:
    done = agent.vtopo(user, "exec", lab, node, "--", *argv)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def ovs_tag(port: str) -> str:
    return subprocess.run(["ovs-vsctl", "get", "port", port, "tag"], capture_output=True, text=True).stdout.strip()


def assert_in_vlan(agent: Agent, user: str, lab: str, node: str, name: str, vlan: int, ovs_port: str) -> None:
    """`name` in `node` is in VLAN `vlan`: a VLAN device of that id, or, without 8021q, the OVS port it is tags it."""
    shown = " ".join(in_node(agent, user, lab, node, "ip", "-d", "link", "show", name).split())
    if vlan_devices():
        assert f"vlan protocol 802.1Q id {vlan} " in shown, shown
    else:
        assert ovs_tag(ovs_port) == str(vlan)


def subinterfaces(topology: Topology) -> dict[str, list[Subinterface]]:
    return {f"{topology.nodes[end.node].name}:{end.port}": end.interface.subinterfaces
            for link in topology.links.values() for end in link.ends if end.interface.subinterfaces}


@contextmanager
def passing(agent: Agent, user: str, directory: Path, lab: str, across: tuple[str, str]) -> Iterator[str]:
    """The shipped `lab` deployed by `user`, its checks all passing and the `across` host pinging the other, across
    VLANs; its prefix while the block runs; destroyed after, leaving nothing."""
    before = snapshot()
    done = deployed(agent, user, directory, lab)
    assert done.returncode == 0, done.stderr
    try:
        assert failed_checks(agent, user, lab) == {}
        source, address = across
        assert " 0% packet loss" in in_node(agent, user, lab, source, "ping", "-c", "3", "-i", "0.2", address)
        yield prefix_of(agent, lab)
    finally:
        destroyed = agent.vtopo(user, "destroy", lab)
    assert destroyed.returncode == 0, destroyed.stderr
    assert snapshot() - before == {}


def test_router_on_a_stick_routes_between_vlans_through_one_trunked_port(agent: Agent, users, readable_dir: Path
                                                                        ) -> None:
    member, lab = users["a"], "router-on-a-stick"
    a = member.pw_name
    with passing(agent, a, readable_dir, lab, ("h1", "10.0.20.12")) as prefix:
        for vlan in (10, 20):
            assert_in_vlan(agent, a, lab, "r1", f"eth0.{vlan}", vlan, f"{prefix}-s1-p4.{vlan}")
        ospf = in_node(agent, a, lab, "r1", "vtysh", "-c", "show ip ospf interface eth0.10")
        assert "Internet Address 10.0.10.1/24" in ospf, ospf
        ospf6 = in_node(agent, a, lab, "r1", "vtysh", "-c", "show ipv6 ospf6 interface eth0.20")
        assert "2001:db8:20::1/64" in ospf6, ospf6
        os.chown(readable_dir, member.pw_uid, member.pw_gid)  # a saves the lab there
        saved = agent.vtopo(a, "save", lab, "-o", str(readable_dir / "saved.vtopo"))
        assert saved.returncode == 0, saved.stderr
        assert subinterfaces(io.load(readable_dir / "saved.vtopo")) == subinterfaces(io.load(TOPOLOGIES / f"{lab}.vtopo"))


def test_an_l3_switch_routes_between_its_vlans_inside_the_members_user_namespace(agent: Agent, users,
                                                                                   readable_dir: Path) -> None:
    with passing(agent, users["a"].pw_name, readable_dir, "l3-switch", ("h1", "10.0.20.13")) as prefix:
        assert (ovs_tag(f"{prefix}-s1-vlan10"), ovs_tag(f"{prefix}-s1-vlan20")) == ("10", "20")
        switch = f"{NETNS_DIR}/{prefix}-s1"
        kept = os.stat(f"/run/vtopo/ns/{prefix}/user")
        assert owning_userns(switch) == (kept.st_dev, kept.st_ino)
        inside = subprocess.run(["ip", "-n", f"{prefix}-s1", "-br", "address", "show", "vlan10"], capture_output=True,
                                text=True)
        assert "10.0.10.1/24" in inside.stdout, inside.stdout + inside.stderr
        host = subprocess.run(["ip", "-br", "address"], capture_output=True, text=True).stdout
        assert "10.0.10.1/" not in host and "10.0.20.1/" not in host  # nothing of the switch in the host's netns


def tagged_on_a_bridge() -> Topology:
    """h1 (VLAN 10) and h2 (VLAN 20) reach each other through r1, every one of them by a subinterface, over a Linux
    bridge that keeps no VLANs and passes every frame as it came, tag and all."""
    topology = Topology(name="tagged-bridge", id="lab-tagged-bridge")
    topology.add_node(Node("s1", "s1", "bridge", {}, Position(200, 100)))
    topology.add_node(Node("r1", "r1", "router", {}, Position(200, 0)))
    topology.add_link(Link("link-r1", Endpoint("r1", "eth0", Interface(subinterfaces=[
        Subinterface(10, ["10.0.10.1/24"]), Subinterface(20, ["10.0.20.1/24"])])), Endpoint("s1", "p1")))
    for index, (host, vlan) in enumerate((("h1", 10), ("h2", 20)), 2):
        topology.add_node(Node(host, host, "container", {"default_route": f"10.0.{vlan}.1"}, Position(100 * index, 200)))
        topology.add_link(Link(f"link-{host}", Endpoint(host, "eth0", Interface(subinterfaces=[
            Subinterface(vlan, [f"10.0.{vlan}.{10 + index}/24"])])), Endpoint("s1", f"p{index}")))
    return topology


def test_on_a_linux_bridge_subinterfaces_are_kernel_vlan_devices_or_refused_in_one_line(agent: Agent, users,
                                                                                        readable_dir: Path) -> None:
    """Where the kernel has 8021q, every subinterface is a VLAN device and the tags cross the bridge untouched; where
    it has not (this machine's kernel), the host probe finds that out and the deploy is refused, naming each node and
    interface, before it makes anything."""
    a = users["a"].pw_name
    before = snapshot()
    path = readable_dir / "tagged-bridge.vtopo"
    io.save(tagged_on_a_bridge(), path)
    path.chmod(0o644)
    done = agent.vtopo(a, "deploy", str(path))
    if not vlan_devices():
        assert done.returncode != 0
        lines = done.stderr.splitlines()
        assert ("error: node r1: r1:eth0: subinterfaces eth0.10, eth0.20 need the kernel's 802.1Q VLAN devices (8021q, "
                "CONFIG_VLAN_8021Q), which this kernel does not have, and eth0 is linked to s1, a Linux bridge, which "
                "cannot make them as tagged ports: link eth0 to an Open vSwitch switch (kind ovs), which makes them on "
                "every host") in lines
        assert ("error: node h1: h1:eth0: subinterface eth0.10 needs the kernel's 802.1Q VLAN devices (8021q, "
                "CONFIG_VLAN_8021Q), which this kernel does not have, and eth0 is linked to s1, a Linux bridge, which "
                "cannot make them as tagged ports: link eth0 to an Open vSwitch switch (kind ovs), which makes them on "
                "every host") in lines
        assert "Traceback" not in done.stderr
        assert snapshot() - before == {}
        return
    assert done.returncode == 0, done.stderr
    try:
        assert " 0% packet loss" in in_node(agent, a, "tagged-bridge", "h1", "ping", "-c", "3", "-i", "0.2",
                                            "10.0.20.13")
        for node, vlan in (("r1", 10), ("r1", 20), ("h1", 10)):
            assert_in_vlan(agent, a, "tagged-bridge", node, f"eth0.{vlan}", vlan, "")
    finally:
        destroyed = agent.vtopo(a, "destroy", "tagged-bridge")
    assert destroyed.returncode == 0, destroyed.stderr
    assert snapshot() - before == {}
