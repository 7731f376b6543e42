"""The .vtopo file: round trips, stable output, atomic saves, migration of older versions."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vtopo.model import io
from vtopo.model.migrations import CURRENT_VERSION
from vtopo.model.problems import LabError
from vtopo.resources import TOPOLOGIES

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("lab_file", sorted(TOPOLOGIES.glob("*.vtopo")), ids=lambda p: p.stem)
def test_labs_round_trip_byte_for_byte(lab_file):
    text = lab_file.read_text()
    assert io.dumps(io.loads(text)) == text


def test_save_is_atomic_when_the_write_fails(tmp_path, monkeypatch):
    target = tmp_path / "lab.vtopo"
    original = (TOPOLOGIES / "bridge-veth.vtopo").read_text()
    target.write_text(original)
    topology = io.load(target)
    topology.update_lab(notes="changed")

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(OSError):
        io.save(topology, target)
    assert target.read_text() == original
    assert [p.name for p in tmp_path.iterdir()] == ["lab.vtopo"]


def test_a_saved_lab_can_be_shared_and_keeps_the_mode_it_had(tmp_path):
    """A new file gets the mode open() would give (a lab is a file to hand on), a saved-over file keeps its own."""
    topology = io.load(TOPOLOGIES / "bridge-veth.vtopo")
    umask = os.umask(0o022)
    try:
        io.save(topology, tmp_path / "new.vtopo")
        private = tmp_path / "private.vtopo"
        private.write_text("")
        private.chmod(0o600)
        io.save(topology, private)
    finally:
        os.umask(umask)
    assert (tmp_path / "new.vtopo").stat().st_mode & 0o777 == 0o644
    assert private.stat().st_mode & 0o777 == 0o600


def test_save_then_load_keeps_everything(tmp_path):
    topology = io.load(TOPOLOGIES / "l2-vs-l3.vtopo")
    io.save(topology, tmp_path / "copy.vtopo")
    again = io.load(tmp_path / "copy.vtopo")
    assert io.to_document(again) == io.to_document(topology)
    assert again.nodes["r1"].position == topology.nodes["r1"].position
    assert again.annotations and again.notes == topology.notes


def test_version_1_is_migrated():
    topology = io.load(DATA / "version1.vtopo")
    assert topology.name == "old" and topology.notes == "saved by version 1"
    assert topology.nodes["c1"].position.x == 10 and topology.nodes["br0"].settings == {"stp": True}
    link = topology.links["l1"]
    assert (link.a.node, link.a.port, link.b.node, link.b.port) == ("c1", "eth0", "br0", "p1")
    assert link.a.interface.addresses == ["10.9.0.1/24"]
    assert json.loads(io.dumps(topology))["version"] == CURRENT_VERSION


def test_newer_version_is_refused():
    with pytest.raises(LabError, match="newer vtopo"):
        io.loads(json.dumps({"format": "vtopo", "version": CURRENT_VERSION + 1}))


def test_not_a_lab():
    with pytest.raises(LabError, match="not a vtopo lab"):
        io.loads("[1, 2]")


def test_model_events_reach_listeners():
    topology = io.load(TOPOLOGIES / "bridge-veth.vtopo")
    seen = []
    topology.events.node_changed.connect(lambda node: seen.append(node.name))
    topology.update_node("c1", name="client")
    assert seen == ["client"]
    with pytest.raises(ValueError, match="still has links"):
        topology.remove_node("br0")


def test_labs_match_the_shipped_json_schema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((TOPOLOGIES.parent / "resources" / "schema" / "vtopo.schema.json").read_text())
    for lab_file in TOPOLOGIES.glob("*.vtopo"):
        jsonschema.validate(json.loads(lab_file.read_text()), schema)


def test_version_2_is_migrated_to_a_lab_without_checks():
    document = json.loads((TOPOLOGIES / "bridge-veth.vtopo").read_text())
    document["version"] = 2
    topology = io.from_document(document)
    assert topology.checks == [] and topology.experiment.empty
    saved = json.loads(io.dumps(topology))
    assert saved["version"] == 3 == CURRENT_VERSION
    assert "checks" not in saved and "experiment" not in saved


def test_checks_and_experiment_round_trip(tmp_path):
    from vtopo.model.expectations import Check, Experiment
    from vtopo.model.measurements import Comparison, Pair, Test

    topology = io.load(TOPOLOGIES / "bridge-veth.vtopo")
    topology.update_checks([Check("c1 reaches c2", "reach", {"source": "c1", "destination": "c2"}, "one bridge")])
    topology.experiment = Experiment([Pair("veth", "c1", "c2")], [Test("tcp", "iperf", {"duration_s": 1})],
                                     [Comparison("self", "veth/tcp", "veth/tcp")], repeats=2, warmup=1)
    io.save(topology, tmp_path / "lab.vtopo")
    document = json.loads((tmp_path / "lab.vtopo").read_text())
    assert document["checks"] == [{"name": "c1 reaches c2", "type": "reach", "source": "c1", "destination": "c2",
                                   "explain": "one bridge"}]
    again = io.load(tmp_path / "lab.vtopo")
    assert again.checks == topology.checks and again.experiment == topology.experiment


@pytest.mark.parametrize("section, message", [
    ({"checks": [{"name": "a", "type": "reach"}, {"name": "a", "type": "reach"}]},
     "check a at $.checks[1].name: every check needs a unique, non-empty name"),
    ({"checks": [{"name": "a"}]}, "check a at $.checks[0].type: every check needs a type (reach, path, route, ...)"),
    ({"experiment": {"pairs": [{"name": "p", "source": "c1"}]}},
     "pair p at $.experiment.pairs[0].destination: pair p needs a destination"),
    ({"experiment": {"repeats": 0}}, "experiment at $.experiment.repeats: repeats must be between 1 and 100"),
])
def test_malformed_checks_and_experiment_are_named(section, message):
    document = json.loads((TOPOLOGIES / "bridge-veth.vtopo").read_text())
    document.update(section)
    with pytest.raises(LabError) as raised:
        io.from_document(document)
    assert any(str(p) == f"error: {message}" for p in raised.value.problems), [str(p) for p in raised.value.problems]
