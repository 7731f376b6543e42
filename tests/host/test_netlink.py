"""The netlink layer against the real kernel: namespaces, links, addresses, qdiscs, sysctls, offloads.

Every name starts with "vtt-" (namespaces) or "vtt" (host links) plus a random part, and fixtures
remove what a test made even when it fails.
"""
from __future__ import annotations

import os
import secrets
import socket
import stat
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from waiting import wait_for
from vtopo.host.facts import netem_available
from vtopo.host.netlink import (EventsLost, InterfaceEvent, LinkEvents, LinkInfo, NamespaceGone, Netlink,
                               NetlinkError)
from vtopo.host.netns import NetnsNotFoundError, create_netns, delete_netns, entered, list_netns
from vtopo.ops import RouteProtocol

pytestmark = pytest.mark.privileged

NetnsFactory = Callable[[str], str]


def _run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def _in_netns(netns: str, *argv: str) -> str:
    return _run("ip", "netns", "exec", netns, *argv)


def _host_link_names() -> set[str]:
    return {line.split(":")[1].strip().split("@")[0] for line in _run("ip", "-o", "link").splitlines()}


def _wait_up(netns: str, *names: str) -> None:
    """Wait until the kernel reports the links operational: until its link watcher has run, a fresh
    link drops what it is given to send, so a first ping can be lost."""
    for name in names:
        assert wait_for(lambda: " state UP " in _in_netns(netns, "ip", "-o", "link", "show", name), 3), name


def _checksum(data: bytes) -> int:
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def _ping(netns: str, address: str, timeout: float = 1.0) -> float | None:
    """The RTT in seconds of one ICMP echo sent from `netns`, or None without a reply (ping -c1 -W1)."""
    ident = secrets.randbelow(1 << 16)
    payload = b"vtopo-ping" * 4
    header = struct.pack("!BBHHH", 8, 0, 0, ident, 1)
    packet = struct.pack("!BBHHH", 8, 0, _checksum(header + payload), ident, 1) + payload
    with entered(netns), socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as sock:
        start = time.monotonic()
        sock.sendto(packet, (address, 0))
        while (remaining := timeout - (time.monotonic() - start)) > 0:
            sock.settimeout(remaining)
            try:
                reply = sock.recv(2048)
            except TimeoutError:
                return None
            icmp = reply[(reply[0] & 0x0F) * 4 :]
            kind, _, _, reply_ident, _ = struct.unpack("!BBHHH", icmp[:8])
            if kind == 0 and reply_ident == ident:
                return time.monotonic() - start
    return None


def _host_name() -> str:
    return f"vtt{secrets.token_hex(4)}"


@pytest.fixture
def make_netns() -> Iterator[NetnsFactory]:
    """Creates namespaces named vtt-<random>-<role>; deletes the survivors afterwards."""
    tag = secrets.token_hex(3)
    made: list[str] = []

    def make(role: str) -> str:
        name = f"vtt-{tag}-{role}"
        create_netns(name)
        made.append(name)
        return name

    yield make
    for name in made:
        if name in list_netns():
            delete_netns(name)
    assert not set(made) & set(list_netns())


@pytest.fixture
def nl(make_netns: NetnsFactory) -> Iterator[Netlink]:
    """A Netlink closed before the namespaces are deleted (its sockets would keep them alive)."""
    with Netlink() as netlink:
        yield netlink


def _up(nl: Netlink, netns: str, name: str, cidr: str | None = None) -> None:
    if cidr is not None:
        nl.add_address(name, netns, cidr, nodad=":" in cidr)
    nl.set_link(name, netns, up=True)


def test_create_netns_is_an_iproute2_namespace() -> None:
    name = f"vtt-{secrets.token_hex(3)}-ns"
    create_netns(name)
    try:
        assert name in list_netns()
        assert name in _run("ip", "netns", "list").split()
        assert [line.split(":")[1].strip() for line in _in_netns(name, "ip", "-o", "link").splitlines()] == ["lo"]
        with pytest.raises(NetlinkError, match="File exists"):
            create_netns(name)
    finally:
        delete_netns(name)
    assert name not in list_netns()
    assert name not in _run("ip", "netns", "list").split()
    with pytest.raises(NetnsNotFoundError) as missing:
        delete_netns(name)
    assert missing.value.operation == f"delete netns {name}"
    assert missing.value.kernel_message == "No such file or directory"


