"""Labs spread over the real host and two simulated ones (scripts/sim-host.sh), deployed through each site's agent
over ssh: traffic crosses the tunnels, a bridge over three sites is one broadcast domain, routers converge over a
tunnel, and a failure anywhere leaves nothing anywhere."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sites.simulated import Sites
from spread_labs import LabBuilder, here, vlans_over_two_sites
from waiting import wait_for
from vtopo.lab_terms import default_prefix

pytestmark = pytest.mark.privileged


def exec_argv(sites: Sites, lab: str, node: str, *argv: str) -> list[str]:
    return [sys.executable, "-m", "vtopo", "exec", lab, node, "--", *argv]


def run_in(sites: Sites, lab: str, node: str, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`argv` in a node, from this machine: `vtopo exec` runs it on the node's own site, over ssh when that is
    another machine."""
    return sites.agent.vtopo(None, "exec", lab, node, "--", *argv, timeout=timeout)


@contextmanager
def deployed(sites: Sites, lab: LabBuilder) -> Iterator[subprocess.CompletedProcess[str]]:
    """The lab deployed over its sites for the block, then destroyed: what destroy said."""
    deploying = sites.deploy(lab)
    assert deploying.returncode == 0, deploying.stderr
    said = subprocess.CompletedProcess[str]([], 0, "", "")
    try:
        yield said
    finally:
        destroyed = sites.vtopo("destroy", lab.topology.name)
        assert destroyed.returncode == 0, destroyed.stderr
        said.stdout = destroyed.stdout


def two_containers(sites: Sites) -> LabBuilder:
    lab = sites.builder("pair")
    lab.node("c1", "container")
    lab.node("c2", "container", site="b")
    lab.link("c1", "c2", "10.0.0.1/24", "10.0.0.2/24")
    return lab


