"""DHCP inside a node, with Debian's own programs. dnsmasq serves the node's pools (and answers DNS for the lab's
names, from the node's /etc/hosts and its clients' leases), and relays DHCP from a router's ports to a server behind
other routers; busybox's udhcpc is the client on each interface set to dhcp, and configures it through a script vtopo
writes. Each runs inside its node, as root there (in a member's lab the member, in the lab's user namespace), with
its files in the node's own DHCP directory, seen inside at /run/dhcp: nothing of them reaches the host's network.

A pool reads FIRST-LAST/PREFIX, then optionally `gateway ADDRESS` (the default gateway its clients are given):
10.0.2.100-10.0.2.199/24 gateway 10.0.2.1. A pool may lie on a subnet the server has no port on: dnsmasq then serves
it to the requests a relay on that subnet forwards (their giaddr is on it)."""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from vtopo.kinds import api
from vtopo.kinds.api import EndContext, NodeContext, Problem

INSIDE = "/run/dhcp"  # the node's DHCP directory, inside it (a tmpfs of the node's own)
CONFIG_FILE = "dnsmasq.conf"
LEASE_FILE = "leases"
CLIENT_SCRIPT = "udhcpc.script"
LEASE_SECONDS = 3600
LEASE_FILE_LIMIT = 1 << 16  # what status reads of a lease file the lab's own user may write
NOBODY = (65534, 65534)  # dnsmasq's user where the lab has no user namespace of its own
POOLS_HELP = ("One pool per line: FIRST-LAST/PREFIX, then optionally `gateway ADDRESS`, the default gateway its "
              "clients get, e.g. 10.0.2.100-10.0.2.199/24 gateway 10.0.2.1. A pool on a subnet the node has no port "
              "on is served to what a DHCP relay on that subnet forwards.")
RELAY_HELP = ("Per port, the DHCP server its clients' requests are relayed to, e.g. eth1 = 10.0.0.2: a router "
              "forwards no broadcast, so a DISCOVER reaches a server behind it only through a relay")
CLIENT_SCRIPT_TEXT = """#!/bin/sh
# written by vtopo: udhcpc runs it at each DHCP event of an interface. The address is given the lease's lifetime,
# so the kernel shows it as dynamic and drops it when the lease runs out unrenewed.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
case "$1" in
deconfig)
    ip -4 address flush dev "$interface" scope global ;;
bound|renew)
    [ "$1" = renew ] || ip -4 address flush dev "$interface" scope global
    ip address replace "$ip/$mask" dev "$interface" valid_lft "$lease" preferred_lft "$lease"
    [ -z "$router" ] || ip route replace default via "${router%% *}" dev "$interface" proto dhcp ;;
esac
"""


@dataclass(frozen=True)
class Pool:
    """A range of addresses a DHCP server hands out on one subnet, with the gateway its clients are told."""

    first: ipaddress.IPv4Address
    last: ipaddress.IPv4Address
    network: ipaddress.IPv4Network
    gateway: ipaddress.IPv4Address | None = None

    def __contains__(self, address: object) -> bool:
        return isinstance(address, ipaddress.IPv4Address) and self.first <= address <= self.last

    def __str__(self) -> str:
        return f"{self.first}-{self.last}/{self.network.prefixlen}"


def parse_pool(text: str) -> Pool:
    """A pool as a lab writes it; ValueError says what is wrong, in words a student acts on."""
    words = text.split()
    if len(words) not in (1, 3) or (len(words) == 3 and words[1] != "gateway") or "-" not in words[0]:
        raise ValueError(f"pool {text!r} must read FIRST-LAST/PREFIX [gateway ADDRESS], e.g. "
                         "10.0.2.100-10.0.2.199/24 gateway 10.0.2.1")
    first_text, _, rest = words[0].partition("-")
    last_text, _, prefix = rest.partition("/")
    try:
        first, last = ipaddress.IPv4Address(first_text), ipaddress.IPv4Address(last_text)
        network = ipaddress.IPv4Interface(f"{first}/{prefix or 'missing'}").network
        gateway = ipaddress.IPv4Address(words[2]) if len(words) == 3 else None
    except ValueError as error:
        raise ValueError(f"pool {text!r}: {error} (DHCP here is IPv4)") from None
    if first > last or last not in network or first in (network.network_address, network.broadcast_address) \
            or last == network.broadcast_address:
        raise ValueError(f"pool {text!r}: {first} to {last} must be hosts of {network}, the first no higher than the "
                         "last")
    if gateway is not None and (gateway not in network or first <= gateway <= last):
        raise ValueError(f"pool {text!r}: the gateway {gateway} must be on {network} and outside the pool")
    return Pool(first, last, network, gateway)


