"""Labs spread over the real host and two simulated ones (scripts/sim-host.sh), deployed through each site's agent
over ssh: traffic crosses the tunnels, a bridge over three sites is one broadcast domain, routers converge over a
tunnel, and a failure anywhere leaves nothing anywhere."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from sites.simulated import Sites
from spread_labs import LabBuilder
from vtopo.kinds.environment import default_prefix

pytestmark = pytest.mark.privileged


def exec_argv(sites: Sites, lab: str, node: str, *argv: str) -> list[str]:
    return [sys.executable, "-m", "vtopo", "exec", lab, node, "--", *argv]


def run_on(sites: Sites, site: str, lab: str, node: str, *argv: str, timeout: float = 60
           ) -> subprocess.CompletedProcess[str]:
    """`argv` in a node, through the agent of the node's site (exec is not yet carried across sites)."""
    if site == "":
        return sites.agent.vtopo(None, "exec", lab, node, "--", *argv, timeout=timeout)
    host = sites.b if site == "b" else sites.c
    return host.vtopo("exec", lab, node, "--", *argv, timeout=timeout)


def two_containers(sites: Sites) -> LabBuilder:
    lab = sites.builder("pair")
    lab.node("c1", "container")
    lab.node("c2", "container", site="b")
    lab.link("c1", "c2", "10.0.0.1/24", "10.0.0.2/24")
    return lab