def test_a_namespace_netlink_makes_is_configured_through_the_socket_opened_inside_it(nl: Netlink) -> None:
    name = f"vtt-{secrets.token_hex(3)}-made"
    home = os.stat("/proc/thread-self/ns/net").st_ino
    try:
        nl.add_netns(name)
        assert os.stat("/proc/thread-self/ns/net").st_ino == home
        nl.set_link("lo", name, up=True, alias="vtopo:lab1")
        assert "alias vtopo:lab1" in _in_netns(name, "ip", "-o", "link", "show", "lo")
        assert nl.index("lo", name) == 1
        with pytest.raises(NetlinkError, match="No such device"):
            nl.index("nope0", name)
    finally:
        nl.release(name)
        delete_netns(name)


def test_entered_moves_only_the_block(make_netns: NetnsFactory) -> None:
    name = make_netns("a")
    home = os.stat("/proc/thread-self/ns/net").st_ino
    inside = os.stat(f"/run/netns/{name}").st_ino
    with entered(name):
        assert os.stat("/proc/thread-self/ns/net").st_ino == inside
    assert os.stat("/proc/thread-self/ns/net").st_ino == home
    with pytest.raises(RuntimeError), entered(name):
        raise RuntimeError("boom")
    assert os.stat("/proc/thread-self/ns/net").st_ino == home
    with entered(None):
        assert os.stat("/proc/thread-self/ns/net").st_ino == home
    with pytest.raises(NetnsNotFoundError), entered("vtt-no-such-netns"):
        pass


def _linked_pair(nl: Netlink, make_netns: NetnsFactory, subnet: str) -> tuple[str, str]:
    """Two namespaces joined by a veth eth0-eth0, both ends up with .1 and .2 of `subnet` (say "10.77.3")."""
    a, b = make_netns("a"), make_netns("b")
    nl.add_veth("eth0", a, "eth0", b)
    _up(nl, a, "eth0", f"{subnet}.1/24")
    _up(nl, b, "eth0", f"{subnet}.2/24")
    _wait_up(a, "eth0")
    _wait_up(b, "eth0")
    return a, b


def test_veth_joins_two_namespaces(nl: Netlink, make_netns: NetnsFactory) -> None:
    a, b = _linked_pair(nl, make_netns, "10.77.0")
    assert "eth0@" in _in_netns(b, "ip", "-o", "link", "show", "eth0")
    assert _ping(a, "10.77.0.2") is not None
    assert _ping(b, "10.77.0.1") is not None


def test_bridge_with_two_veths_forwards(nl: Netlink, make_netns: NetnsFactory) -> None:
    switch, h1, h2 = make_netns("sw"), make_netns("h1"), make_netns("h2")
    nl.add_bridge("br0", switch, stp=False, forward_delay=0, ageing_time=30000)
    for port, host, cidr in (("p1", h1, "10.77.1.1/24"), ("p2", h2, "10.77.1.2/24")):
        nl.add_veth(port, switch, "eth0", host)
        nl.set_master(port, switch, "br0")
        _up(nl, switch, port)
        _up(nl, host, "eth0", cidr)
    _up(nl, switch, "br0")
    _wait_up(switch, "br0", "p1", "p2")
    _wait_up(h1, "eth0")
    _wait_up(h2, "eth0")
    links = {link.name: link for link in nl.links(switch)}
    assert links["br0"].kind == "bridge"
    assert links["p1"].master_index == links["p2"].master_index == links["br0"].index
    assert _ping(h1, "10.77.1.2") is not None
    nl.set_hairpin("p1", switch, True)
    assert "hairpin on " in _in_netns(switch, "ip", "-d", "link", "show", "p1")
    nl.set_hairpin("p1", switch, False)
    assert "hairpin off " in _in_netns(switch, "ip", "-d", "link", "show", "p1")
    nl.set_master("p2", switch, None)
    assert {link.name: link for link in nl.links(switch)}["p2"].master_index is None


def test_bridge_timers_and_stp_reach_the_kernel(nl: Netlink, make_netns: NetnsFactory) -> None:
    switch = make_netns("sw")
    nl.add_bridge("br0", switch, stp=True, forward_delay=400, ageing_time=3000)
    details = _in_netns(switch, "ip", "-d", "link", "show", "br0")
    assert "forward_delay 400 " in details
    assert "ageing_time 3000 " in details
    assert "stp_state 1 " in details