def pools_of(texts: list[str]) -> list[Pool]:
    """The pools of a node whose settings were checked."""
    return [parse_pool(text) for text in texts]


def _ipv4(end: EndContext) -> list[ipaddress.IPv4Interface]:
    return [interface for address in end.end.interface.addresses if "/" in address
            and isinstance(interface := ipaddress.ip_interface(address), ipaddress.IPv4Interface)]


def problems(node: NodeContext[Any], pools: list[str], relay: dict[str, str]) -> Iterator[Problem]:
    """What is wrong with a node's DHCP server pools, relays and clients."""
    subject, node_id = node.subject, node.node.id
    parsed: list[Pool] = []
    for text in pools:
        try:
            parsed.append(parse_pool(text))
        except ValueError as error:
            yield Problem(f"DHCP server: {error}", subject, subject_id=node_id)
    for a, b in zip(parsed, parsed[1:]):
        if a.network.overlaps(b.network):
            yield Problem(f"DHCP server: pools {a} and {b} share a subnet; give each subnet one pool", subject,
                          subject_id=node_id)
    ends = {end.end.port: end for end in node.ends}
    for port, server in sorted(relay.items()):
        end = ends.get(port)
        if end is None:
            linked = ", ".join(sorted(ends)) or "none"
            yield Problem(f"DHCP relay names port {port}, which has no link (linked: {linked})", subject,
                          subject_id=node_id)
        elif not _ipv4(end):
            yield Problem(f"DHCP relay on {port}: the port has no IPv4 address, which a relay needs (the server "
                          "answers to it, and picks the pool by it)", subject, subject_id=node_id)
        try:
            ipaddress.IPv4Address(server)
        except ValueError:
            yield Problem(f"DHCP relay on {port}: the server {server!r} must be an IPv4 address", subject,
                          subject_id=node_id)
    for end in node.ends:
        if end.end.interface.dhcp and _ipv4(end):
            yield Problem(f"{end.end.port} is set to dhcp and has an IPv4 address too: a DHCP client takes its "
                          "address from the server; remove the address or the dhcp setting", subject,
                          subject_id=node_id)


def clients(node: NodeContext[Any]) -> list[EndContext]:
    return [end for end in node.ends if end.end.interface.dhcp]


def used(node: NodeContext[Any], pools: list[str], relay: dict[str, str]) -> bool:
    return bool(pools or relay or clients(node))


def directory(node: NodeContext[Any]) -> str:
    """The node's DHCP directory on the host, bound at INSIDE in the node."""
    return f"{node.names.node_dir(node.node.name)}.dhcp"


