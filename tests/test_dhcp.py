"""DHCP offline: what dnsmasq is told, what status shows of a lease file the lab's own user writes, what `vtopo save`
leaves to the DHCP server, and what the dhcp-lease check says, passing and failing, with the diagnosis a student
reads when a router relays nothing. The labs themselves run in tests/agent/test_dhcp_as_member.py."""
from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from dhcp_labs import dhcp_relay, relay_off
from vtopo.checks.builtin import DhcpLease, LeaseParams
from vtopo.checks.live import LiveProbe
from vtopo.kinds.check_types import Probe
from vtopo.lab_terms import LabOwner, Trust
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model import io
from vtopo.model.topology import Topology
from vtopo_kinds import dhcp
from vtopo_kinds.common import kernel_addresses, kernel_routes

MEMBER = Trust(owner=LabOwner.member(1001, 1001))


def test_the_lab_file_keeps_a_ports_dhcp_setting_and_the_servers_pools() -> None:
    topology = dhcp_relay()
    again = io.loads(io.dumps(topology))
    assert [end.interface.dhcp for link in again.links.values() for end in link.ends if end.node == "c2"] == [True]
    assert again.nodes["srv"].settings == topology.nodes["srv"].settings
    assert resolve(topology, registry()).problems == ()


def test_dnsmasq_is_told_only_what_vtopo_wrote_from_checked_settings() -> None:
    lab = resolve(dhcp_relay(), registry(), trust=MEMBER).valid().lab
    server, router = lab.node_named("srv"), lab.node_named("r1")
    assert server is not None and router is not None
    assert dhcp.configuration(server, server.settings.dhcp_pools, {}).splitlines()[1:] == [
        "pid-file=/run/dhcp/dnsmasq.pid", "dhcp-leasefile=/run/dhcp/leases", "log-facility=/run/dhcp/dnsmasq.log",
        "log-dhcp", "user=root", "group=root", "no-resolv",
        "dhcp-range=set:pool0,10.0.1.100,10.0.1.199,255.255.255.0,3600",
        "dhcp-option=tag:pool0,option:router,10.0.1.1",
        "dhcp-range=set:pool1,10.0.2.100,10.0.2.199,255.255.255.0,3600",
        "dhcp-option=tag:pool1,option:router,10.0.2.1", "dhcp-authoritative", "no-ping"]
    relayed = dhcp.configuration(router, [], router.settings.dhcp_relay).splitlines()
    assert relayed[-3:] == ["port=0", "dhcp-relay=10.0.1.1,10.0.0.10", "dhcp-relay=10.0.2.1,10.0.0.10"]


def test_status_shows_only_addresses_and_macs_of_a_lease_file_and_names_only_the_labs_nodes() -> None:
    """The lease file is the lab user's to write: status takes an address and a MAC from each line, and a hostname
    only when it is one of the lab's nodes."""
    lab = resolve(dhcp_relay(), registry(), trust=MEMBER).valid().lab
    server = lab.node_named("srv")
    assert server is not None
    written = ("1795944492 02:00:00:00:00:01 10.0.1.100 c1 01:02:00:00:00:00:01\n"
               "1795944492 02:00:00:00:00:02 10.0.2.100 $(reboot)\x1b[2J *\n"
               "1795944492 not-a-mac 10.0.2.101 c2 *\n"
               "junk\n1795944492 02:00:00:00:00:03 ../../etc c2 *\n")
    asked: list[tuple[str, int]] = []

    def read_file(path: str, limit: int) -> str:
        asked.append((path, limit))
        return written

    shown = server.kind.status_detail(server, read_file)
    assert shown == "; leases: 10.0.1.100 c1 (02:00:00:00:00:01), 10.0.2.100 ? (02:00:00:00:00:02)"
    assert asked == [(f"{lab.names.node_dir('srv')}.dhcp/leases", dhcp.LEASE_FILE_LIMIT)]
    assert server.kind.status_detail(server, lambda path, limit: "") == "; leases: none yet"


def test_save_leaves_a_leased_address_and_its_default_route_to_the_dhcp_server() -> None:
    lab = resolve(dhcp_relay(), registry()).valid().lab
    client = lab.node_named("c1")
    assert client is not None
    shown = {("ip", "-j", "address", "show"): [{"ifname": "eth0", "addr_info": [
                 {"local": "10.0.1.100", "prefixlen": 24, "scope": "global", "dynamic": True},
                 {"local": "2001:db8:1::5", "prefixlen": 64, "scope": "global"}]}],
             ("ip", "-j", "-4", "route", "show"): [{"dst": "default", "gateway": "10.0.1.1", "protocol": "dhcp"},
                                                   {"dst": "10.9.0.0/16", "gateway": "10.0.1.1", "protocol": "boot"}],
             ("ip", "-j", "-6", "route", "show"): []}

    def read(argv: list[str]) -> str:
        return json.dumps(shown[tuple(argv)])

    assert kernel_addresses(client, read) == {"eth0": ["2001:db8:1::5/64"]}
    assert kernel_routes(read) == [("10.9.0.0/16", "10.0.1.1")]


class LeasesSeen:
    """A probe that sees `held` on every interface: what the dhcp-lease check asks of it."""

    def __init__(self, held: list[str], diagnosis: str = "") -> None:
        self.held, self.diagnosis = held, diagnosis

    def leased_addresses(self, interface: str) -> list[str]:
        return self.held

    def dhcp_diagnosis(self, interface: str) -> str:
        return self.diagnosis


def test_the_dhcp_lease_check_wants_an_address_of_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("vtopo.checks.builtin.LEASE_WAIT_S", 0)
    check, params = DhcpLease(), LeaseParams("c2:eth0", "10.0.2.100-10.0.2.199")
    probe: Any = LeasesSeen(["10.0.2.150/24"])
    assert check.run(params, probe).passed
    outside = check.run(params, LeasesSeen(["10.0.1.150/24"], "what answers"))
    assert (outside.passed, outside.why) == (False, "c2:eth0 holds 10.0.1.150/24 by DHCP, outside "
                                                    "10.0.2.100-10.0.2.199: what answers")
    assert check.problems(LeaseParams("c2:eth0", "10.0.2.1/24")) == [
        ("pool", "'10.0.2.1/24' is not a range of IPv4 addresses such as 10.0.2.100-10.0.2.199")]


@pytest.mark.parametrize(("topology", "interface", "diagnosis"), [
    (relay_off(dhcp_relay()), "c2:eth0",
     "nothing on its segment serves or relays DHCP: a DISCOVER is a broadcast, and a router forwards no broadcast, so "
     "it stops at r1:eth2; set a DHCP relay on r1:eth2 towards the server's address"),
    (dhcp_relay(), "c1:eth0",
     "on its segment r1:eth1 is a DHCP relay to 10.0.0.10 (its log: /run/dhcp/dnsmasq.log in that node)"),
], ids=["relay-off", "relay-on"])
def test_a_client_without_a_lease_is_told_what_answers_dhcp_on_its_segment(topology: Topology, interface: str,
                                                                             diagnosis: str) -> None:
    probe: Probe = LiveProbe(SimpleNamespace(context=resolve(topology, registry()).valid().lab))  # type: ignore[arg-type]
    assert probe.dhcp_diagnosis(interface) == diagnosis

