"""The dhcp-relay teaching lab deployed by a member through the agent, beside its broken copy (r1 relays nothing
from lan2): in the lab each client leases from its own LAN's pool, across the relay, and reaches the server through
the gateway its lease named; status shows the leases, the capture between r1 and srv shows c2's exchange relayed
(giaddr 10.0.2.1), and `vtopo save` keeps the DHCP settings; in the broken copy c2's DISCOVER stops at r1 and its
check says so, in a line a student acts on, until r1's relay is turned on by `deploy --update`. Destroy leaves
nothing: no dnsmasq, no udhcpc, no file."""
from __future__ import annotations

import ipaddress
import json
import os
import re
import time
from pathlib import Path

import pytest

from agent_process import Agent
from dhcp_labs import dhcp_relay, relay_off
from residue import snapshot
from security.members import prefix_of, saved
from vtopo.model import io
from vtopo.model.topology import Interface, Topology

pytestmark = pytest.mark.privileged

LAB, BROKEN = "dhcp-relay", "dhcp-relay-broken"
POOLS = {"c1": ("10.0.1.100", "10.0.1.199"), "c2": ("10.0.2.100", "10.0.2.199")}
LEASE = re.compile(r"(?P<address>\d+\.\d+\.\d+\.\d+) (?P<host>\S+) \((?P<mac>[0-9a-f:]{17})\)")


def named(topology: Topology, name: str) -> Topology:
    topology.update_lab(name=name)
    return topology


def checks(agent: Agent, user: str, lab: str) -> dict[str, tuple[bool, str]]:
    done = agent.vtopo(user, "check", lab, "--json")
    return {c["name"]: (c["passed"], c["why"]) for c in json.loads(done.stdout)["checks"]}


def in_pool(address: str, pool: tuple[str, str]) -> bool:
    first, last = (ipaddress.IPv4Address(a) for a in pool)
    return first <= ipaddress.IPv4Address(address) <= last


def relayed_exchange(agent: Agent, user: str) -> list[str]:
    """What `vtopo capture` shows between r1 and srv (DHCP from port 67 to port 67: the relay's side alone) while c2
    gives its lease back and asks again: its DISCOVER, relayed, and the rest of its exchange."""
    capture = agent.spawn(user, "capture", LAB, "r1:eth0", "-f", "udp src port 67 and udp dst port 67", "-c", "4")
    try:
        assert capture.stderr is not None and capture.stderr.readline().startswith("capturing on r1:eth0")
        time.sleep(1)  # tcpdump's filter is in place a moment after the line
        again = agent.vtopo(user, "exec", LAB, "c2", "--", "sh", "-c", "kill -USR2 $(cat /run/dhcp/udhcpc-eth0.pid); "
                            "kill -USR1 $(cat /run/dhcp/udhcpc-eth0.pid)")
        assert again.returncode == 0, again.stderr
        shown, _ = capture.communicate(timeout=30)
    finally:
        if capture.poll() is None:
            capture.kill()
            capture.wait()
    return [line.strip() for line in shown.splitlines() if "DHCP" in line]


def assert_dhcp_kept(kept: Topology, lab: Topology) -> None:
    """`vtopo save` keeps the server's pools, the relay and each dhcp port as the lab had them, and writes no leased
    address or route as if it were the lab's own."""
    for node, setting in (("srv", "dhcp_pools"), ("r1", "dhcp_relay")):
        assert kept.nodes[node].settings[setting] == lab.nodes[node].settings[setting]
    ends = {f"{end.node}:{end.port}": end.interface for link in kept.links.values() for end in link.ends}
    assert ends["c1:eth0"] == ends["c2:eth0"] == Interface(dhcp=True)
    assert "default_route" not in kept.nodes["c1"].settings and "default_route" not in kept.nodes["c2"].settings


def test_a_members_dhcp_relay_lab_leases_across_the_relay_and_its_broken_copy_says_where_the_discover_stops(
        agent: Agent, users, readable_dir: Path) -> None:
    a = users["a"]
    before = snapshot()
    deployed = [name for name, topology in ((LAB, dhcp_relay()), (BROKEN, relay_off(dhcp_relay())))
                if agent.vtopo(a.pw_name, "deploy", str(saved(named(topology, name), readable_dir))).returncode == 0]
    try:
        assert deployed == [LAB, BROKEN]
        outcomes = checks(agent, a.pw_name, LAB)
        assert {name: passed for name, (passed, _) in outcomes.items()} == {
            "c1 leases from lan1's pool": True, "c2 leases from lan2's pool": True, "c1 reaches srv": True,
            "c2 reaches srv": True}, outcomes
        status = agent.vtopo(a.pw_name, "status", LAB).stdout
        [server] = [line for line in status.splitlines() if line.split()[:2] == ["node", "srv"]]
        leases = {m["host"]: m["address"] for m in LEASE.finditer(server)}
        assert set(leases) == {"c1", "c2"} and all(in_pool(leases[c], POOLS[c]) for c in POOLS), server
        pinged = agent.vtopo(a.pw_name, "exec", LAB, "c2", "--", "ping", "-c", "2", "-W", "1", leases["c1"])
        assert pinged.returncode == 0, pinged.stdout
        prefix = prefix_of(LAB)
        for pid_file in sorted(Path(f"/run/vtopo/{prefix}").glob("*.dhcp/*.pid")):
            pid = int(pid_file.read_text())
            status_lines = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
            assert status_lines["Uid"].split() == [str(a.pw_uid)] * 4, pid_file
        exchange = relayed_exchange(agent, a.pw_name)
        assert [line.split("B  ")[1].split()[0] for line in exchange] == ["DISCOVER", "OFFER", "REQUEST", "ACK"], \
            exchange
        assert all(line.endswith("relayed by 10.0.2.1") for line in exchange), exchange
        os.chown(readable_dir, a.pw_uid, a.pw_gid)  # a saves the running lab there
        kept = agent.vtopo(a.pw_name, "save", LAB, "-o", str(readable_dir / "saved.vtopo"))
        assert kept.returncode == 0, kept.stderr
        assert_dhcp_kept(io.load(readable_dir / "saved.vtopo"), dhcp_relay())
        outcomes = checks(agent, a.pw_name, BROKEN)
        assert {name for name, (passed, _) in outcomes.items() if not passed} == {"c2 leases from lan2's pool",
                                                                                  "c2 reaches srv"}
        assert outcomes["c2 leases from lan2's pool"][1] == (
            "c2:eth0 got no address by DHCP within 12 s: nothing on its segment serves or relays DHCP: a DISCOVER is a "
            "broadcast, and a router forwards no broadcast, so it stops at r1:eth2; set a DHCP relay on r1:eth2 "
            "towards the server's address")
        relay_on = agent.vtopo(a.pw_name, "deploy", "--update", str(saved(named(dhcp_relay(), BROKEN), readable_dir)))
        assert relay_on.returncode == 0, relay_on.stderr
        assert checks(agent, a.pw_name, BROKEN)["c2 leases from lan2's pool"][0]  # the relay on: c2's DISCOVER crosses
    finally:
        destroyed = [agent.vtopo(a.pw_name, "destroy", name).returncode for name in deployed]
    assert destroyed == [0, 0]
    assert snapshot() - before == {}
