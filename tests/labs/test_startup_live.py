"""Startup commands on a real deploy: they run inside their node after the lab is built, their output goes to the
deploy log, what they leave running ends with the lab, and a failing one rolls the whole deploy back."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from residue import snapshot
from vtopo.host.deployer import DeployError, Deployer
from vtopo.lab_terms import Trust
from vtopo.model import io
from vtopo.reports import Progress
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged


def lab_with(commands: dict[str, list[str]], name: str = "startup-live"):  # type: ignore[no-untyped-def]
    document = json.loads((TOPOLOGIES / "bridge-veth.vtopo").read_text())
    document["lab"]["name"] = name
    for node in document["nodes"]:
        node["startup_commands"] = commands.get(node["name"], [])
    return io.from_document(document)


def test_startup_commands_run_inside_their_node_with_output_in_the_log() -> None:
    before = snapshot()
    deployer = Deployer()
    topology = lab_with({"c1": ["ip route add 10.9.0.0/24 via 10.0.0.2", "echo serving on $(hostname -I)",
                                "sleep 600 > /dev/null 2>&1 &"]})
    log: list[Progress] = []
    report = deployer.deploy(topology, log.append, consent=Trust(startup_commands=frozenset({"c1"})))
    try:
        netns = f"{report.prefix}-c1"
        routes = subprocess.run(["ip", "-n", netns, "route", "show", "10.9.0.0/24"], capture_output=True, text=True,
                                check=True).stdout
        assert "via 10.0.0.2" in routes
        output = [p for p in log if p.stage == "output"]
        assert [p.owner for p in output] == ["node c1"] * 3
        assert output[1].message == "$ echo serving on $(hostname -I)\nserving on 10.0.0.1"
        applied = [p for p in log if p.stage == "apply"]
        assert applied[-1].message == "run on c1: sleep 600 > /dev/null 2>&1 &"  # after everything else
        sleepers = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True).stdout.split()
        assert sleepers, "the background server keeps running"
    finally:
        deployer.destroy(topology.name)
    assert snapshot() - before == {}  # the server started by a command ended with its namespace


def processes_in_namespace(inode: int) -> list[str]:
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if entry.joinpath("ns/net").stat().st_ino == inode:
                found.append(f"{entry.joinpath('comm').read_text().strip()}({entry.name})")
        except OSError:
            continue
    return found


def test_destroy_ends_what_runs_in_every_node_even_a_loop_that_keeps_forking() -> None:
    before = snapshot()
    deployer = Deployer()
    topology = lab_with({"c1": ["sleep 600 > /dev/null 2>&1 &"],
                         "c2": ["sh -c 'while true; do sleep 0.01; done' > /dev/null 2>&1 &"],
                         "c3": ["sleep 600 > /dev/null 2>&1 &", "sleep 700 > /dev/null 2>&1 &"]}, name="forking")
    report = deployer.deploy(topology, consent=Trust(startup_commands=frozenset({"c1", "c2", "c3"})))
    try:
        inodes = {node: Path(f"/run/netns/{report.prefix}-{node}").stat().st_ino for node in ("c1", "c2", "c3")}
        assert all(processes_in_namespace(inode) for inode in inodes.values())
    finally:
        deployer.destroy(topology.name)
    assert {node: processes_in_namespace(inode) for node, inode in inodes.items()} == {"c1": [], "c2": [], "c3": []}
    assert snapshot() - before == {}


def test_a_failing_startup_command_fails_the_deploy_and_rolls_it_back() -> None:
    before = snapshot()
    deployer = Deployer()
    topology = lab_with({"c2": ["echo about to fail", "echo no such thing >&2; exit 3", "echo never"]})
    with pytest.raises(DeployError) as failed:
        deployer.deploy(topology, consent=Trust(startup_commands=frozenset({"c2"})))
    assert str(failed.value) == ("node c2: could not run on c2: echo no such thing >&2; exit 3: exited with status "
                                 "3: no such thing (the host is as it was; fix that and deploy again)")
    assert failed.value.rolled_back
    assert deployer.store.named(topology.name) is None
    assert snapshot() - before == {}


def test_cli_deploy_needs_consent_and_prints_the_output(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from vtopo.cli.main import main

    before = snapshot()
    path = tmp_path / "startup.vtopo"
    path.write_text(io.dumps(lab_with({"c3": ["echo hello from c3"]})))
    assert main(["deploy", str(path)]) == 2
    assert "--allow-commands c3" in capsys.readouterr().err
    assert main(["deploy", str(path), "--allow-commands", "c3"]) == 0
    out = capsys.readouterr().out
    assert "  c3| $ echo hello from c3\n  c3| hello from c3\n" in out
    assert main(["status", "startup-live"]) == 0
    assert main(["destroy", "startup-live"]) == 0
    assert snapshot() - before == {}


def wait_for_listener(netns: str, port: int, within_s: float = 10.0) -> None:
    """Until a TCP socket listens on `port` in `netns`: `iperf3 -s -D` forks into the background before it opens its
    socket, so the server's process is seen a moment before it accepts."""
    deadline = time.monotonic() + within_s
    while not subprocess.run(["ip", "netns", "exec", netns, "ss", "-Hltn", f"sport = :{port}"], capture_output=True,
                             text=True, check=True).stdout.strip():
        assert time.monotonic() < deadline, f"nothing listens on port {port} in {netns}"
        time.sleep(0.05)


def iperf_servers(netns: str) -> set[int]:
    pids = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True, check=True).stdout.split()
    return {int(pid) for pid in pids if open(f"/proc/{pid}/comm").read().strip() == "iperf3"}


def test_restart_ends_what_a_startup_command_started_and_runs_the_commands_again() -> None:
    """Like a container's restart; stop and start only freeze and resume the server."""
    from vtopo.lab_operations import operate_node

    before = snapshot()
    deployer = Deployer()
    topology = lab_with({"c1": ["iperf3 -s -D -p 5301"]})
    report = deployer.deploy(topology, consent=Trust(startup_commands=frozenset({"c1"})))
    try:
        netns = f"{report.prefix}-c1"
        first = iperf_servers(netns)
        assert len(first) == 1
        operate_node(topology.name, "c1", "stop")
        operate_node(topology.name, "c1", "start")
        assert iperf_servers(netns) == first, "stop and start keep the server (frozen, then resumed)"
        assert operate_node(topology.name, "c1", "restart").splitlines() == [
            f"restarted c1 in lab {topology.name}", "  c1| $ iperf3 -s -D -p 5301"]  # the command, as it ran again
        again = iperf_servers(netns)
        assert len(again) == 1 and again != first, "the old server ended, the startup command started a new one"
        wait_for_listener(netns, 5301)
        client = subprocess.run(["ip", "netns", "exec", f"{report.prefix}-c2", "iperf3", "-c", "10.0.0.1", "-p", "5301",
                                 "-t", "1"], capture_output=True, text=True, timeout=30)
        assert client.returncode == 0, client.stdout + client.stderr
    finally:
        deployer.destroy(topology.name)
    assert snapshot() - before == {}
