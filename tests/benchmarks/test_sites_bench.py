"""A lab spread over three sites (the real host and two simulated ones) against the same lab on one host: 3 x N
containers, each site's on a bridge of its own, the bridges joined by tunnels. Prints both deploy times and their
ratio, and what one request to another site's agent over ssh costs; asserts no times.

The goal: a deploy over sites takes its largest site's share (a third), plus a fixed cost for ssh. On one machine
the simulated hosts share its CPUs, so the parallel parts compete for the same cores.
"""
from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from sites.simulated import Sites, running_sites
from spread_labs import LabBuilder
from vtopo.client.agent import AgentClient

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

PER_SITE = 100
SITES = ("", "b", "c")


@pytest.fixture(scope="module")
def sites() -> Iterator[Sites]:
    with running_sites() as running:
        yield running


def three_lans(builder: LabBuilder, spread: bool) -> LabBuilder:
    for number, site in enumerate(SITES):
        bridge = builder.node(f"br{number}", "bridge", site=site if spread else "", forward_delay=0.0)
        for index in range(PER_SITE):
            container = builder.node(f"c{number}x{index}", "container", site=site if spread else "")
            builder.link(container, bridge, f"10.{number}.{index // 250}.{index % 250 + 1}/16")
    builder.link("br0", "br1")
    builder.link("br0", "br2")
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


def test_three_sites_against_one_host(sites: Sites) -> None:
    one, _ = deploy_and_destroy(sites, three_lans(sites.builder("onehost"), spread=False))
    over, largest = deploy_and_destroy(sites, three_lans(sites.builder("threesites"), spread=True))
    client = AgentClient(sites.b.site)
    started = time.perf_counter()
    for _ in range(5):
        client.labs()
    ssh = (time.perf_counter() - started) / 5
    print(f"\n{3 * PER_SITE} containers on one host: {one:.2f} s; over three sites ({PER_SITE} each, tunnels "
          f"between the bridges): {over:.2f} s, ratio {over / one:.2f}; the slowest site's own part took "
          f"{largest:.2f} s; one request to another site's agent over ssh: {ssh * 1000:.0f} ms")
    assert sites.residue() == {}
