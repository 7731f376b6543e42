"""The trust rules in the compiler: what the user's consent and the host's own network change. Pure, no host."""
from __future__ import annotations

import ipaddress

from golden import GOLDEN
from vtopo.lab_terms import HostFacts, Trust
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.model.problems import errors_in
from vtopo.resources import TOPOLOGIES

HOSTILE = GOLDEN / "hostile"


def _messages(lab: str, trust: Trust) -> list[str]:
    return [str(p) for p in resolve(open_lab(HOSTILE / f"{lab}.vtopo").topology, registry(), trust=trust).problems]


def test_a_host_device_needs_consent_and_must_exist():
    lab = open_lab(HOSTILE / "host-device-macvlan-on-eth0.vtopo").topology
    refused = errors_in(resolve(lab, registry()).problems)
    assert [p.consent.name for p in refused if p.consent] == ["eth0"]
    assert errors_in(resolve(lab, registry(), trust=Trust(host_devices=frozenset({"eth0"}))).problems) == []
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
    assert errors_in(resolve(lab, registry(), trust=Trust(host_networks=("192.0.2.0/24", "fd00::/64"))).problems) == []
    host_address = lab.nodes[next(n for n in lab.nodes if lab.nodes[n].kind == "bridge")].settings["host_addresses"][0]
    clash = str(ipaddress.ip_interface(host_address).network.supernet(new_prefix=12))
    errors = errors_in(resolve(lab, registry(), trust=Trust(host_networks=(clash,))).problems)
    assert errors and f"overlaps {clash}, which the host already has" in errors[0].message


def test_images_the_user_allowed_or_in_the_images_directory_are_accepted():
    lab = open_lab(HOSTILE / "image-host-files.vtopo").topology
    shadow = next(n for n in lab.nodes.values() if n.settings["image"] == "/etc/shadow")
    errors = [p for p in errors_in(resolve(lab, registry()).problems) if p.subject == f"node {shadow.name}"]
    assert [p.consent.name for p in errors if p.consent] == ["/etc/shadow"]
    allowed = [p for p in errors_in(resolve(lab, registry(), trust=Trust(images=frozenset({"/etc/shadow"}))).problems)
               if p.subject == f"node {shadow.name}"]
    assert allowed == []
    for image in ("debian.qcow2", "/var/lib/vtopo/images/debian.qcow2"):
        shadow.settings["image"] = image
        assert [p for p in errors_in(resolve(lab, registry()).problems) if p.subject == f"node {shadow.name}"] == []


def test_vms_above_the_hosts_memory_are_refused():
    lab = open_lab(TOPOLOGIES / "vm-router.vtopo").topology
    memory = sum(n.settings.get("memory_mb", 256) for n in lab.nodes.values() if n.kind == "vm")
    assert errors_in(resolve(lab, registry(), HostFacts(memory_mb=memory)).problems) == []
    errors = errors_in(resolve(lab, registry(), HostFacts(memory_mb=memory - 1)).problems)
    assert [str(e) for e in errors] == [f"error: lab: the lab's VMs need {memory:,} MiB of memory together and this "
                                        f"host has {memory - 1:,} MiB; give them less memory or run fewer VMs"]