def binds(node: NodeContext[Any], pools: list[str], relay: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The node's own files that DHCP needs: its DHCP directory, at /run/dhcp inside."""
    return ((directory(node), INSIDE),) if used(node, pools, relay) else ()


def configuration(node: NodeContext[Any], pools: list[str], relay: dict[str, str]) -> str:
    """dnsmasq's configuration, written from the node's checked settings alone: every value in it is an address or
    a name vtopo validated."""
    in_lab = node.lab.trust.owner.ids is not None
    lines = [f"# written by vtopo for node {node.node.name}", f"pid-file={INSIDE}/dnsmasq.pid",
             f"dhcp-leasefile={INSIDE}/{LEASE_FILE}", f"log-facility={INSIDE}/dnsmasq.log", "log-dhcp",
             "user=root" if in_lab else "user=nobody", "group=root" if in_lab else "group=nogroup", "no-resolv"]
    if not pools:
        lines.append("port=0")  # a relay alone answers no DNS
    for index, pool in enumerate(pools_of(pools)):
        lines.append(f"dhcp-range=set:pool{index},{pool.first},{pool.last},{pool.network.netmask},{LEASE_SECONDS}")
        if pool.gateway is not None:
            lines.append(f"dhcp-option=tag:pool{index},option:router,{pool.gateway}")
    if pools:  # no-ping: dnsmasq would ping each address for 3 s before offering it, one client after another,
        # so a lab's first leases would take seconds each; what holds a lab's addresses is the lab file, checked
        lines += ["dhcp-authoritative", "no-ping"]
    ends = {end.end.port: end for end in node.ends}
    for port, server in sorted(relay.items()):
        lines.append(f"dhcp-relay={_ipv4(ends[port])[0].ip},{server}")
    return "\n".join(lines) + "\n"


def ops(node: NodeContext[Any], pools: list[str], relay: dict[str, str]) -> Iterator[api.Op]:
    """The node's DHCP directory, then its dnsmasq (serving its pools, relaying from its relay ports) and a client on
    each port set to dhcp."""
    if not used(node, pools, relay):
        return
    owner, name, where = node.subject, node.node.name, directory(node)
    netns = node.names.netns(name)
    ids = node.lab.trust.owner.ids
    yield api.MakeDirectory(owner=owner, path=where, ids=ids if ids is not None else NOBODY)
    enter = tuple(node.enter([], workdir=INSIDE))
    if pools or relay:
        config = f"{where}/{CONFIG_FILE}"
        yield api.WriteFile(owner=owner, path=config, content=configuration(node, pools, relay))
        carrier = _carrier(node.ends)
        yield api.StartProcess(owner=owner, name=f"dnsmasq@{name}", netns=netns, pid_file=f"{where}/dnsmasq.pid",
                               enter=enter,
                               argv=("dnsmasq", "--keep-in-foreground", f"--conf-file={INSIDE}/{CONFIG_FILE}"),
                               after=(f"file:{config}", api.addresses_resource(netns), *carrier))
    if clients(node):
        script = f"{where}/{CLIENT_SCRIPT}"
        yield api.WriteScript(owner=owner, path=script, content=CLIENT_SCRIPT_TEXT)
        for end in clients(node):
            pid_file = f"udhcpc-{end.device}.pid"
            yield api.StartProcess(owner=owner, name=f"udhcpc-{end.end.port}@{name}", netns=netns,
                                   pid_file=f"{where}/{pid_file}", enter=enter,
                                   argv=("busybox", "udhcpc", "-f", "-i", end.device, "-s", f"{INSIDE}/{CLIENT_SCRIPT}",
                                         "-p", f"{INSIDE}/{pid_file}", "-x", f"hostname:{name}", "-T", "1", "-t", "3",
                                         "-A", "2"),
                                   after=(f"file:{script}", *_carrier([end])))


def _carrier(ends: list[EndContext]) -> tuple[str, ...]:
    """Both sides of each of `ends` up: its interface has carrier, and what it first sends is not lost."""
    return tuple(api.up_resource(e.netns, e.device) for end in ends for e in (end, end.other) if e.device)


def service(node: NodeContext[Any], end: EndContext, pools: list[str], relay: dict[str, str]) -> str:
    """What answers DHCP on the node's port at `end`, in words: a server (of which pools), a relay (to which server),
    or "" for nothing."""
    if end.end.port in relay:
        return f"a DHCP relay to {relay[end.end.port]}"
    if pools:
        return "a DHCP server of " + ", ".join(str(pool) for pool in pools_of(pools))
    return ""


def leases(node: NodeContext[Any], pools: list[str], read_file: Callable[[str, int], str]) -> str:
    """The leases the node's server handed out, as `status` shows them: "10.0.2.100 c3 (02:...)", from dnsmasq's
    lease file (each line: expiry, MAC, address, hostname, client id), read with `read_file`. The lab's own user
    writes that file: only addresses and MACs it holds are shown, and the hostname only when it names a node."""
    if not pools:
        return ""
    shown = []
    for line in read_file(f"{directory(node)}/{LEASE_FILE}", LEASE_FILE_LIMIT).splitlines():
        words = line.split()
        if len(words) < 4:
            continue
        try:
            address, mac = ipaddress.IPv4Address(words[2]), words[1].lower()
        except ValueError:
            continue
        if len(mac) == 17 and all(c in "0123456789abcdef:" for c in mac):
            host = words[3] if node.lab.node_named(words[3]) is not None else api.UNKNOWN_CLIENT
            shown.append(api.Lease(str(address), host, mac))
    return api.leases_text(shown)
