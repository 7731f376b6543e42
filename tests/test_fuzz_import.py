"""Fuzzing `vtopo import`: whatever a containerlab topology (YAML) or GNS3 project (JSON) holds, importing it ends in
a lab or in clean Problems, never in another exception, and never reads a file outside the topology's folder. The
mutations add YAML's own weapons: anchors and aliases nine deep (the "billion laughs"), deep nesting, huge files,
paths with `..`, absolute paths and symlinks out of the folder."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vtopo.interop.importing import import_lab
from vtopo.lab import registry
from vtopo.model.problems import LabError

from tests.fuzzing import EXAMPLES, HOSTILE_STRINGS, mutated_text

INTEROP = Path(__file__).parent / "interop"
CONTAINERLAB = {path: yaml.safe_load(path.read_text()) for path in sorted((INTEROP / "containerlab").rglob("*.clab.yml"))}
GNS3 = {path: json.loads(path.read_text()) for path in sorted((INTEROP / "gns3").rglob("*.gns3"))}
SECRET = "hostname stolen-by-the-fuzzer"
PATHS = ("../secret.conf", "../../secret.conf", "{outside}/secret.conf", "escape/secret.conf", "link.conf",
         "/etc/shadow", "/dev/zero", "fifo", "configs/r1.conf", "router1/frr.conf")
LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi"))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A topology folder with the test labs' files, a symlink and a folder link out of it, a FIFO, and a secret
    beside it that no import may read."""
    root = tmp_path_factory.mktemp("fuzz")
    (root / "secret.conf").write_text(SECRET + "\n")
    lab = root / "lab"
    for source in (INTEROP / "containerlab", INTEROP / "gns3"):
        for path in source.rglob("*"):
            if path.is_file():
                target = lab / path.relative_to(source).relative_to(path.relative_to(source).parts[0])
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(path.read_bytes())
    os.symlink(root / "secret.conf", lab / "link.conf")
    os.symlink(root, lab / "escape")
    os.mkfifo(lab / "fifo")
    return lab


def _import(folder: Path, name: str, text: str) -> None:
    path = folder / name
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        result = import_lab(path, registry())
    except LabError as error:
        assert error.problems and all(str(p) for p in error.problems)
        return
    assert SECRET not in json.dumps([node.settings for node in result.topology.nodes.values()])


def _with_paths(draw: st.DrawFn, document: object, folder: Path) -> object:
    """The document with file names in it swapped for paths out of the folder."""
    text = json.dumps(document)
    for name in ("configs/r1.conf", "router1/frr.conf", "router2/frr.conf"):
        path = draw(st.sampled_from(PATHS)).format(outside=folder.parent)
        text = text.replace(json.dumps(name)[1:-1], path)
    return json.loads(text)


@st.composite
def containerlab_texts(draw: st.DrawFn, folder: Path) -> str:
    document = _with_paths(draw, CONTAINERLAB[draw(st.sampled_from(sorted(CONTAINERLAB)))], folder)
    text = mutated_text(draw, document, twice="name")
    if draw(st.integers(0, 5)) == 0:
        text = LAUGHS + "name: x\ntopology: {nodes: {h1: {kind: linux, exec: *i}}}\n"
    elif draw(st.integers(0, 5)) == 0:
        text = "topology: " + "{a: " * draw(st.integers(30, 3000)) + "1" + "}" * 3000
    elif draw(st.integers(0, 5)) == 0:
        text = text.replace('"kind"', '"kind": &k', 1).replace('"image"', '"image": *k', 1)
    return text


@st.composite
def gns3_texts(draw: st.DrawFn, folder: Path) -> str:
    document = _with_paths(draw, GNS3[draw(st.sampled_from(sorted(GNS3)))], folder)
    return mutated_text(draw, document, twice="node_id")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_containerlab_topologies_never_crash_nor_read_outside(folder: Path, data: st.DataObject) -> None:
    _import(folder, "fuzzed.clab.yml", data.draw(containerlab_texts(folder)))


@settings(max_examples=EXAMPLES // 2, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_gns3_projects_never_crash_nor_read_outside(folder: Path, data: st.DataObject) -> None:
    _import(folder, "fuzzed.gns3", data.draw(gns3_texts(folder)))


@settings(max_examples=EXAMPLES // 4, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(HOSTILE_STRINGS), st.sampled_from(PATHS))
def test_hostile_names_and_paths_never_crash(folder: Path, value: str, path: str) -> None:
    _import(folder, "hostile.clab.yml", json.dumps({"name": value, "topology": {
        "nodes": {value: {"kind": "frr", "startup-config": path.format(outside=folder.parent), "binds": [f"{path}:/etc/frr/daemons"]},
                  "h": {"kind": "linux", "exec": [value]}},
        "links": [{"endpoints": [f"{value}:eth1", "h:eth1"]}]}}))


def test_a_billion_laughs_and_a_huge_file_are_refused_at_once(folder: Path) -> None:
    for text in (LAUGHS + "name: x\ntopology: {nodes: {h: {kind: linux, exec: *i}}}\n",
                 "name: x\ntopology: {nodes: {}}\n#" + "x" * (5 * 1024 * 1024)):
        with pytest.raises(LabError) as error:
            import_lab(_write(folder, text), registry())
        assert "values once its aliases" in str(error.value) or "larger than 4 MiB" in str(error.value)


def _write(folder: Path, text: str) -> Path:
    path = folder / "refused.clab.yml"
    path.write_text(text)
    return path
