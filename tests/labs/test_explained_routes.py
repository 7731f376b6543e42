"""A route a deploy adds is the route its explanation adds: the same destination, gateway and protocol (`proto
static`), as `ip route` shows both in the deployed node."""
from __future__ import annotations

import shlex
import subprocess

import pytest

from vtopo import ops as o
from vtopo.lab import plan_of

pytestmark = pytest.mark.privileged


def test_the_default_route_of_a_container_is_the_explained_one(deployed):
    running = deployed("l2-vs-l3")
    plan = plan_of(running.topology)
    [route] = [op for op in plan.ops if isinstance(op, o.AddRoute) and op.netns == f"{plan.prefix}-h1"]
    explained = shlex.split(o.script_of(route)[-1])
    shown = subprocess.run(["ip", "-n", route.netns, "route", "show", "default"], capture_output=True, text=True,
                           check=True).stdout.split()
    assert shown[:3] == ["default", "via", route.gateway]
    assert explained[explained.index("proto") + 1] == shown[shown.index("proto") + 1] == "static"
