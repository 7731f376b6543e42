"""Startup commands on a real deploy: they run inside their node after the lab is built, their output goes to the
deploy log, what they leave running ends with the lab, and a failing one rolls the whole deploy back."""
from __future__ import annotations

import json
import subprocess

import pytest

from residue import snapshot
from vtopo.host.deployer import DeployError, Deployer
from vtopo.kinds.environment import Trust
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


def test_a_failing_startup_command_fails_the_deploy_and_rolls_it_back() -> None:
    before = snapshot()
    deployer = Deployer()
    topology = lab_with({"c2": ["echo about to fail", "echo no such thing >&2; exit 3", "echo never"]})
    with pytest.raises(DeployError) as failed:
        deployer.deploy(topology, consent=Trust(startup_commands=frozenset({"c2"})))
    assert str(failed.value) == ("node c2: could not run on c2: echo no such thing >&2; exit 3: exited with status "
                                 "3: no such thing (the host is as it was; fix that and deploy again)")
    assert failed.value.rolled_back
    assert deployer.store.find(topology.name) is None
    assert snapshot() - before == {}


def test_cli_deploy_needs_consent_and_prints_the_output(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from vtopo.cli import main

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
