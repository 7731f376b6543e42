"""The explained script runs as printed: `vtopo plan --explain` of a lab, run by sh where vtopo never ran, makes the
lab (tests/test_explain_faithful.py shows that each line does what the deploy does). The lab is made in namespaces of
the test's own (network, mount and pid), so nothing of it reaches the host's, and nothing outlives the test."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from vtopo.lab_terms import default_prefix
from vtopo.resources import TOPOLOGIES


@pytest.mark.privileged
def test_the_explained_script_runs_as_printed_on_a_host_where_no_lab_ran(tmp_path: Path) -> None:
    """`vtopo plan --explain` of a lab of containers, run by sh as printed where vtopo never ran: in a network and mount
    namespace of the test's own with an empty /run (no /run/vtopo, no /run/netns), every line succeeds and the nodes
    it made ping each other. Nothing outlives the namespaces (a process left ends with the test's pid namespace)."""
    script = tmp_path / "bridge-veth.sh"
    explained = subprocess.run([sys.executable, "-m", "vtopo", "plan", "--explain", "--offline",
                                str(TOPOLOGIES / "bridge-veth.vtopo")], capture_output=True, text=True, check=True)
    script.write_text(explained.stdout)
    c1 = f"{default_prefix('bridge-veth')}-c1"
    cpu = str(min(os.sched_getaffinity(0)))  # the kernel keeps a mount namespace's file only in one of a lower id,
    # and hands ids out in per-CPU batches: on one CPU, the holders' rise above this test's own namespace's
    ran = subprocess.run(["taskset", "-c", cpu, "unshare", "--mount", "--net", "--pid", "--fork", "--mount-proc",
                          "--propagation", "private", "sh", "-c",
                          f"mount -t tmpfs tmpfs /run && ip link set lo up && sh {shlex.quote(str(script))} && "
                          f"ip netns exec {c1} ping -c 1 -W 2 10.0.0.2"],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
