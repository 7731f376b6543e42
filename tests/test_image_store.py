"""`vtopo image load` takes a docker archive (`docker save`'s format, here written by skopeo) and an OCI archive into
the shared store, under the reference each names; `list` says who may use each; `rm` takes one out. An image loaded
anew under a reference leaves nothing of the one it replaces."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from image_labs import TOOLBOX, copy_image, derived_archive, own_images
from vtopo.host.image_store import layout_of

pytestmark = pytest.mark.privileged  # the store is root's


def vtopo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vtopo", *args], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("transport", ["docker-archive", "oci-archive"])
def test_an_archive_loads_lists_and_goes(tmp_path: Path, transport: str) -> None:
    own_images()
    archive, reference = tmp_path / "image.tar", f"loaded/{transport}:1"
    copy_image(TOOLBOX, f"{transport}:{archive}:{reference}")
    try:
        loaded = vtopo("image", "load", str(archive))
        assert loaded.returncode == 0 and f"loaded {reference} sha256:" in loaded.stdout, loaded.stdout + loaded.stderr
        listed = vtopo("image", "list")
        assert any(line.split()[0] == reference and line.endswith("every lab") for line in listed.stdout.splitlines())
    finally:
        removed = vtopo("image", "rm", reference)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert reference not in vtopo("image", "list").stdout
    again = vtopo("image", "rm", reference)
    assert again.returncode == 1 and again.stderr.strip() == f"error: no image {reference} is in the shared store"


def test_an_image_loaded_again_under_its_reference_leaves_nothing_of_the_one_it_replaced(tmp_path: Path) -> None:
    """The toolbox, then an image derived from it, loaded under one reference: the store's index holds what it held
    before and the second image under that reference, and no blob is left that no image of the index uses. skopeo 1.9,
    loading under the reference itself, replaced the index's entry and left the first image's manifest and config
    behind, named by nothing, for ever."""
    own_images()
    reference, layout = "loaded/again:1", Path(layout_of(None))
    first, second = tmp_path / "first.tar", derived_archive(reference, tmp_path, ["sleep", "1"],
                                                             transport="oci-archive")
    copy_image(TOOLBOX, f"oci-archive:{first}:{reference}")
    before = _manifests(layout)
    try:
        digests = [_loaded(archive, reference) for archive in (first, second)]
        assert digests[0] != digests[1]
        assert _manifests(layout) == {**before, reference: digests[1]}
        assert _unused_blobs(layout) == set()
    finally:
        removed = vtopo("image", "rm", reference)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert _manifests(layout) == before and _unused_blobs(layout) == set()


def _loaded(archive: Path, reference: str) -> str:
    """The digest `vtopo image load` says it loaded `archive` under `reference` with."""
    loaded = vtopo("image", "load", str(archive))
    found = re.search(rf"loaded {re.escape(reference)} (sha256:[0-9a-f]{{64}})", loaded.stdout)
    assert loaded.returncode == 0 and found, loaded.stdout + loaded.stderr
    return found.group(1)


def _manifests(layout: Path) -> dict[str, str]:
    """Each manifest of the layout's index by its reference ("" for one named by nothing), failing on two of a name."""
    entries = json.loads((layout / "index.json").read_text())["manifests"]
    named = [(entry.get("annotations", {}).get("org.opencontainers.image.ref.name", ""), entry["digest"])
             for entry in entries]
    assert len(dict(named)) == len(named), named
    return dict(named)


def _unused_blobs(layout: Path) -> set[str]:
    """The blobs of the layout that neither the index nor any manifest in it names."""
    blobs = layout / "blobs" / "sha256"
    used = set()
    for digest in _manifests(layout).values():
        manifest = json.loads((blobs / digest.removeprefix("sha256:")).read_text())
        used |= {digest, manifest["config"]["digest"], *(layer["digest"] for layer in manifest["layers"])}
    return {f"sha256:{blob.name}" for blob in blobs.iterdir()} - used