@pytest.mark.parametrize(("mode", "siblings_talk"), [("bridge", True), ("private", False)])
def test_macvlan_siblings(nl: Netlink, make_netns: NetnsFactory, mode: str, siblings_talk: bool) -> None:
    lan, h1, h2 = make_netns("lan"), make_netns("h1"), make_netns("h2")
    nl.add_veth("lower", lan, "lower-peer", lan)  # no dummy driver here: a veth is the lower device
    _up(nl, lan, "lower")
    _up(nl, lan, "lower-peer")
    for host, cidr in ((h1, "10.77.2.1/24"), (h2, "10.77.2.2/24")):
        nl.add_macvlan("eth0", host, "lower", lan, mode)
        _up(nl, host, "eth0", cidr)
    _wait_up(h1, "eth0")
    _wait_up(h2, "eth0")
    assert f"macvlan mode {mode} " in _in_netns(h1, "ip", "-d", "link", "show", "eth0")
    assert (_ping(h1, "10.77.2.2") is not None) is siblings_talk


def test_macvtap_gets_its_own_char_device_in_its_mode(nl: Netlink, make_netns: NetnsFactory) -> None:
    first, second = make_netns("a"), make_netns("b")
    paths = []
    for netns, mode in ((first, "bridge"), (second, "private")):
        nl.add_veth("lower", netns, "lower-peer", netns)
        paths.append(nl.add_macvtap("mvt0", "lower", netns, mode))
        assert f"macvtap mode {mode} " in _in_netns(netns, "ip", "-d", "link", "show", "mvt0")
    assert paths[0] != paths[1]  # both namespaces would hand out the same first free ifindex
    for netns, path in zip((first, second), paths):
        assert stat.S_ISCHR(os.stat(path).st_mode)
        index = _in_netns(netns, "ip", "-o", "link", "show", "mvt0").split(":")[0]
        assert path == f"/dev/tap{index}"
    nl.delete_link("mvt0", first)
    assert wait_for(lambda: not os.path.exists(paths[0]), 3)
    assert os.path.exists(paths[1])


def test_tap_is_persistent(nl: Netlink, make_netns: NetnsFactory) -> None:
    netns = make_netns("vm")
    nl.add_tap("tap0", netns)
    details = _in_netns(netns, "ip", "-d", "link", "show", "tap0")
    assert "tun type tap" in details and "persist on" in details
    assert not nl.link_exists("tap0", None)
    with pytest.raises(NetlinkError, match="tap0"):
        nl.add_tap("tap0", netns)


def test_a_delay_shows_in_the_rtt_or_a_kernel_without_netem_refuses_it_naming_the_device(
        nl: Netlink, make_netns: NetnsFactory) -> None:
    """Where the kernel has netem the delay is applied; where it has not (this CI host), as the host probe says,
    the kernel's refusal names the device and the link still carries traffic."""
    a, b = _linked_pair(nl, make_netns, "10.77.3")
    assert _ping(a, "10.77.3.2") is not None  # resolves ARP before timing
    if not netem_available():
        with pytest.raises(NetlinkError, match="eth0") as refused:
            nl.set_impairment("eth0", a, delay_ms=50, rate_mbit=100)
        assert "qdisc kind is unknown" in refused.value.kernel_message
        assert "netem" not in _in_netns(a, "tc", "qdisc", "show", "dev", "eth0")
        assert _ping(a, "10.77.3.2") is not None
        return
    nl.set_impairment("eth0", a, delay_ms=50, loss_pct=0, rate_mbit=100)
    qdiscs = _in_netns(a, "tc", "qdisc", "show", "dev", "eth0")
    assert "netem 1: root" in qdiscs and "delay 50ms" in qdiscs and "tbf 2: parent 1:1" in qdiscs
    rtt = _ping(a, "10.77.3.2")
    assert rtt is not None and 0.05 <= rtt < 0.5


def _transfer_seconds(sender: str, receiver: str, address: str, size: int) -> float:
    """Seconds to push `size` bytes over TCP from `sender` to a reader in `receiver`."""
    with entered(receiver):
        server = socket.create_server((address, 0))
    port = server.getsockname()[1]

    def drain() -> None:
        connection, _ = server.accept()
        with connection:
            while connection.recv(1 << 16):
                pass

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        with entered(sender):
            client = socket.create_connection((address, port), timeout=10)
        with client:
            start = time.monotonic()
            client.sendall(b"\0" * size)
            client.shutdown(socket.SHUT_WR)
            client.recv(1)  # returns when the reader has closed: everything arrived
            return time.monotonic() - start
    finally:
        reader.join(timeout=10)
        server.close()


