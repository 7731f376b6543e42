"""IPv6 end to end on a deployed dual-stack lab: containers on a bridge, a router between two segments, global and
link-local gateways, `vtopo ping -6`, the checks and a capture that sees the hop limit drop at the router."""
from __future__ import annotations

import json
from typing import Any

import pytest

from vtopo.capture import path_targets
from vtopo.checks.engine import run_checks
from vtopo.checks.live import LiveProbe
from vtopo.checks.spec import typed_checks
from vtopo.cli.main import main
from vtopo.lab_terms import HostFacts
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model import io
from vtopo.model.topology import Topology
from tests.labs.test_capture import seen_along
from waiting import wait_for

pytestmark = pytest.mark.privileged


def dual_stack() -> Topology:
    """h1 and h2 on lan1 with r1; h3 straight on r1's eth1. h1 takes r1's global address as its IPv6 gateway, h2
    and h3 its link-local fe80::1, which r1 has on both ports."""
    def end(node: str, port: str, *addresses: str) -> dict[str, Any]:
        return {"node": node, "port": port, "interface": {"addresses": list(addresses)}}

    nodes = [{"id": name, "name": name, "kind": kind, "position": {"x": 0, "y": 0}, "settings": settings}
             for name, kind, settings in (
                 ("lan1", "bridge", {}), ("r1", "router", {"passive": ["eth0", "eth1"]}),
                 ("h1", "container", {"default_route": "10.1.0.1", "default_route6": "2001:db8:1::1"}),
                 ("h2", "container", {"default_route6": "fe80::1"}),
                 ("h3", "container", {"default_route6": "fe80::1%eth0"}))]
    links = [(end("h1", "eth0", "10.1.0.10/24", "2001:db8:1::10/64"), {"node": "lan1", "port": "p1"}),
             (end("h2", "eth0", "2001:db8:1::11/64"), {"node": "lan1", "port": "p2"}),
             (end("r1", "eth0", "10.1.0.1/24", "2001:db8:1::1/64", "fe80::1/64"), {"node": "lan1", "port": "p3"}),
             (end("r1", "eth1", "2001:db8:2::1/64", "fe80::1/64"), end("h3", "eth0", "2001:db8:2::10/64"))]
    checks = [
        {"name": "h1 reaches h3 over IPv6", "type": "reach", "source": "h1", "destination": "h3",
         "address": "2001:db8:2::10"},
        {"name": "h2 reaches h1 over IPv6 on the wire", "type": "reach", "source": "h2", "destination": "h1",
         "address": "2001:db8:1::10"},
        {"name": "h1 to h3 crosses r1 over IPv6", "type": "path", "source": "h1", "destination": "h3",
         "address": "2001:db8:2::10", "routers": 1, "via": "r1"},
        {"name": "h1 has an IPv6 default route", "type": "route", "node": "h1", "prefix": "::/0"},
        {"name": "r1 has h3's subnet connected", "type": "route", "node": "r1", "prefix": "2001:db8:2::0/64",
         "protocol": "kernel"}]
    return io.from_document({"format": "vtopo", "version": 3, "lab": {"id": "dual-stack", "name": "dual-stack"},
                             "nodes": nodes, "checks": checks,
                             "links": [{"id": f"l{i}", "a": a, "b": b} for i, (a, b) in enumerate(links)]})


def test_a_dual_stack_lab_validates_and_its_domains_show_both_subnets():
    from vtopo.compile.broadcast_domains import broadcast_domains_of

    topology = dual_stack()
    assert resolve(topology, registry(), HostFacts()).problems == ()
    domains = [d.describe() for d in broadcast_domains_of(resolve(topology, registry(), HostFacts()).valid().lab)]
    assert domains == ["domain 1: 10.1.0.0/24, 2001:db8:1::/64 via lan1: h1:eth0, h2:eth0, r1:eth0",
                       "domain 2: 2001:db8:2::/64: h3:eth0, r1:eth1"]


def test_containers_ping_over_ipv6_on_a_bridge_and_through_a_router_with_link_local_gateways(shared, capsys):
    lab = shared(dual_stack())
    assert lab.run("h2", "ip", "-6", "route", "show", "default").stdout.startswith("default via fe80::1 dev eth0")
    assert lab.run("h3", "ip", "-6", "route", "show", "default").stdout.startswith("default via fe80::1 dev eth0")
    for source, address in (("h1", "2001:db8:1::11"), ("h1", "2001:db8:2::10"), ("h2", "2001:db8:2::10"),
                            ("h3", "2001:db8:1::10")):
        done = lab.run(source, "ping", "-c", "2", "-i", "0.2", "-W", "2", address)
        assert done.returncode == 0, (source, address, done.stdout + done.stderr)

    assert main(["ping", "dual-stack", "h1", "h3", "-6", "-c", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ping h3 (2001:db8:2::10, ") and "2 sent, 2 received" in out, out

    checks, problems = typed_checks(lab.topology, registry())
    assert problems == []
    outcomes = {o.check.check.name: o.verdict for o in run_checks(checks, LiveProbe(lab.lab))}
    assert all(verdict.passed for verdict in outcomes.values()), outcomes
    assert outcomes["h1 to h3 crosses r1 over IPv6"].why == \
        "h1 → 2001:db8:1::1 (r1) → 2001:db8:2::10 (h3)"


def test_an_ipv6_ping_followed_along_its_path_loses_one_hop_limit_at_the_router(shared):
    lab = shared(dual_stack())
    assert lab.run("h1", "ping", "-c", "1", "-W", "2", "2001:db8:2::10").returncode == 0  # neighbours known
    targets = path_targets(lab.lab.context, "h1", "h3")
    assert [t.label for t in targets] == ["h1:eth0", "lan1:p3", "r1:eth1"]
    hops = seen_along(targets, "icmp6 and ip6[40] == 128",  # echo requests
                      lambda: lab.run("h1", "ping", "-c", "1", "-W", "2", "2001:db8:2::10").returncode == 0)
    requests = [hop[0] for hop in hops]
    assert [p.ttl for p in requests] == [64, 64, 63]
    assert {(p.src_ip, p.dst_ip) for p in requests} == {("2001:db8:1::10", "2001:db8:2::10")}
    assert len({p.echo for p in requests}) == 1


def test_a_pulled_cable_keeps_ipv6_addresses_and_the_check_says_where(shared):
    from vtopo.lab_operations import set_link_state

    lab = shared(dual_stack())
    set_link_state("dual-stack", "h3", "r1", up=False)  # h3's end goes down: r1 keeps eth1 up without carrier
    try:
        addresses = json.loads(lab.run("r1", "ip", "-j", "-6", "addr", "show", "dev", "eth1").stdout)[0]["addr_info"]
        assert "2001:db8:2::1" in {a["local"] for a in addresses}
        checks, _ = typed_checks(lab.topology, registry())
        reach = next(c for c in checks if c.check.name == "h1 reaches h3 over IPv6")
        [outcome] = run_checks([reach], LiveProbe(lab.lab))
        assert not outcome.passed
        assert outcome.verdict.why.endswith("link r1:eth1-h3:eth0 on the path is down: r1:eth1 has no carrier"), \
            outcome.verdict.why
    finally:  # the module's other tests share the lab
        set_link_state("dual-stack", "h3", "r1", up=True)
    # the addresses at both ends are tentative again until duplicate address detection has run (a second, more on a
    # busy machine), as after any cable is plugged back in
    assert wait_for(lambda: lab.run("h1", "ping", "-c", "1", "-W", "1", "2001:db8:2::10").returncode == 0, 15)
