"""Startup commands in a lab file: read and checked with field-named errors, run only with the user's consent, and
planned after everything else so that they meet the lab built."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vtopo.cli.main import main
from vtopo.compile.startup import STARTUP_COMMANDS
from vtopo.lab_terms import Trust
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model import io
from vtopo.model.problems import LabError
from vtopo.resources import TOPOLOGIES

COMMANDS = ["ip route add 10.9.0.0/24 via 10.0.0.2", "echo 'ready' > /dev/null"]


def lab_with(commands: Any, node: int = 1) -> dict[str, Any]:
    document = json.loads((TOPOLOGIES / "bridge-veth.vtopo").read_text())
    document["nodes"][node]["startup_commands"] = commands
    return document


def test_startup_commands_round_trip_and_match_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((TOPOLOGIES.parent / "resources" / "schema" / "vtopo.schema.json").read_text())
    document = lab_with(COMMANDS)
    jsonschema.validate(document, schema)
    topology = io.from_document(document)
    assert topology.node_named("c1").startup_commands == COMMANDS
    assert io.to_document(topology)["nodes"][1]["startup_commands"] == COMMANDS
    assert "startup_commands" not in io.to_document(topology)["nodes"][2]  # files without them stay as they were


@pytest.mark.parametrize("commands, message", [
    ("echo hi", "error: node c1 at $.nodes[1].startup_commands: startup_commands must be a list, not a string"),
    (["echo hi", 7], "error: node c1 at $.nodes[1].startup_commands[1]: startup command must be a string, not a number"),
    ([" "], "error: node c1 at $.nodes[1].startup_commands[0]: a startup command is empty"),
    (["x" * 1001], "error: node c1 at $.nodes[1].startup_commands[0]: a startup command is at most 1000 characters, "
                   "not 1001"),
    (["true"] * 33, "error: node c1 at $.nodes[1].startup_commands: at most 32 startup commands per node, not 33"),
])
def test_bad_startup_commands_are_named_by_node_and_field(commands: Any, message: str) -> None:
    with pytest.raises(LabError) as refused:
        io.from_document(lab_with(commands))
    assert [str(problem) for problem in refused.value.problems] == [message]


def test_commands_from_the_file_need_the_users_consent() -> None:
    topology = io.from_document(lab_with(COMMANDS))
    problems = resolve(topology, registry()).problems
    assert len(problems) == 1
    problem = problems[0]
    assert (problem.subject, problem.path) == ("node c1", "$.nodes[1].startup_commands")
    assert ("run 2 startup command(s) inside c1 as the user who deploys it: ip route add 10.9.0.0/24 via 10.0.0.2; "
            "echo 'ready'") in problem.message and "--allow-commands c1" in problem.message
    assert problem.consent is not None and (problem.consent.what, problem.consent.name) == (STARTUP_COMMANDS, "c1")
    assert resolve(topology, registry(), trust=Trust(startup_commands=frozenset({"c2"}))).problems != ()  # consent is per node
    assert resolve(topology, registry(), trust=Trust(startup_commands=frozenset({"c1"}))).problems == ()


def test_a_node_without_a_shell_has_no_startup_commands() -> None:
    problems = resolve(io.from_document(lab_with(["true"], node=0)), registry(), trust=Trust(startup_commands=frozenset({"br0"}))).problems
    assert [(p.subject, p.path) for p in problems] == [("node br0", "$.nodes[0].startup_commands")]
    assert problems[0].message.startswith("startup commands need a shell to run in: br0 is a Linux bridge")


def test_startup_commands_run_last_in_order_and_are_explained() -> None:
    document = lab_with(COMMANDS)
    document["nodes"][2]["startup_commands"] = ["sleep 1"]
    plan = compile_plan(resolve(io.from_document(document), registry(), trust=Trust(startup_commands=frozenset({"c1", "c2"}))))
    tail = [step.op.summary() for step in plan.steps[-3:]]
    assert tail == [f"run on c1: {COMMANDS[0]}", f"run on c1: {COMMANDS[1]}", "run on c2: sleep 1"]
    assert set(plan.steps[-3].deps) == {step.index for step in plan.steps[:-3]}
    script = plan.explain()
    assert (f"nsenter --net=/run/netns/{plan.prefix}-c1 --mount=/run/vtopo/ns/{plan.prefix}/c1.mnt "
            f"--uts=/run/vtopo/ns/{plan.prefix}/c1.uts -- sh -c 'ip route add 10.9.0.0/24 via 10.0.0.2'") in script
    assert "sh -c 'echo '\"'\"'ready'\"'\"' > /dev/null'" in script


def test_cli_plan_and_validate_ask_for_consent_and_show_the_commands(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "startup.vtopo"
    path.write_text(json.dumps(lab_with(COMMANDS)))
    assert main(["validate", "--offline", str(path)]) == 2
    assert "--allow-commands c1" in capsys.readouterr().err
    assert main(["plan", "--offline", str(path), "--allow-commands", "c1"]) == 0
    assert f"run on c1: {COMMANDS[0]}" in capsys.readouterr().out
    assert main(["show", str(path)]) == 0
    assert f"startup command: {COMMANDS[0]}" in capsys.readouterr().out
