"""What a deploy makes is what its explanation says, as the kernel shows it: a route's destination, gateway and
protocol (`proto static`), a bridge's STP and timers, an interface's MTU and MAC, duplicate address detection."""
from __future__ import annotations

import json
import shlex
import subprocess
from typing import Any

import pytest

from vtopo import ops as o
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

pytestmark = pytest.mark.privileged


def test_the_default_route_of_a_container_is_the_explained_one(deployed):
    running = deployed("l2-vs-l3")
    plan = compile_plan(resolve(running.topology, registry()))
    [route] = [op for op in plan.ops if isinstance(op, o.AddRoute) and op.netns == f"{plan.prefix}-h1"]
    explained = shlex.split(o.script_of(route)[-1])
    shown = subprocess.run(["ip", "-n", route.netns, "route", "show", "default"], capture_output=True, text=True,
                           check=True).stdout.split()
    assert shown[:3] == ["default", "via", route.gateway]
    assert explained[explained.index("proto") + 1] == shown[shown.index("proto") + 1] == "static"


def test_a_bridge_an_interface_and_its_addresses_are_as_explained(deployed):
    """The kernel's own account (`ip -d -j link`, `ip -j addr`) of what a deploy made is what the script says."""
    topology = Topology(name="explained-devices", prefix="vxd")
    topology.add_node(Node(id="br", name="br", kind="bridge", settings={"stp": True, "forward_delay": 4.0,
                                                                        "ageing": 30.5}))
    topology.add_node(Node(id="c1", name="c1", kind="container"))
    topology.add_link(Link(id="l1", a=Endpoint("c1", "eth0", Interface(mac="02:00:00:00:09:01", mtu=1400, addresses=[
        "10.9.0.1/24", "fd00:9::1/64"])), b=Endpoint("br", "p1")))
    running = deployed(topology)
    plan = compile_plan(resolve(running.topology, registry()))
    netns = f"{plan.prefix}-c1"
    [bridge] = [shlex.split(line) for op in plan.ops if isinstance(op, o.CreateBridge) for line in o.script_of(op)]
    [details] = _json("ip", "-d", "-j", "link", "show", "dev", bridge[3])
    shown = details["linkinfo"]["info_data"]
    for option in ("stp_state", "forward_delay", "ageing_time"):
        assert shown[option] == int(bridge[bridge.index(option) + 1]), option
    [configure] = [shlex.split(line) for op in plan.ops if isinstance(op, o.ConfigureLink) and op.netns == netns
                   and op.name == "eth0" for line in o.script_of(op)]
    [link] = _json("ip", "-n", netns, "-j", "link", "show", "dev", "eth0")
    assert link["mtu"] == int(configure[configure.index("mtu") + 1]) == 1400
    assert link["address"] == configure[configure.index("address") + 1] == "02:00:00:00:09:01"
    [addresses] = _json("ip", "-n", netns, "-j", "addr", "show", "dev", "eth0")
    flags = {info["local"]: bool(info.get("nodad")) for info in addresses["addr_info"]}
    for op in plan.ops:
        if isinstance(op, o.AddAddress) and op.netns == netns:
            [words] = [shlex.split(line) for line in o.script_of(op)]
            assert flags[words[words.index("add") + 1].split("/")[0]] == (words[-1] == "nodad"), op


def _json(*argv: str) -> Any:
    return json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
