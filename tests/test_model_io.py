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
