"""A lab's stages and hidden checks: read, kept by save and copy, and each bad field named in one line."""
from __future__ import annotations

import json

import pytest

from vtopo.checks.stages import current_stage, record_stage
from vtopo.cli.main import main
from vtopo.model import io
from vtopo.model.problems import LabError
from vtopo.resources import TOPOLOGIES

ASSIGNMENT = TOPOLOGIES / "ospf-assignment.vtopo"


def _document() -> dict:
    return json.loads(ASSIGNMENT.read_text())


def _problems(document: dict) -> list[str]:
    with pytest.raises(LabError) as raised:
        io.loads(json.dumps(document))
    return [str(problem) for problem in raised.value.problems]


def test_stages_and_hidden_checks_survive_save_and_copy(tmp_path):
    topology = io.load(ASSIGNMENT)
    assert [stage.title for stage in topology.stages] == ["Bring up the links", "OSPF in area 0", "Reach every host"]
    assert [check.name for check in topology.checks if check.hidden] == ["r2 learned lan3 by OSPF",
                                                                          "h1 to h3 crosses r1 and r3"]
    topology.stages[1].checkpoint = "addresses-only"
    copied = topology.copy()
    assert copied.stages == topology.stages and copied.stages is not topology.stages
    io.save(copied, tmp_path / "saved.vtopo")
    again = io.load(tmp_path / "saved.vtopo")
    assert again.stages == topology.stages and again.checks == topology.checks
    assert again.stages[2].solution.startswith("r1: `router ospf`")


@pytest.mark.parametrize("change, message", [
    (lambda d: d["stages"][1].update(title=""), "stage 2 at $.stages[1].title: every stage needs a title"),
    (lambda d: d["stages"][0].update(checks=["r1 reaches r9"]),
     "stage 1 (Bring up the links) at $.stages[0].checks[0]: 'r1 reaches r9' is not the name of one of the lab's checks"),
    (lambda d: d["stages"][0].update(checks="r1 reaches r2"),
     "stage 1 (Bring up the links) at $.stages[0].checks: checks must be a list, not a string"),
    (lambda d: d["stages"][2].update(checkpoint="../etc"), "$.stages[2].checkpoint: '../etc': a checkpoint name"),
    (lambda d: d["stages"][2].update(solution=7), "$.stages[2].solution: solution must be a string, not a number"),
    (lambda d: d["checks"][0].update(hidden="yes"), "$.checks[0].hidden: hidden must be true or false"),
    (lambda d: d["stages"].append("four"), "$.stages[3]: stage must be an object, not a string"),
])
def test_a_bad_stage_field_is_named_in_one_line(change, message):
    document = _document()
    change(document)
    problems = _problems(document)
    assert len(problems) == 1 and message in problems[0], problems


def test_instructions_may_hold_newlines_but_a_title_may_not():
    document = _document()
    document["stages"][0]["title"] = "two\nlines"
    assert "$.stages[0].title: this value holds a newline" in _problems(document)[0]


@pytest.mark.privileged  # `vtopo stage` asks an agent for the lab first: only root's command runs one itself
def test_stage_moves_only_past_complete_stages(tmp_path, monkeypatch, capsys):
    """Without a deployed lab nothing can be checked: moving on needs --force, going back does not; the stage is the
    user's, kept in their data directory, never in the lab file."""
    monkeypatch.setenv("VTOPO_DATA_DIR", str(tmp_path / "data"))
    before = ASSIGNMENT.read_text()
    assert main(["stage", str(ASSIGNMENT)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("stage 1 of 3: Bring up the links\n") and "the lab is not deployed" in out
    assert "r1 reaches r2" in out
    assert main(["stage", str(ASSIGNMENT), "2"]) == 1
    assert "stage 1 cannot be checked: deploy it, or move with --force" in capsys.readouterr().err
    assert main(["stage", str(ASSIGNMENT), "3", "--force"]) == 0
    assert capsys.readouterr().out.startswith("stage 3 of 3: Reach every host")
    assert main(["stage", str(ASSIGNMENT)]) == 0 and "stage 3 of 3" in capsys.readouterr().out
    assert main(["stage", str(ASSIGNMENT), "1"]) == 0 and "stage 1 of 3" in capsys.readouterr().out
    assert main(["stage", str(ASSIGNMENT), "4"]) == 1
    assert "has stages 1 to 3, not 4" in capsys.readouterr().err
    assert ASSIGNMENT.read_text() == before
    assert (tmp_path / "data" / "stages" / "ospf-assignment.stage.json").stat().st_mode & 0o777 == 0o600


def test_a_lab_without_stages_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VTOPO_DATA_DIR", str(tmp_path))
    assert main(["stage", str(TOPOLOGIES / "ospf-ring.vtopo")]) == 1
    assert capsys.readouterr().err == "lab ospf-ring has no stages\n"


@pytest.mark.parametrize("record", ["not json", "[]", '{"stage": 9}', '{"stage": "2"}', '{"stage": true}'])
def test_a_stage_record_that_no_longer_fits_starts_at_stage_one(tmp_path, monkeypatch, record):
    monkeypatch.setenv("VTOPO_DATA_DIR", str(tmp_path))
    topology = io.load(ASSIGNMENT)
    record_stage(topology, 3)
    assert current_stage(topology) == 3
    (tmp_path / "stages" / "ospf-assignment.stage.json").write_text(record)
    assert repr(current_stage(topology)) == "1"  # 1, not True
