"""Check types and the engine, judged against a fake lab's answers; validation messages name check and field."""
from __future__ import annotations

import json
import threading
import time

import pytest

from fake_lab import FakeLab
from vtopo.checks.engine import run_checks, run_until_passed
from vtopo.checks.spec import typed_checks
from vtopo.lab import expectation_problems, registry
from vtopo.model import io
from vtopo.model.expectations import Check
from vtopo.resources import TOPOLOGIES

L2_VS_L3 = TOPOLOGIES / "l2-vs-l3.vtopo"


def _checks(topology=None):
    checks, problems = typed_checks(topology or io.load(L2_VS_L3), registry())
    assert problems == []
    return checks


def test_every_l2_vs_l3_check_passes_on_a_healthy_lab():
    outcomes = run_checks(_checks(), FakeLab())
    assert len(outcomes) == 20
    assert [o.check.check.name for o in outcomes if not o.passed] == []
    path = next(o for o in outcomes if o.check.check.name == "h1 to h3 crosses r1 and r2")
    assert path.verdict.why == "h1 → 10.1.0.1 (r1) → 10.0.12.2 (r2) → 10.2.0.10 (h3)"


def test_a_lost_router_link_fails_the_right_checks():
    lab = FakeLab()
    lab.unreachable = {(s, d): f"{s} has no route to {d}" for s, d in
                       [("h1", "h3"), ("h2", "h3"), ("h3", "h1"), ("h1", "r2")]}
    lab.neighbors = {"r1": {"neighbors": {}}, "r2": {"neighbors": {}}}
    lab.routes["r1"] = lab.routes["r1"][:1]
    lab.routes["r2"] = lab.routes["r2"][:1]
    lab.hops = lambda source, address: []  # type: ignore[method-assign]
    failed = {o.check.check.name: o for o in run_checks(_checks(), lab) if not o.passed}
    assert set(failed) == {"h1 reaches h3", "h2 reaches h3", "h3 reaches h1", "h1 reaches r2's link address",
                           "h1 to h3 crosses r1 and r2", "h3 to h1 crosses r2 first", "r1 is adjacent to r2",
                           "r2 is adjacent to r1", "r1 learned lan2 by OSPF", "r2 learned lan1 by OSPF",
                           "h1 to h2 is switched"}
    assert "r1 has no OSPF neighbour r2" in failed["r1 is adjacent to r2"].verdict.why
    assert failed["r1 learned lan2 by OSPF"].verdict.why.startswith("r1 has no route to 10.2.0.0/24")
    assert "announced" in failed["r1 learned lan2 by OSPF"].check.explanation


def test_expect_unreachable_passes_only_when_no_reply_comes():
    topology = io.load(L2_VS_L3)
    topology.checks = [Check("isolated", "reach", {"source": "h1", "destination": "h3", "expect": False})]
    (check,) = _checks(topology)
    assert not run_checks([check], FakeLab())[0].passed
    lab = FakeLab(unreachable={("h1", "h3"): "h1 gets no reply"})
    outcome = run_checks([check], lab)[0]
    assert outcome.passed and outcome.verdict.why == "h1 gets no reply"
    assert outcome.check.explanation == "h1 cannot reach h3"


def test_rate_at_least_and_within_a_ratio():
    topology = io.load(L2_VS_L3)
    topology.checks = [
        Check("fast", "rate", {"source": "h1", "destination": "h2", "at_least_mbit": 500}),
        Check("like", "rate", {"source": "h1", "destination": "h3", "versus_source": "h1",
                               "versus_destination": "h2", "within": 0.5}),
    ]
    lab = FakeLab(rates={("h1", "h2"): 1e9, ("h1", "h3"): 0.4e9})
    fast, like = run_checks(_checks(topology), lab)
    assert fast.passed and fast.verdict.why == "h1 → h2: 1,000.0 Mbit/s"
    assert not like.passed and "ratio 0.40, outside 0.5 to 2" in like.verdict.why


def test_independent_checks_run_side_by_side():
    checks = [c for c in _checks() if c.type.name == "reach"]
    started = time.monotonic()
    run_checks(checks, FakeLab(delay_s=0.3))
    assert time.monotonic() - started < 0.3 * len(checks) / 2


@pytest.mark.parametrize("state, why", [
    ({"installed": True}, ""),
    ({"failed": True}, ", but the kernel refused it (`r` in `show ip route` on r2: is the next hop a host on one of "
                       "its subnets?)"),
    ({"queued": True}, ", but it is not in the kernel's table yet"),
])
def test_a_route_is_there_only_once_in_the_kernel(state, why):
    """zebra selects a route whose gateway the kernel then refuses ('Nexthop has invalid gateway'): no packet takes
    it, so route-via fails, though FRR's JSON says "selected"."""
    checks = _checks(io.load(TOPOLOGIES / "static-routing.vtopo"))
    (check,) = [c for c in checks if c.check.name == "r2 routes lan3 via r3"]
    route = {"prefix": "10.3.0.0/24", "protocol": "static", "selected": True, **state,
             "nexthops": [{"ip": "10.0.23.2", "interfaceName": "eth2", "active": True}]}
    lab = FakeLab()
    lab.run = lambda node, argv: json.dumps({"10.3.0.0/24": [route]})  # type: ignore[method-assign]
    (outcome,) = run_checks([check], lab)
    found = "r2 routes 10.3.0.0/24 via 10.0.23.2 on eth2 (static)"
    assert (outcome.passed, outcome.verdict.why) == (not why, found + why)

