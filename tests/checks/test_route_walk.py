"""The route walk behind a failed reachability check: a probe that could not run is said so, never read as a missing
route."""
from __future__ import annotations

import json

from vtopo.checks.walk import RouteWalk
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.measure.nodes import MeasureError
from vtopo.resources import TOPOLOGIES


def walk_where_r1_answers(failure: str) -> str:
    lab = resolve(open_lab(TOPOLOGIES / "l2-vs-l3.vtopo").topology, registry()).valid().lab

    def run(node: str, argv: list[str]) -> str:
        if node == "h1" and argv[:3] == ["ip", "-j", "route"]:
            return json.dumps([{"dst": "10.2.0.10", "gateway": "10.1.0.1", "dev": "eth0", "prefsrc": "10.1.0.10"}])
        if argv[:3] == ["ip", "-j", "link"]:
            return json.dumps([{"flags": ["UP", "LOWER_UP"]}])
        raise MeasureError(f"`{' '.join(argv)}` failed in {node}: {failure}")

    owners = {"10.1.0.1": "r1"}
    return RouteWalk(lab, run, owners.get).why("h1", "h3", "10.2.0.10")


def test_a_table_without_the_route_is_a_missing_route():
    assert walk_where_r1_answers("RTNETLINK answers: Network is unreachable").startswith(
        "r1 has no route to 10.2.0.10")


def test_a_probe_that_could_not_run_is_said_so():
    assert walk_where_r1_answers("nsenter: cannot open /run/netns/x: No such file or directory") == (
        "r1's route to 10.2.0.10 could not be read: `ip -j route get 10.2.0.10` failed in r1: nsenter: cannot open "
        "/run/netns/x: No such file or directory")
