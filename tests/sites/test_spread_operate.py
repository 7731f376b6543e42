"""Operating a running lab spread over sites from this machine: a link between two sites pulled, plugged and shaped
(each site acting on its own end of the tunnel), a router of another site's running configuration saved, and a
measurement to another site that is cancelled or fails leaving no iperf3 there. One lab for the module."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sites.simulated import Sites
from waiting import wait_for
from vtopo.client.agent_client import AgentClient, deployed_for
from vtopo.deployed import DeployedLab
from vtopo.measure import IperfOptions, IperfRun
from vtopo.measure.nodes import MeasureError
from vtopo.model import io

pytestmark = pytest.mark.privileged

LAB = "opsites"
RATE_MBIT = 20


@pytest.fixture(scope="module")
def lab(sites: Sites) -> Iterator[Sites]:
    """c1 here and c2 on b, joined by a tunnel; routers r1 here and r2 on b, joined by another."""
    builder = sites.builder(LAB)
    builder.node("c1", "container")
    builder.node("c2", "container", site="b")
    builder.link("c1", "c2", "10.0.0.1/24", "10.0.0.2/24")
    builder.node("r1", "router")
    builder.node("r2", "router", site="b")
    builder.link("r1", "r2", "10.0.12.1/30", "10.0.12.2/30")
    with sites.running(builder):
        yield sites


def run_in(sites: Sites, node: str, *argv: str) -> str:
    said = sites.vtopo("exec", LAB, node, "--", *argv)
    assert said.returncode == 0, said.stderr
    return said.stdout


def pings(sites: Sites) -> bool:
    return sites.vtopo("exec", LAB, "c1", "--", "ping", "-c", "1", "-W", "1", "10.0.0.2").returncode == 0


def measured(sites: Sites) -> DeployedLab:
    """The lab as this machine measures it, as root: a command in c2 runs on b, over ssh."""
    return deployed_for(LAB, "measure", AgentClient(sites.agent.socket))


def iperf3_servers() -> list[int]:
    """iperf3 servers anywhere (the simulated hosts share this machine's processes)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if entry.name.isdigit() and argv[0].endswith(b"iperf3") and b"-s" in argv:
            found.append(int(entry.name))
    return found


def test_a_link_between_sites_is_pulled_and_plugged_on_both(lab: Sites):
    assert pings(lab)
    down = lab.vtopo("link", LAB, "c1", "c2", "down")
    assert down.returncode == 0, down.stderr
    assert down.stdout.splitlines() == [
        f"[local] link c1:eth0-c2:eth0 in lab {LAB} is down: c1:eth0 stays up without carrier (this site's end of "
        "the tunnel is cut)",
        f"[b] link c1:eth0-c2:eth0 in lab {LAB} is down: c2:eth0 stays up without carrier (this site's end of the "
        "tunnel is cut)"]
    for node in ("c1", "c2"):  # a pulled cable: the interface is up, its carrier gone
        flags = run_in(lab, node, "ip", "link", "show", "eth0").split(">")[0]
        assert "NO-CARRIER" in flags and ",UP" in flags, flags
    assert not pings(lab)
    status = lab.vtopo("status", LAB).stdout
    assert status.count("link c1:eth0-c2:eth0") == 2 and all(
        line.split()[-1] == "down" for line in status.splitlines() if "link c1:eth0-c2:eth0" in line), status
    again = lab.vtopo("link", LAB, "c1", "c2", "down")
    assert again.returncode == 1 and "is down already" in again.stderr
    up = lab.vtopo("link", LAB, "c2", "c1", "up")
    assert up.returncode == 0 and up.stdout.count(f"in lab {LAB} is up") == 2, up.stdout + up.stderr
    assert wait_for(lambda: pings(lab), 10)
    assert "NO-CARRIER" not in run_in(lab, "c2", "ip", "link", "show", "eth0")


def test_a_rate_on_a_link_between_sites_is_what_iperf_measures(lab: Sites):
    shaped = lab.vtopo("link", LAB, "c1", "c2", "set", "--rate", f"{RATE_MBIT}mbit")
    assert shaped.returncode == 0, shaped.stderr
    assert shaped.stdout.count(f"rate {RATE_MBIT} Mbit/s") == 2, shaped.stdout
    try:
        nodes = measured(lab)
        for source, destination, address in (("c1", "c2", "10.0.0.2"), ("c2", "c1", "10.0.0.1")):  # each site's end
            run = IperfRun(nodes.endpoint(source), nodes.endpoint(destination), address,
                           IperfOptions(protocol="udp", duration_s=3, bitrate=f"{2 * RATE_MBIT}M"))
            received = run.run().mean_bits_per_second
            print(f"UDP at {2 * RATE_MBIT} Mbit/s from {source} to {destination} over a {RATE_MBIT} Mbit/s tunnel: "
                  f"{(received or 0) / 1e6:.1f} Mbit/s received")
            assert received is not None and 0.8 * RATE_MBIT * 1e6 < received < 1.1 * RATE_MBIT * 1e6
    finally:
        assert lab.vtopo("link", LAB, "c1", "c2", "set", "--rate", "0").returncode == 0


def test_a_routers_running_configuration_on_another_site_is_saved(lab: Sites):
    run_in(lab, "r2", "vtysh", "-c", "configure terminal", "-c", "interface eth0", "-c", "description towards r1")
    said = lab.vtopo("save", LAB)  # into the file it was deployed from
    assert said.returncode == 0, said.stderr
    assert "+   description towards r1" in said.stdout, said.stdout
    router = io.load(lab.directory / f"{LAB}.vtopo").node_named("r2")
    assert router is not None and "description towards r1" in str(router.settings["config"])


def test_a_measurement_to_another_site_that_fails_or_is_cancelled_leaves_no_iperf3_there(lab: Sites):
    """With the tunnel cut, the client never reaches c2's server on b, which would wait there for ever: the run
    fails (after the client's connect timeout) or is cancelled while it waits, and the server is ended either way."""
    assert lab.vtopo("link", LAB, "c1", "c2", "down").returncode == 0
    try:
        nodes = measured(lab)

        def run() -> IperfRun:
            return IperfRun(nodes.endpoint("c1"), nodes.endpoint("c2"), "10.0.0.2", IperfOptions(duration_s=2),
                            preflight=False)

        with pytest.raises(MeasureError):
            run().run()
        assert wait_for(lambda: not iperf3_servers(), 10), "the failed run left its server on b"
        cancelled = run()
        running = threading.Thread(target=cancelled.run)
        running.start()
        assert wait_for(lambda: bool(iperf3_servers()), 15), "the server never started on b"
        cancelled.cancel()
        running.join(30)
        assert cancelled.result.status == "cancelled"
        assert wait_for(lambda: not iperf3_servers(), 10), "the cancelled run left its server on b"
    finally:
        assert lab.vtopo("link", LAB, "c1", "c2", "up").returncode == 0
