"""A lab spread over three sites (the real host and two simulated ones) against the same lab on one host: 3 x 300
containers, each site's on a bridge of its own, the bridges joined by tunnels. Prints both deploy times and their
ratio, what one request to another site's agent over ssh costs, and iperf3 across a tunnel against the same path
(two containers on two bridges joined by a veth) on one host; asserts no times.

The goal: a deploy over sites takes its largest site's share (a third), plus a fixed cost for ssh. On one machine
the simulated hosts share its CPUs, so the parallel parts compete for the same cores.
"""
from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator

import pytest

from benchmarks.report import machine_facts, write_fragment
from sites.simulated import Sites, running_sites
from spread_labs import LabBuilder
from vtopo.client.agent_client import AgentClient

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

PER_SITE = 300
SITES = ("", "b", "c")


@pytest.fixture(scope="module")
def sites() -> Iterator[Sites]:
    with running_sites() as running:
        yield running


@pytest.fixture(scope="module")
def fragment() -> Iterator[list[str]]:
    """The README's lines of this benchmark, which each test adds to; written once both have."""
    lines = ["### Labs over several sites", "", machine_facts(), ""]
    yield lines
    if len(lines) > 6:
        write_fragment("sites", "\n".join(lines))


def three_lans(builder: LabBuilder, spread: bool, sites: tuple[str, ...] = SITES) -> LabBuilder:
    lans = len(sites)
    for number, site in enumerate(sites):
        bridge = builder.node(f"br{number}", "bridge", site=site if spread else "", forward_delay=0.0)
        for index in range(PER_SITE):
            container = builder.node(f"c{number}x{index}", "container", site=site if spread else "")
            builder.link(container, bridge, f"10.{number}.{index // 250}.{index % 250 + 1}/16")
    for number in range(1, lans):
        builder.link("br0", f"br{number}")
    return builder


def deploy_and_destroy(sites: Sites, builder: LabBuilder) -> tuple[float, float]:
    """The seconds the deploy took, and the longest any site's agent took over its part."""
    started = time.perf_counter()
    deployed = sites.deploy(builder)
    seconds = time.perf_counter() - started
    assert deployed.returncode == 0, deployed.stderr
    destroyed = sites.vtopo("destroy", builder.topology.name)
    assert destroyed.returncode == 0, destroyed.stderr
    parts = [float(seconds) for seconds in re.findall(r"operations in ([0-9.]+) s", deployed.stdout)]
    return seconds, max(parts)


def test_three_sites_against_one_host(sites: Sites, fragment: list[str]) -> None:
    one, _ = deploy_and_destroy(sites, three_lans(sites.builder("onehost"), spread=False))
    share, _ = deploy_and_destroy(sites, three_lans(sites.builder("oneshare"), spread=False, sites=("",)))
    alone, _ = deploy_and_destroy(sites, three_lans(sites.builder("sharethere"), spread=True, sites=("b",)))
    over, largest = deploy_and_destroy(sites, three_lans(sites.builder("threesites"), spread=True))
    client = AgentClient(sites.b.site)
    started = time.perf_counter()
    for _ in range(5):
        client.labs()
    ssh = (time.perf_counter() - started) / 5
    print(f"\n{3 * PER_SITE} containers on one host: {one:.2f} s; over three sites ({PER_SITE} each, tunnels "
          f"between the bridges): {over:.2f} s, ratio {over / one:.2f}; the slowest site's own part took "
          f"{largest:.2f} s; one request to another site's agent over ssh: {ssh * 1000:.0f} ms")
    print(f"the goal, one site's share ({PER_SITE} containers alone on one host: {share:.2f} s) plus one ssh "
          f"request: {share + ssh:.2f} s; over three sites against it: ratio {over / (share + ssh):.2f} (the "
          "simulated hosts share this machine's CPUs and kernel, which real sites do not); the same share alone "
          f"on one simulated host, through ssh: {alone:.2f} s, ratio {alone / (share + ssh):.2f}")
    fragment.extend([
        f"{3 * PER_SITE} containers on three bridges joined by tunnels, over the real host and two simulated ones "
        f"({PER_SITE} each), against the same lab on one host. The goal is one site's share plus a fixed cost for "
        "ssh; simulated hosts share this machine's 2 CPUs and its kernel, so their parts run one after another here.",
        "", "| deploy | seconds | against |", "|---|---|---|",
        f"| {3 * PER_SITE} on one host | {one:.2f} | |",
        f"| over three sites | {over:.2f} | {over / one:.2f}x one host; {over / (share + ssh):.2f}x the goal |",
        f"| one share ({PER_SITE}) on one host, plus one ssh request ({ssh * 1000:.0f} ms): the goal | "
        f"{share + ssh:.2f} | |",
        f"| one share alone on a simulated host, through ssh | {alone:.2f} | {alone / (share + ssh):.2f}x the goal |",
        ""])
    assert sites.residue() == {}


def iperf_between_lans(sites: Sites, name: str, spread: bool) -> float:
    """Mbit/s from c1 on lan1 to c2 on lan2, the two bridges on two sites (a tunnel between them) or on one host."""
    builder = sites.builder(name)
    for number, site in ((1, ""), (2, "b" if spread else "")):
        builder.node(f"lan{number}", "bridge", site=site, forward_delay=0.0)
        builder.node(f"c{number}", "container", site=site)
        builder.link(f"c{number}", f"lan{number}", f"10.9.0.{number}/24")
    builder.link("lan1", "lan2")
    assert (deployed := sites.deploy(builder)).returncode == 0, deployed.stderr
    try:
        server = sites.agent.spawn(None, "exec", name, "c2", "--", "iperf3", "-s", "-1")
        try:
            for _ in range(50):
                client = sites.vtopo("exec", name, "c1", "--", "iperf3", "-c", "10.9.0.2", "-t", "5", "-J")
                received = json.loads(client.stdout or "{}").get("end", {}).get("sum_received")
                if client.returncode == 0 and received:
                    return float(received["bits_per_second"]) / 1e6
                time.sleep(0.2)  # the server is not listening yet
            raise AssertionError(client.stdout + client.stderr)
        finally:
            server.kill()
            server.communicate()
    finally:
        assert sites.vtopo("destroy", name).returncode == 0


def test_iperf_across_a_tunnel_against_the_same_path_on_one_host(sites: Sites, fragment: list[str]) -> None:
    one = iperf_between_lans(sites, "pathhere", spread=False)
    tunnel = iperf_between_lans(sites, "pathover", spread=True)
    print(f"\niperf3 c1 -> c2, lan1 and lan2 joined on one host: {one:,.0f} Mbit/s; across a VXLAN tunnel to a "
          f"simulated host: {tunnel:,.0f} Mbit/s, ratio {tunnel / one:.2f}")
    fragment.append(f"iperf3 (TCP, 5 s) between containers on two bridges: {one:,.0f} Mbit/s on one host, "
                    f"{tunnel:,.0f} Mbit/s across a VXLAN tunnel to a simulated host ({tunnel / one:.2f}x).")
    assert sites.residue() == {}
