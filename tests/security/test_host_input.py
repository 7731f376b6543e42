"""Containment covers the host's own input (attack 10): a container on a numbered bridge reaches a service of the host
only at the host's address on that bridge, the one the lab gave it; at an address of the host's on another interface,
or at the link-local address the kernel gave the bridge, its packets are dropped, and counted."""
from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from residue import snapshot
from vtopo.deployed import DeployedLab
from vtopo.host import nftables
from vtopo.host.deployer import Deployer
from vtopo.lab import open_lab
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

PROBE, PROBE_ADDRESS = "vtsec-in0", "198.51.100.77"  # an interface and an address of the host's own, not the lab's
BRIDGE_ADDRESS = "172.16.1.1"  # the host's address on br1, which host-routed-bridges gives it
BRIDGE_ADDRESS6, C1_ADDRESS6 = "2001:db8:16:1::1", "2001:db8:16:1::10"  # added to br1 and c1 here


@pytest.fixture(scope="module")
def lab() -> Iterator[DeployedLab]:
    before = snapshot()
    subprocess.run(["ip", "link", "add", PROBE, "type", "veth", "peer", "name", "vtsec-in1"], check=True)
    subprocess.run(["ip", "addr", "add", f"{PROBE_ADDRESS}/24", "dev", PROBE], check=True)
    subprocess.run(["ip", "link", "set", PROBE, "up"], check=True)
    topology = open_lab(TOPOLOGIES / "host-routed-bridges.vtopo").topology
    bridge, c1 = topology.node_named("br1"), topology.node_named("c1")
    assert bridge is not None and c1 is not None
    bridge.settings["host_addresses"] = [BRIDGE_ADDRESS + "/24", BRIDGE_ADDRESS6 + "/64"]
    topology.links_of(c1.id)[0].a.interface.addresses.append(C1_ADDRESS6 + "/64")
    deployer = Deployer()
    deployer.deploy(topology)
    try:
        yield DeployedLab.find(topology.name)
    finally:
        deployer.destroy(topology.name)
        subprocess.run(["ip", "link", "del", PROBE], capture_output=True)
    assert snapshot() - before == {}


def _connects(lab: DeployedLab, address: str, port: int) -> bool:
    connect = f"import socket; socket.create_connection(({address!r}, {port}), timeout=2)"
    return subprocess.run(lab.command_in("c1", ["python3", "-c", connect]), capture_output=True,
                          timeout=30).returncode == 0