def test_a_probe_that_cannot_answer_fails_the_check_with_its_reason():
    lab = FakeLab()

    def broken(node: str, argv: list[str]) -> str:
        raise OSError(2, "vtysh not found")

    lab.run = broken  # type: ignore[method-assign]
    outcome = next(o for o in run_checks(_checks(), lab) if o.check.check.name == "r1 is adjacent to r2")
    assert not outcome.passed and outcome.verdict.why.startswith("could not be checked:")
    assert not outcome.answered and all(o.answered for o in run_checks(_checks(), FakeLab()))


def test_checks_are_asked_again_until_routing_converges_or_time_runs_out():
    lab = FakeLab()
    lab.unreachable = {("h1", "h3"): "h1 has no route to h3"}
    asked = []
    real_reach = lab.reach

    def converging(source: str, destination: str, address: str) -> str | None:
        asked.append(time.monotonic())
        if len(asked) == 3:
            lab.unreachable = {}  # the third round finds the route
        return real_reach(source, destination, address)

    lab.reach = converging  # type: ignore[method-assign]
    reach = [c for c in _checks() if c.check.name == "h1 reaches h3"]
    started = time.monotonic()
    assert [o.passed for o in run_until_passed(reach, lab, within_s=10, every_s=0.1)] == [True]
    assert len(asked) == 3 and time.monotonic() - started < 5
    lab.unreachable = {("h1", "h3"): "h1 has no route to h3"}
    lab.reach = real_reach  # type: ignore[method-assign]
    started = time.monotonic()
    (outcome,) = run_until_passed(reach, lab, within_s=0.5, every_s=0.1)
    assert not outcome.passed and outcome.verdict.why.startswith("h1 has no route to h3")
    assert 0.3 < time.monotonic() - started < 2


@pytest.mark.parametrize("check, message", [
    ({"name": "x", "type": "teleport"}, "check x at $.checks[0].type: unknown check type 'teleport'"),
    ({"name": "x", "type": "reach", "source": "h1", "destination": "h9"},
     "check x at $.checks[0].destination: destination names node 'h9', which is not in the lab"),
    ({"name": "x", "type": "reach", "source": "h1", "destination": "h3", "expect": "yes"},
     "check x at $.checks[0].expect: Reachable must be true or false"),
    ({"name": "x", "type": "path", "source": "h1", "destination": "h3"},
     "check x at $.checks[0].via: say what the path must do"),
    ({"name": "x", "type": "route", "node": "r1", "prefix": "10.2.0.1/24"},
     "check x at $.checks[0].prefix: '10.2.0.1/24' is not a network"),
    ({"name": "x", "type": "same-domain", "a": "h1", "b": "h2:eth0"},
     "check x at $.checks[0].a: a must name a linked interface as NODE:PORT"),
    ({"name": "x", "type": "ospf-neighbor", "router": "r1", "neighbor": "r2", "state": "Down"},
     "check x at $.checks[0].state: State must be one of Full, 2-Way"),
    ({"name": "x", "type": "reach", "source": "h1", "destination": "h3", "speed": 1},
     "check x at $.checks[0].speed: unknown setting 'speed'"),
])
def test_bad_checks_are_reported_by_name_and_field(check, message):
    document = json.loads(L2_VS_L3.read_text())
    document["checks"] = [check]
    problems = expectation_problems(io.from_document(document), registry())
    assert any(str(p).startswith(f"error: {message}") for p in problems), [str(p) for p in problems]


def test_the_router_kind_brings_its_own_check_type():
    from vtopo.checks.spec import check_types

    types = check_types(registry().kinds.values())
    assert "ospf-neighbor" in types and type(types["ospf-neighbor"]).__module__ == "vtopo_kinds.router_checks"


def test_parallel_runs_use_threads():
    seen: set[int] = set()
    lab = FakeLab(delay_s=0.05)
    original = lab.reach

    def reach(*args):
        seen.add(threading.get_ident())
        return original(*args)

    lab.reach = reach  # type: ignore[method-assign]
    run_checks(_checks(), lab)
    assert len(seen) > 1


def test_a_check_type_of_a_kind_the_lab_does_not_use_is_found_in_the_plugins_not_loaded_yet():
    """A lab's check types come from its own kinds' plugins first; a check naming another type loads the rest."""
    from vtopo.kinds.registry import load_registry

    document = json.loads((TOPOLOGIES / "bridge-veth.vtopo").read_text())  # a bridge and containers: no router
    document["checks"] = [{"name": "x", "type": "ospf-neighbor", "router": "c1", "neighbor": "c2"}]
    [typed], problems = typed_checks(io.from_document(document), load_registry())
    assert problems == [] and typed.type.name == "ospf-neighbor"
    document["checks"] = [{"name": "x", "type": "teleport"}]
    [problem] = typed_checks(io.from_document(document), load_registry())[1]
    assert "ospf-neighbor" in problem.message
