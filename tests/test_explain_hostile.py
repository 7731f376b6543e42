"""`vtopo plan --explain` is a script a student may run: no value in a lab can add a command of its own to it.

Each hostile lab below is compiled in memory (the loader refuses some of these values on its own; this checks the
rendering alone), and its explanation runs under sh with every program it calls replaced by a stub that only logs
its argv. The log must hold the stubs' calls and nothing else: in particular never `pwned`, the payloads' command.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from vtopo.lab_terms import Trust
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

PAYLOADS = ["1\npwned newline", "1; pwned semicolon", "$(pwned dollar)", "`pwned backtick`", "x' ; pwned quote ; '",
            "1\r\npwned crlf", "1\u2028pwned separator", "EOF\npwned heredoc\nEOF"]
PROGRAMS = ["ip", "tc", "bridge", "sysctl", "ethtool", "ovs-vsctl", "ovs-ofctl", "mkdir", "chmod", "chown", "rm", "cat",
            "kill", "qemu-system-x86_64", "touch", "sleep", "mount", "nsenter", "unshare", "umount", "stat", "pwned"]


def lower_device(payload: str) -> str:
    """The payload as a macvlan's lower device: an interface name, on one line as every one-line setting must be."""
    return " ".join(payload[:15].splitlines())


def hostile_lab(payload: str) -> Topology:
    topology = Topology(name="hostile" + payload, notes=payload)
    topology.add_node(Node(id="c1", name="c1", kind="container",
                           settings={"sysctls": {"net.ipv4.ip_forward": payload, f"net.x{payload}": "1"}}))
    topology.add_node(Node(id="c2", name="c2", kind="container"))
    topology.add_node(Node(id="m1", name="m1", kind="macvlan", settings={"lower": lower_device(payload)}))
    topology.add_link(Link(id="l1", a=Endpoint("c1", "eth0", Interface(addresses=["10.0.0.1/24"])),
                           b=Endpoint("c2", "eth0", Interface(addresses=["10.0.0.2/24"]))))
    topology.add_link(Link(id="l2", a=Endpoint("m1", "c1"), b=Endpoint("c2", "eth1")))
    return topology


@pytest.fixture
def stubs(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in PROGRAMS:
        stub = bin_dir / program
        stub.write_text('#!/bin/sh\nprintf "%s\\0" "${0##*/}" "$@" >> "$STUB_LOG"\nprintf "\\036" >> "$STUB_LOG"\n')
        stub.chmod(0o755)
    return bin_dir


@pytest.mark.parametrize("payload", PAYLOADS)
def test_only_the_stubs_run(payload: str, stubs: Path, tmp_path: Path):
    plan = compile_plan(resolve(hostile_lab(payload), registry(), trust=Trust(host_devices=frozenset({lower_device(payload)}))))  # the user's consent
    script = plan.explain()
    log = tmp_path / "log"
    log.touch()
    result = subprocess.run(["/bin/sh", "-c", script.replace("set -e\n", "", 1)], capture_output=True, text=True,
                            cwd=tmp_path, env={"PATH": str(stubs), "STUB_LOG": str(log)}, timeout=30)
    calls = [record.rstrip("\0").split("\0") for record in log.read_bytes().decode().split("\036") if record]
    assert "not found" not in result.stderr, result.stderr
    assert [argv[0] for argv in calls if argv[0] not in PROGRAMS or argv[0] == "pwned"] == [], script
    assert any(payload in argv for argv in calls) or any(f"{key}={payload}" in argv for key in ("net.ipv4.ip_forward",)
                                                        for argv in calls), "the payload reaches its command whole"