def _reaches_the_host_only_at_its_gateway(lab: DeployedLab, outside: str) -> None:
    """A service of the host's listening on every address it has (IPv4 and IPv6) is reached from c1 at the host's
    address on c1's segment, and not at `outside`, whose packets the lab's table drops and counts."""
    with socket.socket(socket.AF_INET6) as listener:
        listener.bind(("::", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        table = lab.context.names.nft_table
        dropped = nftables.dropped(table)
        assert _connects(lab, BRIDGE_ADDRESS, port), "the lab's own gateway address must stay reachable"
        assert not _connects(lab, outside, port), f"a container reached the host at {outside}, outside its lab"
        assert nftables.dropped(table) > dropped


def test_a_container_reaches_the_host_only_at_the_address_of_its_own_segment(lab: DeployedLab) -> None:
    _reaches_the_host_only_at_its_gateway(lab, PROBE_ADDRESS)


def test_a_container_does_not_reach_the_host_at_the_link_local_address_of_its_segment(lab: DeployedLab) -> None:
    """The kernel gives the lab's bridge an IPv6 link-local address of the host's, which the lab never gave the host:
    a node on the segment reached it as fe80::...%eth0 without any route (a guest, too, on a plain bridge)."""
    shown = json.loads(subprocess.run(["ip", "-j", "address", "show"], capture_output=True, text=True,
                                      check=True).stdout)
    bridge = next(d for d in shown if any(a["local"] == BRIDGE_ADDRESS for a in d["addr_info"]))
    link_local = next(a["local"] for a in bridge["addr_info"] if a["local"].startswith("fe80:"))
    _reaches_the_host_only_at_its_gateway(lab, f"{link_local}%eth0")


# Run in a node: a router advertisement on eth0 (to all nodes, hop limit 255 as RFC 4861 wants), no default route but
# an on-link prefix the hearers should make addresses in. The kernel fills in the ICMPv6 checksum.
ROUTER_ADVERTISEMENT = """
import socket, struct, time
eth0 = socket.if_nametoindex("eth0")
sender = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
sender.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
advert = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, 0, 0, 0)
prefix = struct.pack("!BBBBIII", 3, 4, 64, 0xC0, 600, 600, 0) + socket.inet_pton(socket.AF_INET6, "%s")
sent, deadline = 0, time.monotonic() + 10
while sent < 3:
    try:
        sender.sendto(advert + prefix, ("ff02::1", 0, 0, eth0))
        sent += 1
    except OSError:  # no link-local address yet: duplicate address detection goes on
        assert time.monotonic() < deadline, "eth0 got no link-local address"
    time.sleep(0.5)
"""


def test_a_container_s_router_advertisement_gives_the_host_no_address_or_route(lab: DeployedLab) -> None:
    """The kernel takes router advertisements on a new device of the host's (accept_ra's default): a node that
    advertises a prefix on its segment would have the host make an address in it and route it into the lab."""
    prefix = "2001:db8:77::"
    done = subprocess.run(lab.command_in("c1", ["python3", "-c", ROUTER_ADVERTISEMENT % prefix]), capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    time.sleep(1)
    routes = subprocess.run(["ip", "-6", "route", "show", f"{prefix}/64"], capture_output=True, text=True).stdout
    addresses = subprocess.run(["ip", "-6", "address", "show", "to", f"{prefix}/64"], capture_output=True,
                               text=True).stdout
    assert routes == addresses == "", f"the host took a node's router advertisement: {routes}{addresses}"


def test_the_host_still_learns_that_a_node_is_there_by_neighbour_discovery(lab: DeployedLab) -> None:
    """The host checks that a neighbour it talks to is still there with a solicitation from the link-local address
    the kernel gave the bridge: the node's answer goes to an address the lab did not give the host, and is let in."""
    bridge = lab.context.names.node_device("br1")
    neighbour = ["ip", "-6", "neigh", "show", "dev", bridge, C1_ADDRESS6]
    subprocess.run(["sysctl", "-qw", f"net.ipv6.neigh.{bridge}.delay_first_probe_time=1"], check=True)
    pinged = subprocess.run(["ping", "-6", "-c", "1", "-W", "2", C1_ADDRESS6], capture_output=True, text=True)
    assert pinged.returncode == 0, pinged.stdout + pinged.stderr
    mac = subprocess.run(neighbour, capture_output=True, text=True, check=True).stdout.split()[2]
    subprocess.run(["ip", "-6", "neigh", "change", C1_ADDRESS6, "dev", bridge, "lladdr", mac, "nud", "stale"],
                   check=True)
    subprocess.run(["ping", "-6", "-c", "1", "-W", "2", C1_ADDRESS6], capture_output=True, check=True)  # to probe
    deadline = time.monotonic() + 10
    while "REACHABLE" not in (state := subprocess.run(neighbour, capture_output=True, text=True).stdout):
        assert time.monotonic() < deadline and "FAILED" not in state, f"c1 did not answer the host's probe: {state}"
        time.sleep(0.1)


def _asked_for(lab: DeployedLab, address: str) -> dict[str, str]:
    """c1's neighbour entry for `address` once it asked its segment for it anew (ARP, by a ping): with its "lladdr"
    when someone answered."""
    subprocess.run(lab.command_in("c1", ["ip", "neigh", "flush", "to", address]), check=True)
    subprocess.run(lab.command_in("c1", ["ping", "-c", "1", "-W", "1", address]), capture_output=True, timeout=30)
    shown = subprocess.run(lab.command_in("c1", ["ip", "-j", "neigh", "show", "to", address]), capture_output=True,
                           text=True, check=True).stdout
    return next(iter(json.loads(shown or "[]")), {})


def test_the_host_answers_arp_on_a_lab_bridge_only_for_the_bridges_own_address(lab: DeployedLab) -> None:
    """The host answered ARP on a lab's bridge for every address it has: c1, asking its segment for an address of
    another of the host's networks (an on-link route is its own to add), learnt that the host had it. vtopo sets
    arp_ignore 1 and arp_announce 2 on the bridge alone, so only the gateway's address is answered there; the
    bridge's arp_ignore put back to 0 for a moment has the host answer again, which shows what the probe sees."""
    bridge = lab.context.names.node_device("br1")
    sysctls = {name: Path(f"/proc/sys/net/ipv4/conf/{bridge}/{name}") for name in ("arp_ignore", "arp_announce")}
    assert {name: path.read_text().strip() for name, path in sysctls.items()} == {"arp_ignore": "1",
                                                                                  "arp_announce": "2"}
    subprocess.run(lab.command_in("c1", ["ip", "route", "add", f"{PROBE_ADDRESS}/32", "dev", "eth0"]), check=True)
    try:
        assert "lladdr" in _asked_for(lab, BRIDGE_ADDRESS), "the lab's gateway must answer"
        unanswered = _asked_for(lab, PROBE_ADDRESS)
        assert "lladdr" not in unanswered, f"the host answered for {PROBE_ADDRESS} on the lab's bridge: {unanswered}"
        sysctls["arp_ignore"].write_text("0")
        try:
            assert "lladdr" in _asked_for(lab, PROBE_ADDRESS), "with arp_ignore 0 the host answers: the probe sees it"
        finally:
            sysctls["arp_ignore"].write_text("1")
    finally:
        subprocess.run(lab.command_in("c1", ["ip", "route", "del", f"{PROBE_ADDRESS}/32", "dev", "eth0"]), check=True)


# Run in a node: one UDP datagram to each of the addresses in sys.argv[2:] (IPv6 ones scoped to eth0), port sys.argv[1].
DATAGRAMS = """
import socket, sys
port = int(sys.argv[1])
for address in sys.argv[2:]:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as sender:
        sender.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        where = (address, port, 0, socket.if_nametoindex("eth0")) if family == socket.AF_INET6 else (address, port)
        try:
            sender.sendto(address.encode(), where)
        except OSError as error:
            print(address, error)
"""

TO_EVERYONE = ["255.255.255.255", "198.51.100.255", "172.16.1.255", "224.0.0.1", "ff02::1"]
"""Addresses a node may send to that the host's kernel takes as its own without being any address of the host's: the
limited broadcast, the broadcast of a network of the host's outside the lab and of the lab's own segment, the all-hosts
and all-nodes groups every interface of the host is in."""


def test_a_containers_broadcasts_and_multicasts_reach_no_service_of_the_hosts(lab: DeployedLab) -> None:
    """A service of the host's listening on every address (a DHCP server, syslog, an RPC binder) takes what is sent to
    a broadcast or a group the host is in, which is no address of the host's: the lab's table let it through."""
    received: list[str] = []
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as listener:
        listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        listener.bind(("::", 0))
        listener.settimeout(2)
        port = listener.getsockname()[1]
        table = lab.context.names.nft_table
        dropped = nftables.dropped(table)
        sent = subprocess.run(lab.command_in("c1", ["python3", "-c", DATAGRAMS, str(port), *TO_EVERYONE]),
                              capture_output=True, text=True, timeout=30)
        assert sent.returncode == 0, sent.stderr
        try:
            while True:
                received.append(listener.recv(100).decode())
        except TimeoutError:
            pass
        assert received == [], f"the host's service took {received} from a node"
        assert nftables.dropped(table) >= dropped + len(TO_EVERYONE) - len(sent.stdout.splitlines()), sent.stdout
