"""An OVS switch whose container ports are read through AF_XDP (the `ports: afxdp` setting) on the userspace datapath."""
from __future__ import annotations

import json
import subprocess

import pytest

from tests.labs.test_labs import wait_for
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

pytestmark = pytest.mark.privileged


def afxdp_lab() -> Topology:
    topology = Topology(name="ovs-afxdp")
    topology.add_node(Node(id="sw", name="sw", kind="ovs", settings={"ports": "afxdp"}))
    for port, node in enumerate(("c1", "c2"), start=1):
        topology.add_node(Node(id=node, name=node, kind="container"))
        topology.add_link(Link(id=f"{node}-sw", a=Endpoint(node, "eth0", Interface(addresses=[f"10.83.0.{port}/24"])),
                               b=Endpoint("sw", f"p{port}")))
    return topology


def test_afxdp_ports_carry_tcp_without_retransmits(deployed):
    lab = deployed(afxdp_lab())
    prefix = lab.lab.context.names.prefix
    rows = json.loads(subprocess.run(["ovs-vsctl", "--format=json", "--columns=name,type", "find", "Interface",
                                      f'external_ids:vtopo-lab="{prefix}"'], capture_output=True, text=True).stdout)
    assert sorted(row[1] for row in rows["data"]) == ["afxdp-nonpmd", "afxdp-nonpmd"], rows
    assert lab.pings("c1", "c2")
    server = subprocess.Popen(lab.lab.command_in("c2", ["iperf3", "-s", "-1", "-p", "5302"]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: ":5302" in lab.run("c2", "ss", "-ltn").stdout, 5)
        result = lab.run("c1", "iperf3", "-c", "10.83.0.2", "-p", "5302", "-t", "2", "-J", timeout=20)
        assert result.returncode == 0, result.stdout[-500:]
        end = json.loads(result.stdout)["end"]
        assert end["sum_received"]["bits_per_second"] > 1e6
        assert end["sum_sent"]["retransmits"] < 100, end["sum_sent"]
    finally:
        server.kill()
        server.wait()
