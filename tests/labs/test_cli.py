"""The CLI end to end on a real lab: deploy, status, exec, ping, destroy, each with its exit code."""
from __future__ import annotations

import subprocess
import sys

import pytest

from residue import snapshot
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged


def vtopo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vtopo", *args], capture_output=True, text=True, timeout=120)


def test_cli_deploy_status_exec_ping_destroy():
    before = snapshot()
    lab = str(TOPOLOGIES / "l2-vs-l3.vtopo")
    deployed = vtopo("deploy", lab)
    try:
        assert deployed.returncode == 0, deployed.stderr
        assert "deployed lab l2-vs-l3" in deployed.stdout and "7 nodes, 6 links" in deployed.stdout
        assert vtopo("deploy", lab).returncode == 1, "a second deploy is refused"
        status = vtopo("status", "l2-vs-l3")
        assert status.returncode == 0 and status.stdout.count(" running") == 1 + 7 + 6, "the lab, its nodes and links"
        addresses = vtopo("exec", "l2-vs-l3", "h1", "--", "ip", "-br", "addr", "show", "eth0")
        assert "10.1.0.10/24" in addresses.stdout
        assert vtopo("ping", "l2-vs-l3", "h1", "h2").returncode == 0
        unknown = vtopo("exec", "l2-vs-l3", "h9", "--", "true")
        assert unknown.returncode == 1 and "has no node 'h9'" in unknown.stderr
    finally:
        destroyed = vtopo("destroy", lab)
    assert destroyed.returncode == 0 and "destroyed lab l2-vs-l3" in destroyed.stdout
    assert vtopo("status").stdout.strip() == "no lab is deployed"
    assert vtopo("destroy", "l2-vs-l3").returncode == 1
    assert snapshot() - before == {}