def test_rate_limit_and_clearing(nl: Netlink, make_netns: NetnsFactory) -> None:
    a, b = _linked_pair(nl, make_netns, "10.77.4")
    nl.set_impairment("eth0", a, rate_mbit=20)
    assert "tbf 2: root" in _in_netns(a, "tc", "qdisc", "show", "dev", "eth0")
    assert "rate 20Mbit" in _in_netns(a, "tc", "qdisc", "show", "dev", "eth0")
    seconds = _transfer_seconds(a, b, "10.77.4.2", 1_000_000)  # 0.4 s at 2.5 MB/s
    assert 0.3 < seconds < 3
    nl.set_impairment("eth0", a)
    assert "noqueue" in _in_netns(a, "tc", "qdisc", "show", "dev", "eth0")
    assert _transfer_seconds(a, b, "10.77.4.2", 1_000_000) < 0.2
    nl.set_impairment("eth0", a)  # clearing twice is fine
    with pytest.raises(ValueError):
        nl.set_impairment("eth0", a, loss_pct=101)


def test_tx_checksum_offload_toggles(nl: Netlink, make_netns: NetnsFactory) -> None:
    a, b = make_netns("a"), make_netns("b")
    nl.add_veth("eth0", a, "eth0", b)

    def tx_state() -> str:
        features = _in_netns(a, "ethtool", "-k", "eth0").splitlines()
        return next(line for line in features if line.startswith("tx-checksumming:")).split()[1]

    assert tx_state() == "on"
    nl.set_tx_checksum("eth0", a, False)
    assert tx_state() == "off"
    nl.set_tx_checksum("eth0", a, True)
    assert tx_state() == "on"
    with pytest.raises(NetlinkError, match="No such device"):
        nl.set_tx_checksum("nope0", a, False)


def test_sysctl_is_per_namespace(nl: Netlink, make_netns: NetnsFactory) -> None:
    router = make_netns("r")
    with open("/proc/sys/net/ipv4/ip_forward") as host_value:
        before = host_value.read()
    target = "0" if before.strip() == "1" else "1"
    nl.set_sysctl(router, "net.ipv4.ip_forward", target)
    assert _in_netns(router, "sysctl", "-n", "net.ipv4.ip_forward").strip() == target
    with open("/proc/sys/net/ipv4/ip_forward") as host_value:
        assert host_value.read() == before
    nl.set_sysctl(router, "net/ipv4/conf/lo/forwarding", "0")
    with pytest.raises(ValueError):
        nl.set_sysctl(router, "kernel.hostname", "x")
    with pytest.raises(NetlinkError, match="No such file or directory"):
        nl.set_sysctl(router, "net.ipv4.no_such_knob", "1")


def test_a_sysctl_choosing_a_module_the_kernel_would_load_is_refused(nl: Netlink, make_netns: NetnsFactory) -> None:
    """Root writes a lab's sysctls, and the kernel loads the congestion control a writer with the host's
    CAP_NET_ADMIN names (`tcp_X`) when it is not loaded: a lab, a member's file, may choose only what is loaded."""
    node = make_netns("n")
    with open("/proc/sys/net/ipv4/tcp_allowed_congestion_control") as allowed:  # a namespace takes these
        loaded = allowed.read().split()
    nl.set_sysctl(node, "net.ipv4.tcp_congestion_control", loaded[-1])
    assert _in_netns(node, "sysctl", "-n", "net.ipv4.tcp_congestion_control").strip() == loaded[-1]
    with pytest.raises(ValueError, match="net.ipv4.tcp_congestion_control = vtopo_none: this host has not loaded it"
                                         ".* a lab has the kernel load no module"):
        nl.set_sysctl(node, "net/ipv4/tcp_congestion_control", "vtopo_none")


