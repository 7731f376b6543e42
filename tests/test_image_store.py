"""`vtopo image load` takes a docker archive (`docker save`'s format, here written by skopeo) and an OCI archive into
the shared store, under the reference each names; `list` says who may use each; `rm` takes one out."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from image_labs import TOOLBOX, copy_image, own_images

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