def test_ping_and_iperf_cross_a_tunnel(spread: Sites):
    deployed = spread.deploy(two_containers(spread))
    assert deployed.returncode == 0, deployed.stderr
    try:
        assert run_on(spread, "", "pair", "c1", "ping", "-c", "3", "-i", "0.2", "-W", "2", "10.0.0.2").returncode == 0
        assert run_on(spread, "b", "pair", "c2", "ping", "-c", "1", "-W", "2", "-M", "do", "-s", "1422",
                      "10.0.0.1").returncode == 0  # a full 1450-byte packet passes: the MTU was lowered
        details = run_on(spread, "b", "pair", "c2", "ip", "-d", "link", "show", "eth0").stdout
        assert "vxlan id 1" in details and "remote 198.18.0.1" in details and "mtu 1450" in details
        server = subprocess.Popen(exec_argv(spread, "pair", "c1", "iperf3", "-s", "-1"), env=spread.agent.env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            client = None
            for _ in range(50):
                client = run_on(spread, "b", "pair", "c2", "iperf3", "-c", "10.0.0.1", "-t", "2", "-J")
                if client.returncode == 0:
                    break
            assert client is not None and client.returncode == 0, client.stdout if client else ""
            bits = json.loads(client.stdout)["end"]["sum_received"]["bits_per_second"]
            print(f"iperf3 across the tunnel: {bits / 1e6:.0f} Mbit/s")
            assert bits > 1e6
        finally:
            server.kill()
            server.wait()
    finally:
        destroyed = spread.vtopo("destroy", "pair")
        assert destroyed.returncode == 0, destroyed.stderr
    assert "destroyed site b's part of lab pair" in destroyed.stdout


def test_a_bridge_over_three_sites_is_one_broadcast_domain(spread: Sites):
    """br0 is here, with a copy on b (two of its nodes are there) joined by one tunnel, and a tunnel to c3 on c."""
    lab = spread.builder("span")
    lab.node("br0", "bridge")
    for index, site in enumerate(("", "b", "c", "b"), start=1):
        lab.node(f"c{index}", "container", site=site)
        lab.link(f"c{index}", "br0", f"10.0.1.{index}/24")
    deployed = spread.deploy(lab)
    assert deployed.returncode == 0, deployed.stderr
    try:
        listeners = []
        for site, node in (("", "c1"), ("c", "c3"), ("b", "c4")):
            argv = ["tcpdump", "-c", "1", "-lni", "eth0", "arp and host 10.0.1.2 and host 10.0.1.3"]
            if site:
                command = (spread.b if site == "b" else spread.c).vtopo_argv("exec", "span", node, "--", *argv)
            else:
                command = exec_argv(spread, "span", node, *argv)
            listener = subprocess.Popen(command, env=spread.agent.env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
            assert listener.stderr is not None
            while "listening on" not in (line := listener.stderr.readline()):
                assert line, "tcpdump ended before it listened"
            listeners.append(listener)
        assert run_on(spread, "b", "span", "c2", "ping", "-c", "2", "-W", "2", "10.0.1.3").returncode == 0
        for listener in listeners:  # c2's ARP request for c3 reached every site
            out, _ = listener.communicate(timeout=10)
            assert "Request who-has 10.0.1.3 tell 10.0.1.2" in out
        assert run_on(spread, "", "span", "c1", "ping", "-c", "1", "-W", "2", "10.0.1.2").returncode == 0
    finally:
        destroyed = spread.vtopo("destroy", "span")
        assert destroyed.returncode == 0, destroyed.stderr


def test_a_failure_on_the_second_site_rolls_back_all_three(spread: Sites):
    lab = spread.builder("fail")
    lab.node("br0", "bridge")
    for index, site in enumerate(("", "b", "c"), start=1):
        lab.node(f"c{index}", "container", site=site)
        lab.link(f"c{index}", "br0", f"10.0.2.{index}/24")
    in_the_way = f"{default_prefix('fail')}-c2"
    assert spread.b.run("ip", "netns", "add", in_the_way).returncode == 0  # the second site cannot make c2
    try:
        deployed = spread.deploy(lab)
    finally:
        spread.b.run("ip", "netns", "del", in_the_way)
    assert deployed.returncode == 1
    assert "site b:" in deployed.stderr and "every site's part was rolled back" in deployed.stderr
    assert not [line for line in spread.vtopo("status").stdout.splitlines() if line.startswith("lab fail ")]


def test_kill_9_of_a_sites_agent_then_cleanup_there(spread: Sites):
    lab = two_containers(spread)
    lab.topology.name = "killed"
    deployed = spread.deploy(lab)
    assert deployed.returncode == 0, deployed.stderr
    os.kill(spread.b.agent_pid, signal.SIGKILL)
    destroyed = spread.vtopo("destroy", "killed")
    assert destroyed.returncode == 1 and "site b" in destroyed.stderr, destroyed.stderr
    assert spread.b.residue(), "site b keeps its part while its agent is down"
    spread.b.start_agent()
    cleaned = spread.b.vtopo("cleanup")
    assert cleaned.returncode == 0 and "destroyed lab killed" in cleaned.stdout, cleaned.stdout + cleaned.stderr


def test_ospf_converges_across_a_tunnel(spread: Sites):
    lab = spread.builder("ospf")
    lab.node("h1", "container", default_route="10.1.0.1")
    lab.node("r1", "router", passive=["eth0"])
    lab.node("r2", "router", site="b", passive=["eth0"])
    lab.node("h2", "container", site="b", default_route="10.2.0.1")
    lab.link("h1", "r1", "10.1.0.10/24", "10.1.0.1/24")
    lab.link("r2", "h2", "10.2.0.1/24", "10.2.0.10/24")
    lab.link("r1", "r2", "10.0.12.1/30", "10.0.12.2/30")
    deployed = spread.deploy(lab)
    assert deployed.returncode == 0, deployed.stderr
    try:
        reached = False
        for _ in range(60):
            if run_on(spread, "", "ospf", "h1", "ping", "-c", "1", "-W", "1", "10.2.0.10").returncode == 0:
                reached = True
                break
        assert reached, "h1 never reached h2 over OSPF's routes"
        routes = run_on(spread, "b", "ospf", "r2", "vtysh", "-c", "show ip route ospf").stdout
        assert "10.1.0.0/24" in routes and "via 10.0.12.1" in routes, routes
    finally:
        destroyed = spread.vtopo("destroy", "ospf")
        assert destroyed.returncode == 0, destroyed.stderr
