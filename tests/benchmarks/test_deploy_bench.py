"""Deploy and destroy speed against the iproute2 floor, and OSPF convergence. Prints figures; asserts no times.

Run with `make bench`. The floor does the same kernel work with iproute2: one `ip -batch` file for everything
in the host namespace, plus one `ip -n NS -batch` per namespace for what must happen inside it (iproute2 has
no way to address another namespace from a batch line).
"""
from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from vtopo.deployed import DeployedLab
from vtopo.host.deployer import Deployer
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

MININET_SECONDS = {100: 2.8, 400: 11.9}  # Mininet 2.3, Linux bridge, no controller, this kind of machine
TRIALS = 3


def star(count: int) -> Topology:
    topology = Topology(name=f"bench{count}", prefix="vb")
    topology.add_node(Node(id="br", name="br", kind="bridge", settings={"forward_delay": 0.0}))
    for i in range(count):
        topology.add_node(Node(id=f"c{i}", name=f"c{i}", kind="container"))
        address = f"10.{i // 250}.{i % 250}.1/8"
        topology.add_link(Link(id=f"l{i}", a=Endpoint(f"c{i}", "eth0", Interface(addresses=[address])),
                               b=Endpoint("br", f"p{i + 1}")))
    return topology


def ip_batch(lines: list[str], netns: str | None = None) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".batch") as batch:
        batch.write("\n".join(lines) + "\n")
        batch.flush()
        subprocess.run(["ip", *(["-n", netns] if netns else []), "-batch", batch.name], check=True)


def floor_deploy(count: int) -> None:
    host = ["link add fb-br type bridge forward_delay 0", "link set fb-br up"]
    for i in range(count):
        host += [f"netns add fb-c{i}", f"link add fb-br-p{i + 1} type veth peer name eth0 netns fb-c{i}",
                 f"link set fb-br-p{i + 1} master fb-br up"]
    ip_batch(host)
    for i in range(count):
        ip_batch(["link set lo up", "link set eth0 up", f"addr add 10.{i // 250}.{i % 250}.1/8 dev eth0"], f"fb-c{i}")


def floor_destroy(count: int) -> None:
    ip_batch([f"link del fb-br-p{i + 1}" for i in range(count)] + [f"netns del fb-c{i}" for i in range(count)]
             + ["link del fb-br"])


def timed(action) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


@pytest.mark.parametrize("count", [10, 100, 400])
def test_containers_on_a_bridge_against_ip_batch(count):
    topology = star(count)
    deployer = Deployer()
    figures: dict[str, list[float]] = {"vtopo deploy": [], "vtopo destroy": [], "floor deploy": [], "floor destroy": []}
    for _ in range(TRIALS):  # alternate, so both see the same machine
        figures["vtopo deploy"].append(timed(lambda: deployer.deploy(topology)))
        figures["vtopo destroy"].append(timed(lambda: deployer.destroy(topology.name)))
        figures["floor deploy"].append(timed(lambda: floor_deploy(count)))
        figures["floor destroy"].append(timed(lambda: floor_destroy(count)))
    median = {name: statistics.median(values) for name, values in figures.items()}
    print(f"\n{count} containers on one bridge (median of {TRIALS}):")
    for phase in ("deploy", "destroy"):
        ratio = median[f"vtopo {phase}"] / median[f"floor {phase}"]
        print(f"  {phase:<8} vtopo {median[f'vtopo {phase}']:.3f} s   iproute2 floor {median[f'floor {phase}']:.3f} s"
              f"   vtopo/floor {ratio:.2f}   (target <= 2.5)")
    if count in MININET_SECONDS:
        print(f"  Mininet 2.3 builds {count} hosts in {MININET_SECONDS[count]} s: vtopo is "
              f"{MININET_SECONDS[count] / median['vtopo deploy']:.0f}x faster")


def ring(routers: int) -> Topology:
    topology = Topology(name="ospfring", prefix="vr")
    for i in range(1, routers + 1):
        topology.add_node(Node(id=f"r{i}", name=f"r{i}", kind="router", settings={"passive": ["eth0"]}))
        topology.add_node(Node(id=f"h{i}", name=f"h{i}", kind="container", settings={"default_route": f"10.{i}.0.1"}))
        topology.add_link(Link(id=f"lan{i}", a=Endpoint(f"h{i}", "eth0", Interface(addresses=[f"10.{i}.0.10/24"])),
                               b=Endpoint(f"r{i}", "eth0", Interface(addresses=[f"10.{i}.0.1/24"]))))
    for i in range(1, routers + 1):
        j = i % routers + 1
        topology.add_link(Link(id=f"ring{i}", a=Endpoint(f"r{i}", "eth1", Interface(addresses=[f"10.99.{i}.1/30"])),
                               b=Endpoint(f"r{j}", "eth2", Interface(addresses=[f"10.99.{i}.2/30"]))))
    return topology


def test_six_router_ospf_ring_time_to_full_reachability():
    routers = 6
    topology = ring(routers)
    deployer = Deployer()
    started = time.perf_counter()
    deployer.deploy(topology)
    deployed_at = time.perf_counter() - started
    try:
        lab = DeployedLab.find(topology.name)
        pending = {(f"h{i}", f"h{j}") for i in range(1, routers + 1) for j in range(1, routers + 1) if i != j}
        while pending and time.perf_counter() - started < 60:
            for source, target in sorted(pending):
                address = lab.target_address(source, target)[0]
                argv = lab.command_in(source, ["ping", "-c", "1", "-W", "0.2", address])
                if subprocess.run(argv, capture_output=True).returncode == 0:
                    pending.discard((source, target))
        reachable_at = time.perf_counter() - started
    finally:
        deployer.destroy(topology.name)
    assert not pending, f"never reached: {sorted(pending)}"
    print(f"\n6-router OSPF ring: deployed in {deployed_at:.2f} s, every host reaches every other host "
          f"{reachable_at:.2f} s after deploy started (target <= 10 s)")