def test_link_properties_addresses_and_routes(nl: Netlink, make_netns: NetnsFactory) -> None:
    a, b = make_netns("a"), make_netns("b")
    nl.add_veth("eth0", a, "eth0", b)
    nl.set_link("eth0", a, mtu=1400, mac="02:00:5e:00:77:01", up=True, alias="vtopo:lab1")
    nl.add_address("eth0", a, "10.77.5.1/24", nodad=False)
    nl.add_address("eth0", a, "fd00:77::1/64", nodad=True)
    nl.add_route(a, "default", "10.77.5.254", protocol=RouteProtocol.STATIC)
    nl.add_route(a, "fd00:78::/64", "fd00:77::fe", protocol=RouteProtocol.STATIC)
    shown = _in_netns(a, "ip", "-o", "link", "show", "eth0")
    assert "mtu 1400 " in shown and "02:00:5e:00:77:01" in shown and "alias vtopo:lab1" in shown
    assert ",UP" in shown
    addresses = _in_netns(a, "ip", "-o", "addr", "show", "eth0")
    assert "inet 10.77.5.1/24 " in addresses and "inet6 fd00:77::1/64 " in addresses
    assert "default via 10.77.5.254 dev eth0" in _in_netns(a, "ip", "route")
    assert "fd00:78::/64 via fd00:77::fe dev eth0" in _in_netns(a, "ip", "-6", "route")
    eth0 = next(link for link in nl.links(a) if link.name == "eth0")
    assert eth0 == LinkInfo(name="eth0", index=eth0.index, kind="veth", alias="vtopo:lab1", master_index=None)
    nl.set_link("eth0", a, up=False, alias="")
    assert ",UP" not in _in_netns(a, "ip", "-o", "link", "show", "eth0")
    assert next(link for link in nl.links(a) if link.name == "eth0").alias is None
    with pytest.raises(ValueError):
        nl.add_route(a, "10.0.0.0/8", "fd00:77::fe", protocol=RouteProtocol.STATIC)


def test_ipv6_addresses_skip_dad_and_a_link_local_gateway_takes_its_device(nl: Netlink, make_netns: NetnsFactory
                                                                          ) -> None:
    a, b = make_netns("a"), make_netns("b")
    nl.add_veth("eth0", a, "eth0", b)
    nl.set_link("eth0", a, up=True)
    nl.add_address("eth0", a, "fd00:79::1/64", nodad=True)
    shown = _in_netns(a, "ip", "-6", "-o", "addr", "show", "eth0", "scope", "global")
    assert "fd00:79::1/64" in shown and "nodad" in shown and "tentative" not in shown, "usable at once"
    nl.add_route(a, "default", "fe80::1", "eth0", protocol=RouteProtocol.STATIC)
    assert "default via fe80::1 dev eth0" in _in_netns(a, "ip", "-6", "route")


def test_errors_name_the_operation_and_the_interface(nl: Netlink, make_netns: NetnsFactory) -> None:
    a, b = make_netns("a"), make_netns("b")
    nl.add_veth("eth0", a, "eth0", b)
    with pytest.raises(NetlinkError) as exists:
        nl.add_veth("eth0", a, "eth1", b)
    assert exists.value.kernel_message == "File exists"
    assert "eth0" in str(exists.value) and a in str(exists.value)
    with pytest.raises(NetlinkError) as missing:
        nl.delete_link("nope0", a)
    assert missing.value.kernel_message == "No such device"
    assert missing.value.operation == f"delete link nope0 in netns {a}"
    with pytest.raises(NetlinkError, match="mtu"):
        nl.set_link("eth0", a, mtu=10)
    assert nl.link_exists("eth0", b)
    nl.delete_link("eth0", a)
    assert not nl.link_exists("eth0", b)
    with pytest.raises(NetnsNotFoundError):
        nl.links("vtt-no-such-netns")


def test_delete_netns_leaves_nothing(make_netns: NetnsFactory) -> None:
    netns = make_netns("gone")
    host_end = _host_name()
    with Netlink() as nl:
        nl.add_veth("eth0", netns, host_end, None)
        nl.add_bridge("br0", netns, stp=False, forward_delay=0, ageing_time=30000)
        nl.add_tap("tap0", netns)
        nl.add_veth("lower", netns, "lower-peer", netns)
        tap_device = nl.add_macvtap("mvt0", "lower", netns, "bridge")
        assert host_end in _host_link_names()
        nl.release(netns)
        delete_netns(netns)
    assert netns not in list_netns() and netns not in _run("ip", "netns", "list").split()
    assert wait_for(lambda: host_end not in _host_link_names(), 3)
    assert wait_for(lambda: not os.path.exists(tap_device), 3)


