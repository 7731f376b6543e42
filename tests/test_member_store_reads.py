"""What root reads of a member's image store is a member's file, which root opens and nobody parses: `index.json`
through a symlink, as a FIFO, too large, nested 100,000 deep or naming a digest that is a path gives nothing, only
well-formed references and digests are kept, and root's own process parses none of it. And a program an image lacks is
named in one line with its node, from what a shell or nsenter says."""
from __future__ import annotations

import json
import os
import pwd
from pathlib import Path

import pytest

from vtopo import oci_layouts
from vtopo.host import image_store
from vtopo.measure.nodes import not_installed
from vtopo.oci_layouts import REF_ANNOTATION

pytestmark = pytest.mark.privileged  # the store's files are nobody's, read by root and handed to nobody

DIGEST = "sha256:" + "ab" * 32
NOBODY = pwd.getpwnam("nobody").pw_uid  # the store's owner here


def index(*manifests: tuple[str, str]) -> str:
    return json.dumps({"manifests": [{"digest": digest, "annotations": {REF_ANNOTATION: reference}}
                                     for reference, digest in manifests]})


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(image_store, "STORE", str(tmp_path / "oci"))
    monkeypatch.setattr(image_store, "MEMBER_STORES", str(tmp_path / "members"))
    (tmp_path / "members" / str(NOBODY)).mkdir(parents=True)
    (tmp_path / "members" / f"{NOBODY}.json").write_text(json.dumps({"user": "nobody", "share_bytes": 1 << 30}))
    return tmp_path / "members" / str(NOBODY)


def write(path: Path, text: str) -> None:
    """A file of the store's owner's."""
    path.write_text(text)
    os.chown(path, NOBODY, NOBODY)


def test_only_well_formed_references_and_digests_are_read(store: Path) -> None:
    write(store / "index.json", index(("mine:1", DIGEST), ("up:1", "sha256:../../../etc"), ("bad\nline:1", DIGEST),
                                      ("x:1", "md5:00")))
    assert image_store.resolve("mine:1", NOBODY) == image_store.StoredImage("mine:1", DIGEST, NOBODY)
    assert [image.reference for image in image_store.images(NOBODY)] == ["mine:1"]


def test_root_parses_nothing_of_a_members_index(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(store / "index.json", index(("mine:1", DIGEST)))

    def refused(*_: object) -> object:
        raise AssertionError("root's own process parsed a member's file")

    for module, parser in ((image_store, "read_json"), (image_store, "tags_of"), (oci_layouts, "document"),
                           (oci_layouts, "tags_of")):
        monkeypatch.setattr(module, parser, refused)
    assert image_store.resolve("mine:1", NOBODY) == image_store.StoredImage("mine:1", DIGEST, NOBODY)


@pytest.mark.parametrize("planted", ["symlink", "fifo", "large", "garbage", "nested", "root's"])
def test_an_index_that_is_not_a_plain_small_json_file_gives_no_image(store: Path, tmp_path: Path,
                                                                     planted: str) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(index(("mine:1", DIGEST)))
    if planted == "symlink":
        (store / "index.json").symlink_to(target)
    elif planted == "fifo":
        os.mkfifo(store / "index.json")  # opened without waiting for a writer
    elif planted == "large":
        write(store / "index.json", index(("mine:1", DIGEST)) + " " * oci_layouts.DOCUMENT_BYTES)
    elif planted == "garbage":
        write(store / "index.json", '{"manifests": [1, {"annotations": []}, null]}')
    elif planted == "nested":
        write(store / "index.json", "[" * 100_000 + "]" * 100_000)
    else:  # a file of another user's (root's) under the member's name
        (store / "index.json").write_text(index(("mine:1", DIGEST)))
    assert image_store.images(NOBODY) == []


def test_a_program_an_image_lacks_is_one_line_naming_the_node() -> None:
    for said in ("sh: 1: iperf3: not found", "nsenter: failed to execute iperf3: No such file or directory",
                 "bash: iperf3: command not found"):
        assert not_installed("t2", "iperf3", said).startswith("t2 has no iperf3: "), said
    assert not_installed("t2", "/usr/bin/python3", "nsenter: failed to execute python3: No such file or directory")
    assert not_installed("t2", "iperf3", "iperf3: error - unable to connect to server") == ""