def test_ping_and_iperf_cross_a_tunnel(spread: Sites):
    with deployed(spread, two_containers(spread)) as destroyed:
        assert run_in(spread, "pair", "c1", "ping", "-c", "3", "-i", "0.2", "-W", "2", "10.0.0.2").returncode == 0
        assert run_in(spread, "pair", "c2", "ping", "-c", "1", "-W", "2", "-M", "do", "-s", "1422",
                      "10.0.0.1").returncode == 0  # a full 1450-byte packet passes: the MTU was lowered
        details = run_in(spread, "pair", "c2", "ip", "-d", "link", "show", "eth0").stdout
        assert "vxlan id 1" in details and "remote 198.18.0.1" in details and "mtu 1450" in details
        server = subprocess.Popen(exec_argv(spread, "pair", "c1", "iperf3", "-s", "-1"), env=spread.agent.env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            client = None
            for _ in range(50):
                client = run_in(spread, "pair", "c2", "iperf3", "-c", "10.0.0.1", "-t", "2", "-J")
                if client.returncode == 0:
                    break
            assert client is not None and client.returncode == 0, client.stdout if client else ""
            bits = json.loads(client.stdout)["end"]["sum_received"]["bits_per_second"]
            print(f"iperf3 across the tunnel: {bits / 1e6:.0f} Mbit/s")
            assert bits > 1e6
        finally:
            server.kill()
            server.wait()
    assert "destroyed site b's part of lab pair" in destroyed.stdout


def capture_from_here(sites: Sites, lab: str, target: str, *options: str) -> subprocess.Popen[str]:
    """`vtopo capture` on this machine, once it says it listens."""
    capture = subprocess.Popen([sys.executable, "-m", "vtopo", "capture", lab, target, *options], env=sites.agent.env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert capture.stderr is not None
    while not (line := capture.stderr.readline()).startswith("capturing on"):
        assert line, f"the capture ended before it listened: {capture.communicate()}"
    return capture


def processes_running(words: str) -> list[int]:
    """The processes whose command line contains `words` (on every simulated host: they share the pid namespace)."""
    found = []
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and words in Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_a_capture_from_here_on_another_sites_end_sees_the_tunnels_traffic(spread: Sites, tmp_path: Path):
    lab = two_containers(spread)
    lab.topology.name = "seen"
    with deployed(spread, lab):
        saved = tmp_path / "c2.pcapng"
        capture = capture_from_here(spread, "seen", "c2:eth0", "-f", "icmp", "-c", "4", "-w", str(saved))
        assert run_in(spread, "seen", "c1", "ping", "-c", "2", "-i", "0.2", "-W", "2", "10.0.0.2").returncode == 0
        out, err = capture.communicate(timeout=30)
        lines = out.splitlines()
        assert len(lines) == 4 and all("10.0.0.1" in line and "10.0.0.2" in line for line in lines), out + err
        assert "4 packets captured" in err and f"saved in {saved}" in err
        read = subprocess.run(["tshark", "-r", str(saved), "-T", "fields", "-e", "icmp.type"], capture_output=True,
                              text=True, check=True).stdout.split()
        assert read == ["8", "0", "8", "0"]
        files = set(Path(tempfile.gettempdir()).glob("vtopo-capture-*"))
        endless = capture_from_here(spread, "seen", "c2:eth0")  # stopped here with Ctrl-C: nothing goes on there
        endless.send_signal(signal.SIGINT)  # as soon as it says it listens
        endless.communicate(timeout=30)
        assert wait_for(lambda: not processes_running("capture seen c2:eth0 --pcap"), 10)
        assert set(Path(tempfile.gettempdir()).glob("vtopo-capture-*")) == files  # its file went with it


def test_a_node_on_another_site_is_stopped_and_started_from_here(spread: Sites):
    lab = two_containers(spread)
    lab.topology.name = "operated"
    with deployed(spread, lab):
        stopped = spread.vtopo("node", "operated", "c2", "stop")
        assert stopped.returncode == 0 and "c2" in stopped.stdout, stopped.stderr
        assert run_in(spread, "operated", "c1", "ping", "-c", "1", "-W", "1", "10.0.0.2").returncode != 0
        assert spread.vtopo("node", "operated", "c2", "start").returncode == 0
        assert wait_for(lambda: run_in(spread, "operated", "c1", "ping", "-c", "1", "-W", "1",
                                       "10.0.0.2").returncode == 0, 15)


def test_a_bridge_over_three_sites_is_one_broadcast_domain(spread: Sites):
    """br0 is here, with a copy on b (two of its nodes are there) joined by one tunnel, and a tunnel to c3 on c."""
    lab = spread.builder("span")
    lab.node("br0", "bridge")
    for index, site in enumerate(("", "b", "c", "b"), start=1):
        lab.node(f"c{index}", "container", site=site)
        lab.link(f"c{index}", "br0", f"10.0.1.{index}/24")
    with deployed(spread, lab):
        listeners = []
        for node in ("c1", "c3", "c4"):  # here, on c and on b
            argv = ["tcpdump", "-c", "1", "-lni", "eth0", "arp and host 10.0.1.2 and host 10.0.1.3"]
            command = exec_argv(spread, "span", node, *argv)
            listener = subprocess.Popen(command, env=spread.agent.env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
            assert listener.stderr is not None
            while "listening on" not in (line := listener.stderr.readline()):
                assert line, "tcpdump ended before it listened"
            listeners.append(listener)
        assert run_in(spread, "span", "c2", "ping", "-c", "2", "-W", "2", "10.0.1.3").returncode == 0
        for listener in listeners:  # c2's ARP request for c3 reached every site
            out, _ = listener.communicate(timeout=10)
            assert "Request who-has 10.0.1.3 tell 10.0.1.2" in out
        assert run_in(spread, "span", "c1", "ping", "-c", "1", "-W", "2", "10.0.1.2").returncode == 0


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
    assert spread.b.residue(), "site b keeps its part while its agent is down"
    cleaned = spread.b.vtopo("cleanup")  # root there needs no agent running
    assert cleaned.returncode == 0 and "destroyed lab killed" in cleaned.stdout, cleaned.stdout + cleaned.stderr
    assert spread.b.residue() == []
    destroyed = spread.vtopo("destroy", "killed")
    assert destroyed.returncode == 0, destroyed.stderr
    assert "site b had nothing left of lab killed" in destroyed.stdout
    spread.b.start_agent()


def test_ospf_converges_across_a_tunnel(spread: Sites):
    lab = spread.builder("ospf")
    lab.node("h1", "container", default_route="10.1.0.1")
    lab.node("r1", "router", passive=["eth0"])
    lab.node("r2", "router", site="b", passive=["eth0"])
    lab.node("h2", "container", site="b", default_route="10.2.0.1")
    lab.link("h1", "r1", "10.1.0.10/24", "10.1.0.1/24")
    lab.link("r2", "h2", "10.2.0.1/24", "10.2.0.10/24")
    lab.link("r1", "r2", "10.0.12.1/30", "10.0.12.2/30")
    with deployed(spread, lab):
        reached = False
        for _ in range(60):
            if run_in(spread, "ospf", "h1", "ping", "-c", "1", "-W", "1", "10.2.0.10").returncode == 0:
                reached = True
                break
        assert reached, "h1 never reached h2 over OSPF's routes"
        routes = run_in(spread, "ospf", "r2", "vtysh", "-c", "show ip route ospf").stdout
        assert "10.1.0.0/24" in routes and "via 10.0.12.1" in routes, routes


def test_a_vlan_crosses_sites_on_the_trunk_with_its_tag_and_stays_apart_from_the_other(spread: Sites):
    """h10a and h20a here, h10b and h20b on site b, all in one subnet: the switch's two parts (OVS on each site) are
    joined by a trunk over the tunnel, so each VLAN reaches its own hosts on the other site and no other."""
    lab = vlans_over_two_sites([here(), spread.b.site, spread.c.site], "b")
    with deployed(spread, lab):
        for source, destination in (("h10a", "10.70.0.3"), ("h20a", "10.70.0.4"), ("h10b", "10.70.0.1")):
            pinged = run_in(spread, "vlansites", source, "ping", "-c", "3", "-i", "0.2", "-W", "2", destination)
            assert pinged.returncode == 0, (source, destination, pinged.stdout)
        assert run_in(spread, "vlansites", "h10a", "ping", "-c", "2", "-W", "1", "10.70.0.4").returncode != 0, \
            "h20b is in VLAN 20"
        assert run_in(spread, "vlansites", "h20b", "ping", "-c", "2", "-W", "1", "10.70.0.3").returncode != 0, \
            "h10b is in VLAN 10"
