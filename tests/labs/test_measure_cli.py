"""`vtopo iperf`, `vtopo ping` and `vtopo rr` on deployed labs, including across OSPF routers and Ctrl-C.

The tests of one shipped lab follow each other, so that the lab is deployed once for them (`shared`)."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.privileged


def vtopo(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vtopo", *args], capture_output=True, text=True, timeout=timeout)


def interrupt_a_long_iperf(lab: str, source: str, destination: str) -> None:
    """Start a 30 s `vtopo iperf`, press Ctrl-C after its first interval, and check that it ends at once."""
    client = subprocess.Popen([sys.executable, "-m", "vtopo", "iperf", lab, source, destination, "-t", "30"],
                              stdout=subprocess.PIPE, text=True)
    assert client.stdout is not None
    while " s  " not in client.stdout.readline():
        pass
    client.send_signal(signal.SIGINT)
    assert client.wait(timeout=15) == 130


def iperf3_pids() -> set[int]:
    return {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _comm(p) == "iperf3"}


def _comm(proc: Path) -> str:
    try:
        return (proc / "comm").read_text().strip()
    except OSError:
        return ""


def test_unreachable_destination_is_named_before_anything_runs(shared):
    shared("macvlan-private")
    result = vtopo("iperf", "macvlan-private", "c1", "c2", "-t", "2")
    assert result.returncode == 1 and "c1" in result.stderr and "10.0.1.2" in result.stderr


def test_no_traffic_leaves_the_lab(shared):
    """The host node routes by the host's own table: an address it would send out of the lab is refused, and a
    bridge has no place to send from at all."""
    shared("macvlan-bridge")
    for command in ("ping", "iperf"):
        refused = vtopo(command, "macvlan-bridge", "host", "c1", "--address", "10.77.0.1")
        assert refused.returncode == 1 and "not send" in refused.stderr.replace("no traffic", "not send"), \
            refused.stderr
        assert "Traceback" not in refused.stderr
    assert vtopo("ping", "macvlan-bridge", "host", "c1", "-c", "2").returncode == 0
    shared("bridge-veth")
    from_bridge = vtopo("ping", "bridge-veth", "br0", "c1")
    assert from_bridge.returncode == 1 and "br0 is a Linux bridge" in from_bridge.stderr


def test_iperf_ping_and_rr_from_the_cli(shared):
    shared("bridge-veth")
    tcp = vtopo("iperf", "bridge-veth", "c1", "c2", "-t", "2")
    assert tcp.returncode == 0, tcp.stderr
    assert "veth → br0 → veth" in tcp.stdout and tcp.stdout.count(" s  ") >= 2 and "receiver" in tcp.stdout
    udp = json.loads(vtopo("iperf", "bridge-veth", "c1", "c2", "-t", "2", "-u", "-b", "50M", "--json").stdout)
    assert udp["status"] == "ok" and udp["forward"]["received"]["lost_percent"] is not None
    reverse = json.loads(vtopo("iperf", "bridge-veth", "c1", "c3", "-t", "1", "-R", "--json").stdout)
    assert reverse["reverse"]["received"]["bits_per_second"] > 1e6
    ping = vtopo("ping", "bridge-veth", "c1", "c3", "-c", "3")
    assert ping.returncode == 0 and "rtt min/avg/max/mdev" in ping.stdout
    rr = vtopo("rr", "bridge-veth", "c1", "c2", "-t", "1")
    assert rr.returncode == 0 and "transactions/s" in rr.stdout


def test_ctrl_c_leaves_no_iperf3_behind(shared):
    shared("bridge-veth")
    before = iperf3_pids()
    interrupt_a_long_iperf("bridge-veth", "c1", "c2")
    time.sleep(0.5)
    assert iperf3_pids() - before == set()


def test_iperf_across_the_ospf_routers(shared):
    lab = shared("l2-vs-l3")
    deadline = time.monotonic() + 20
    while not lab.pings("h1", "h3", count=1) and time.monotonic() < deadline:
        time.sleep(0.5)
    routed = vtopo("iperf", "l2-vs-l3", "h1", "h3", "-t", "2")
    assert routed.returncode == 0, routed.stderr
    assert "r1 → veth → r2" in routed.stdout