def test_netlink_belongs_to_its_thread(nl: Netlink) -> None:
    errors: list[BaseException] = []

    def use() -> None:
        try:
            nl.links(None)
        except RuntimeError as e:
            errors.append(e)

    worker = threading.Thread(target=use)
    worker.start()
    worker.join()
    assert len(errors) == 1


def _heard(events: LinkEvents, namespaces: set[int]) -> list[InterfaceEvent | NamespaceGone | EventsLost]:
    heard: list[InterfaceEvent | NamespaceGone | EventsLost] = []
    while (read := events.read(namespaces)) is not None:
        heard += read
    return heard


def test_only_the_namespaces_listened_to_are_heard(make_netns: NetnsFactory) -> None:
    """A link change in a namespace the host has an id for is heard when the caller listens to that id, and not
    otherwise."""
    quiet, listened = make_netns("quiet"), make_netns("listened")
    events = LinkEvents()
    try:
        ids = {events.nsid_of(quiet), listened_id := events.nsid_of(listened)}
        for netns in (quiet, listened):
            _run("ip", "-n", netns, "link", "add", "vt-probe", "type", "veth", "peer", "name", "vt-peer")
        heard: list[InterfaceEvent | NamespaceGone | EventsLost] = []

        def probe_heard() -> bool:
            heard.extend(_heard(events, {listened_id}))
            return InterfaceEvent(listened_id, "vt-probe", False) in heard

        assert wait_for(probe_heard, 5), heard
        assert [event for event in heard if isinstance(event, InterfaceEvent) and event.nsid in ids - {listened_id}] \
            == []
    finally:
        events.close()


def test_a_namespace_is_heard_gone_by_the_id_the_host_knows_it_by(make_netns: NetnsFactory) -> None:
    """The end of a namespace the host gave an id is heard under that id; the end of another, which a namespace the
    host knows (a node's) knew by the same number, is not: the kernel tells that namespace's RTM_DELNSID too, in its
    own numbering."""
    watched, seer, seen = make_netns("watched"), make_netns("seer"), make_netns("seen")
    events = LinkEvents()
    try:
        nsid = events.nsid_of(watched)
        known = {nsid, events.nsid_of(seer)}
        _run("ip", "-n", seer, "netns", "set", seen, str(nsid))  # seer knows seen by the host's number for watched
        delete_netns(seen)
        assert wait_for(lambda: f"nsid {nsid} " not in _run("ip", "-n", seer, "netns", "list-id") + " ", 5)
        assert NamespaceGone(nsid) not in _heard(events, known)
        delete_netns(watched)
        heard: list[InterfaceEvent | NamespaceGone | EventsLost] = []

        def gone() -> bool:
            heard.extend(_heard(events, known))
            return NamespaceGone(nsid) in heard

        assert wait_for(gone, 5), heard
    finally:
        events.close()


def test_a_bridge_port_is_heard_by_its_own_messages_and_leaving_its_bridge(make_netns: NetnsFactory) -> None:
    """What the bridge family says of a port's place in its bridge (its cost here) is not heard: the kernel drops it
    before it is queued, and the port's own messages tell its state. The bridge family's word that the port left its
    bridge is still heard, as the port's removal from it."""
    netns = make_netns("bridged")
    events = LinkEvents()
    try:
        nsid = events.nsid_of(netns)
        _in_netns(netns, "ip", "link", "add", "vt-br", "type", "bridge")
        _in_netns(netns, "ip", "link", "add", "vt-port", "master", "vt-br", "type", "veth", "peer", "name", "vt-peer")
        heard: list[InterfaceEvent | NamespaceGone | EventsLost] = []

        def heard_of(name: str, up: bool | None = False) -> Callable[[], bool]:
            def check() -> bool:
                heard.extend(_heard(events, {nsid}))
                return InterfaceEvent(nsid, name, up) in heard
            return check

        assert wait_for(heard_of("vt-peer"), 5), heard
        heard.clear()
        _in_netns(netns, "bridge", "link", "set", "dev", "vt-port", "cost", "7")  # the bridge family's message alone
        _in_netns(netns, "ip", "link", "add", "vt-marker", "type", "veth", "peer", "name", "vt-marker-peer")
        assert wait_for(heard_of("vt-marker"), 5), heard
        assert [event for event in heard if isinstance(event, InterfaceEvent) and event.name == "vt-port"] == []
        _in_netns(netns, "ip", "link", "set", "vt-port", "nomaster")
        assert wait_for(heard_of("vt-port", None), 5), heard
    finally:
        events.close()
