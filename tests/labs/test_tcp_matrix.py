"""TCP (iperf3, 2 s) between every pair of node kinds that can share a switch, on every switch kind: a Linux bridge,
Open vSwitch (userspace datapath here), a macvlan segment and a macvtap segment. One VM with a NIC on each switch
serves every case it is in: VMs boot slowly under TCG."""
from __future__ import annotations

import json
import subprocess
import time
from itertools import combinations

import pytest

from tests.labs.test_vms import guest_image, wait_ready  # noqa: F401  (guest_image is an autouse fixture)
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

pytestmark = pytest.mark.privileged

SWITCHES = {"br": ("bridge", 91), "sw": ("ovs", 92), "mv": ("macvlan", 93), "mt": ("macvtap", 94)}
HOST_OCTET = {"c": 10, "r": 1, "vm": 20, "host": 30}
GUEST_IPERF_PORT = 5201  # the guest's standing iperf3 -s


def members(switch: str) -> list[str]:
    """The nodes on a switch: the VM and the host are shared, containers and routers have one per switch."""
    kind = SWITCHES[switch][0]
    names = {"macvlan": [f"c{switch}", f"r{switch}", "host"], "macvtap": ["vm", "host"]}
    return names.get(kind, [f"c{switch}", f"r{switch}", "vm", "host"])


def address(switch: str, node: str) -> str:
    role = node if node in ("vm", "host") else node[0]
    return f"10.{SWITCHES[switch][1]}.0.{HOST_OCTET[role]}"


def matrix_lab() -> Topology:
    topology = Topology(name="tcp-matrix")
    topology.add_node(Node(id="vm", name="vm", kind="vm"))
    topology.add_node(Node(id="host", name="host", kind="host"))
    nics = {"vm": 0, "host": 0}
    for switch, (kind, _octet) in SWITCHES.items():
        topology.add_node(Node(id=switch, name=switch, kind=kind, settings={"mode": "bridge"} if "mac" in kind else {}))
        for port, node in enumerate(members(switch), start=1):
            if node not in nics:
                topology.add_node(Node(id=node, name=node, kind="container" if node[0] == "c" else "router"))
                nics[node] = 0
            own_port = f"nic{nics[node]}" if node == "vm" else f"eth{nics[node]}"
            nics[node] += 1
            topology.add_link(Link(id=f"{node}-{switch}", a=Endpoint(node, own_port,
                                                                       Interface(addresses=[f"{address(switch, node)}/24"])),
                                   b=Endpoint(switch, f"p{port}" if kind in ("bridge", "ovs") else f"c{port}")))
    return topology


def tcp_bits_per_second(lab, switch: str, a: str, b: str) -> float:  # type: ignore[no-untyped-def]
    """Client in one node, server in the other (the guest's standing server when the VM is one end)."""
    client, server = (b, a) if a == "vm" else (a, b)
    port = GUEST_IPERF_PORT if server == "vm" else 5310
    listener = None
    if server != "vm":
        listener = subprocess.Popen(lab.lab.command_in(server, ["iperf3", "-s", "-1", "-p", str(port)]),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)
    try:
        result = lab.run(client, "iperf3", "-c", address(switch, server), "-p", str(port), "-t", "2", "-J",
                         "--connect-timeout", "3000", timeout=30)
        report = json.loads(result.stdout or "{}")
        assert "error" not in report, f"{switch}: {client} -> {server}: {report.get('error')}"
        return float(report["end"]["sum_received"]["bits_per_second"])
    finally:
        if listener is not None:
            listener.kill()
            listener.wait()


def test_tcp_between_every_pair_of_kinds_on_every_switch(deployed):
    lab = deployed(matrix_lab())
    wait_ready(lab.lab.context.names.prefix, "vm")
    rates = {}
    for switch in SWITCHES:
        for a, b in combinations(members(switch), 2):
            rates[f"{switch}: {a} -> {b}"] = tcp_bits_per_second(lab, switch, a, b)
    print("\n".join(f"{pair:<24} {rate / 1e6:8.1f} Mb/s" for pair, rate in rates.items()))
    assert len(rates) == 16 and all(rate > 1e6 for rate in rates.values()), rates
