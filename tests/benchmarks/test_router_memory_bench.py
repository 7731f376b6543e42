"""The memory a router takes: the resident set of its daemons, summed, with every course daemon running (vtopo's
default, so that whatever a student types into vtysh is taken) against zebra and staticd alone (`"daemons":
["staticd"]`, the least a router runs). Routers with no configuration, in a chain, so that both run the same nothing.
Prints; asserts no figures."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from benchmarks.report import machine_facts, write_fragment
from residue import snapshot
from vtopo.host.deployer import Deployer
from vtopo.model.topology import Node, Topology
from wiring import wire

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

ROUTERS = 4
SETTLE_SECONDS = 3.0  # the daemons have read their (empty) configuration and met zebra
LEAST = ["staticd"]  # zebra and staticd, which every router runs


def chain(name: str, prefix: str, daemons: list[str]) -> Topology:
    topology = Topology(name=name, prefix=prefix)
    for index in range(1, ROUTERS + 1):
        settings: dict[str, object] = {"generate_ospf": False} | ({"daemons": daemons} if daemons else {})
        topology.add_node(Node(id=f"r{index}", name=f"r{index}", kind="router", settings=settings))
    return wire(topology, *((f"r{i}:eth1", f"r{i + 1}:eth0", f"10.0.{i}.1/30", f"10.0.{i}.2/30")
                            for i in range(1, ROUTERS)))


def _kib(pid: int, file: str, field: str) -> int:
    line = next(line for line in Path(f"/proc/{pid}/{file}").read_text().splitlines() if line.startswith(field))
    return int(line.split()[1])


def memory(prefix: str) -> dict[str, dict[str, tuple[int, int]]]:
    """Each router's daemons: (RSS, PSS) in KiB, by daemon."""
    found: dict[str, dict[str, tuple[int, int]]] = {}
    for index in range(1, ROUTERS + 1):
        for pid_file in sorted(Path(f"/run/vtopo/{prefix}/r{index}").glob("*.pid")):
            pid = int(pid_file.read_text())
            found.setdefault(f"r{index}", {})[pid_file.stem] = (_kib(pid, "status", "VmRSS:"),
                                                                 _kib(pid, "smaps_rollup", "Pss:"))
    return found


def measured(daemons: list[str], prefix: str) -> tuple[dict[str, dict[str, tuple[int, int]]], float]:
    """The routers' memory, and how long their deploy took."""
    deployer = Deployer()
    topology = chain(f"router-memory-{prefix}", prefix, daemons)
    started = time.perf_counter()
    deployer.deploy(topology)
    took = time.perf_counter() - started
    try:
        time.sleep(SETTLE_SECONDS)
        return memory(prefix), took
    finally:
        deployer.destroy(topology.name)


def _per_router(found: dict[str, dict[str, tuple[int, int]]], which: int) -> float:
    return statistics.median(sum(figures[which] for figures in daemons.values()) for daemons in found.values())


def test_memory_of_a_router_with_every_course_daemon_against_zebra_and_staticd() -> None:
    facts = machine_facts()
    before = snapshot()
    (every, took), (least, took_least) = measured([], "vrma"), measured(LEAST, "vrmb")
    assert snapshot() - before == {}
    rss, rss_least = _per_router(every, 0), _per_router(least, 0)
    pss, pss_least = _per_router(every, 1), _per_router(least, 1)
    by_daemon = {daemon: statistics.median(router[daemon][0] for router in every.values()) for daemon in every["r1"]}
    lines = ["### Memory of a router", "", facts, "",
             f"{ROUTERS} routers with no configuration, the median router: the sum of its daemons' resident sets "
             "(VmRSS), and of their proportional sets (Pss, which shares FRR's libraries among the daemons that map "
             "them). Every course daemon is vtopo's default, so that RIP, BGP or IS-IS typed into vtysh is taken; "
             "`\"daemons\": [\"staticd\"]` runs zebra and staticd alone.", "",
             "| router | daemons | RSS | PSS |", "|---|---|---|---|",
             f"| every course daemon (vtopo's default) | {len(every['r1'])} | {rss / 1024:.1f} MiB | "
             f"{pss / 1024:.1f} MiB |",
             f"| zebra and staticd alone (baseline) | {len(least['r1'])} | {rss_least / 1024:.1f} MiB | "
             f"{pss_least / 1024:.1f} MiB |",
             f"| ratio | | {rss / rss_least:.1f}x | {pss / pss_least:.1f}x |", "",
             "By daemon (RSS): " + ", ".join(f"{daemon} {kib / 1024:.1f} MiB" for daemon, kib in by_daemon.items())
             + f". Deploying the {ROUTERS} routers took {took:.2f} s with every daemon, {took_least:.2f} s with zebra "
             "and staticd alone (one run each)."]
    print(f"\nmemory per router ({ROUTERS} empty routers, median):")
    print(f"  every course daemon (vtopo)  RSS {rss / 1024:6.1f} MiB  PSS {pss / 1024:6.1f} MiB")
    print(f"  zebra + staticd (baseline)   RSS {rss_least / 1024:6.1f} MiB  PSS {pss_least / 1024:6.1f} MiB")
    print(f"  ratio                        RSS {rss / rss_least:6.1f}x      PSS {pss / pss_least:6.1f}x")
    print("  by daemon (RSS): " + ", ".join(f"{daemon} {kib / 1024:.1f} MiB" for daemon, kib in by_daemon.items()))
    print(f"  deploy of {ROUTERS} routers: {took:.2f} s with every daemon, {took_least:.2f} s with zebra + staticd")
    write_fragment("router-memory", "\n".join(lines))
