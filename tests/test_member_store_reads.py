"""What root reads of a member's image store is a member's file: `index.json` through a symlink, as a FIFO, too large
or naming a digest that is a path gives nothing, and only well-formed references and digests are kept. And a program
an image lacks is named in one line with its node, from what a shell or nsenter says."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vtopo.host import image_store
from vtopo.oci_archives import REF_ANNOTATION
from vtopo.measure.nodes import not_installed

DIGEST = "sha256:" + "ab" * 32


def index(*manifests: tuple[str, str]) -> str:
    return json.dumps({"manifests": [{"digest": digest, "annotations": {REF_ANNOTATION: reference}}
                                     for reference, digest in manifests]})


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(image_store, "STORE", str(tmp_path / "oci"))
    monkeypatch.setattr(image_store, "MEMBER_STORES", str(tmp_path / "members"))
    (tmp_path / "members" / "1000").mkdir(parents=True)
    return tmp_path / "members" / "1000"


def test_only_well_formed_references_and_digests_are_read(store: Path) -> None:
    (store / "index.json").write_text(index(("mine:1", DIGEST), ("up:1", "sha256:../../../etc"),
                                            ("bad\nline:1", DIGEST), ("x:1", "md5:00")))
    assert image_store.resolve("mine:1", 1000) == image_store.StoredImage("mine:1", DIGEST, 1000)
    assert [image.reference for image in image_store.images(1000)] == ["mine:1"]


@pytest.mark.parametrize("planted", ["symlink", "fifo", "large", "garbage"])
def test_an_index_that_is_not_a_plain_small_json_file_gives_no_image(store: Path, tmp_path: Path,
                                                                     planted: str) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(index(("mine:1", DIGEST)))
    if planted == "symlink":
        (store / "index.json").symlink_to(target)
    elif planted == "fifo":
        os.mkfifo(store / "index.json")  # opened without waiting for a writer
    elif planted == "large":
        (store / "index.json").write_text(index(("mine:1", DIGEST)) + " " * image_store.INDEX_BYTES)
    else:
        (store / "index.json").write_text('{"manifests": [1, {"annotations": []}, null]}')
    assert image_store.images(1000) == []


def test_a_program_an_image_lacks_is_one_line_naming_the_node() -> None:
    for said in ("sh: 1: iperf3: not found", "nsenter: failed to execute iperf3: No such file or directory",
                 "bash: iperf3: command not found"):
        assert not_installed("t2", "iperf3", said).startswith("t2 has no iperf3: "), said
    assert not_installed("t2", "/usr/bin/python3", "nsenter: failed to execute python3: No such file or directory")
    assert not_installed("t2", "iperf3", "iperf3: error - unable to connect to server") == ""
