"""The trust rules in the compiler: what the user's consent and the host's own network change. Pure, no host."""
from __future__ import annotations

import ipaddress

from golden import GOLDEN
from vtopo.compile.context import Trust
from vtopo.lab import open_lab, problems_of
from vtopo.model.problems import errors_in
from vtopo.resources import TOPOLOGIES

HOSTILE = GOLDEN / "hostile"


def _messages(lab: str, trust: Trust) -> list[str]:
    return [str(p) for p in problems_of(open_lab(HOSTILE / f"{lab}.vtopo").topology, trust=trust)]


def test_a_host_device_needs_consent_and_must_exist():
    lab = open_lab(HOSTILE / "host-device-macvlan-on-eth0.vtopo").topology
    refused = errors_in(problems_of(lab))
    assert [p.consent.name for p in refused if p.consent] == ["eth0"]
    assert errors_in(problems_of(lab, trust=Trust(host_devices=frozenset({"eth0"})))) == []
    missing = Trust(host_devices=frozenset({"eth0"}), host_interfaces=frozenset({"lo"}))
    assert "error: node m1: the lower device eth0 does not exist on this host" in _messages(
        "host-device-macvlan-on-eth0", missing)


def test_passthru_with_consent_says_the_device_leaves_the_host():
    messages = _messages("host-device-macvtap-passthru-on-eth0", Trust(host_devices=frozenset({"eth0"})))
    assert "warning: node m1: eth0 leaves the host while the lab runs (passthru, allowed with " \
           "--allow-host-device eth0)" in messages
    assert not [m for m in messages if m.startswith("error")]


def test_host_addresses_may_not_overlap_the_hosts_own_networks():
    lab = open_lab(TOPOLOGIES / "host-routed-bridges.vtopo").topology
    assert errors_in(problems_of(lab, trust=Trust(host_networks=("192.0.2.0/24", "fd00::/64")))) == []
    host_address = lab.nodes[next(n for n in lab.nodes if lab.nodes[n].kind == "bridge")].settings["host_addresses"][0]
    clash = str(ipaddress.ip_interface(host_address).network.supernet(new_prefix=12))
    errors = errors_in(problems_of(lab, trust=Trust(host_networks=(clash,))))
    assert errors and f"overlaps {clash}, which the host already has" in errors[0].message
