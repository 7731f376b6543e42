"""Every non-VM lab in topologies/ deploys for real, passes the traffic it should, and is destroyed without a trace."""
from __future__ import annotations

import json
import re
import subprocess

import pytest

from waiting import wait_for

pytestmark = pytest.mark.privileged


def test_bridge_veth(deployed):
    lab = deployed("bridge-veth")
    assert lab.pings("c1", "c2") and lab.pings("c1", "c3")
    bridge = lab.lab.context.names.node_device("br0")
    details = subprocess.run(["ip", "-d", "link", "show", "master", bridge], capture_output=True, text=True).stdout
    assert details.count("veth") == 3 and "bridge_slave" in details
    node_end = lab.run("c1", "ip", "-d", "link", "show", "eth0").stdout
    assert "veth" in node_end
    one_queue = "numtxqueues 1 numrxqueues 1"  # each end, where the kernel would give one per CPU
    assert details.count(one_queue) == 3 and one_queue in node_end, (details, node_end)


def test_macvlan_bridge_mode_siblings_and_host_reach_each_other(deployed):
    lab = deployed("macvlan-bridge")
    assert lab.pings("c1", "c2")
    assert lab.pings("host", "c1"), "the host reaches a container through its own bridge-mode macvlan"
    assert "macvlan mode bridge" in lab.run("c1", "ip", "-d", "link", "show", "eth0").stdout


def test_macvlan_private_mode_siblings_cannot_reach_each_other(deployed):
    lab = deployed("macvlan-private")
    assert "macvlan mode private" in lab.run("c1", "ip", "-d", "link", "show", "eth0").stdout
    assert not lab.pings("c1", "c2")


def test_macvlan_vepa_mode_goes_through_the_hairpin(deployed):
    lab = deployed("macvlan-vepa")
    assert "macvlan mode vepa" in lab.run("c1", "ip", "-d", "link", "show", "eth0").stdout
    assert lab.pings("c1", "c2")


def test_ovs_openflow_rules_steer_traffic_and_tcp_passes(deployed):
    lab = deployed("ovs-openflow")
    bridge = next(line for line in subprocess.run(["ovs-vsctl", "list-br"], capture_output=True, text=True)
                  .stdout.split() if line.endswith("-sw"))
    columns = json.loads(subprocess.run(["ovs-vsctl", "--format=json", "--columns=datapath_type,external_ids",
                                         "list", "Bridge", bridge], capture_output=True, text=True).stdout)
    assert columns["data"][0][0] == "netdev" and ["vtopo-lab", bridge.split("-")[0]] in columns["data"][0][1][1]
    assert lab.pings("c1", "c3")
    assert not lab.pings("c1", "c2"), "port 2 is cut off by the rules"
    flows = subprocess.run(["ovs-ofctl", "dump-flows", bridge], capture_output=True, text=True).stdout
    steering = next(line for line in flows.splitlines() if "in_port=1" in line)
    assert int(re.search(r"n_packets=(\d+)", steering).group(1)) > 0
    assert "tun type tap" in lab.run("c1", "ip", "-d", "link", "show", "eth0").stdout, "eth0 is the switch's own port"
    server = subprocess.Popen(lab.lab.command_in("c3", ["iperf3", "-s", "-1", "-p", "5301"]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: ":5301" in lab.run("c3", "ss", "-ltn").stdout, 5)
        result = lab.run("c1", "iperf3", "-c", lab.address("c1", "c3"), "-p", "5301", "-t", "2", "-J", timeout=20)
        assert result.returncode == 0, result.stdout[-500:]
        received = json.loads(result.stdout)["end"]["sum_received"]["bits_per_second"]
        assert received > 1e6, f"TCP through the userspace datapath: {received / 1e6:.1f} Mb/s"
    finally:
        server.kill()
        server.wait()


def test_l2_vs_l3_ospf_converges_and_routes(deployed):
    lab = deployed("l2-vs-l3")
    assert lab.pings("h1", "h2"), "same bridge: switched"

    def full() -> bool:
        return lab.run("r1", "vtysh", "-c", "show ip ospf neighbor").stdout.count("Full") >= 1

    assert wait_for(full, 20), lab.run("r1", "vtysh", "-c", "show ip ospf neighbor").stdout
    # Each router runs its own SPF after its own delay: r2 may install its route a moment after r1 does.
    assert wait_for(lambda: "10.2.0.0/24" in lab.run("r1", "ip", "route", "show", "proto", "ospf").stdout, 15)
    assert wait_for(lambda: "10.1.0.0/24" in lab.run("r2", "ip", "route", "show", "proto", "ospf").stdout, 15)
    assert wait_for(lambda: lab.pings("h1", "h3"), 10), "routed across two OSPF routers"


def test_host_routes_between_numbered_bridges(deployed):
    forwarding = open("/proc/sys/net/ipv4/ip_forward").read()
    lab = deployed("host-routed-bridges")
    assert lab.pings("c1", "c2") and lab.pings("c1", "c3")
    assert open("/proc/sys/net/ipv4/ip_forward").read() == forwarding, "the host's global setting is untouched"
