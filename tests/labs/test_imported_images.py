"""A containerlab lab whose image was loaded with `vtopo image load` runs it: the image a student has as a docker
archive is loaded under the reference the lab names, the lab is imported and deployed, its node runs the image's own
files and command and pings its neighbour, and destroy leaves no container, mount or cgroup."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from image_labs import TOOLBOX, copy_image, engine_leftovers, own_images
from residue import snapshot

pytestmark = pytest.mark.privileged

REFERENCE = "example.org/class/netshoot:1.0"  # what the lab names, as a registry would have it
LAB = f"""
name: loaded
topology:
  nodes:
    t1: {{kind: linux, image: {REFERENCE}, exec: [ip addr add 10.9.0.1/24 dev eth0]}}
    h2: {{kind: linux, image: not-loaded/anywhere:1, exec: [ip addr add 10.9.0.2/24 dev eth0]}}
  links:
    - endpoints: [t1:eth0, h2:eth0]
"""


def vtopo(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vtopo", *argv], capture_output=True, text=True, timeout=300)


def test_an_imported_containerlab_lab_runs_the_image_loaded_for_it(tmp_path: Path) -> None:
    own_images()
    before, engine_before = snapshot(), engine_leftovers()
    archive = tmp_path / "netshoot.tar"
    copy_image(TOOLBOX, f"docker-archive:{archive}:{REFERENCE}")
    loaded = vtopo("image", "load", str(archive), "--name", REFERENCE)
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    try:
        clab = tmp_path / "loaded.clab.yml"
        clab.write_text(LAB)
        imported = vtopo("import", str(clab), "-o", str(tmp_path / "loaded.vtopo"))
        said = imported.stdout + imported.stderr
        assert imported.returncode == 0, said
        assert [line for line in said.splitlines() if "h2" in line and "not-loaded/anywhere:1" in line], said
        assert not [line for line in said.splitlines() if "t1" in line and "not on this host" in line], said
        deployed = vtopo("deploy", str(tmp_path / "loaded.vtopo"))
        assert deployed.returncode == 0, deployed.stdout + deployed.stderr
        try:
            own = vtopo("exec", "loaded", "t1", "--", "sh", "-c", "test -e /usr/lib/frr/zebra || echo IMAGE; "
                        "ps -o comm= -p 1")
            assert own.stdout.split() == ["IMAGE", "sleep"], own.stdout + own.stderr  # the image's files and command
            pinged = vtopo("exec", "loaded", "t1", "--", "ping", "-c", "3", "-i", "0.2", "-W", "2", "10.9.0.2")
            assert pinged.returncode == 0, pinged.stdout + pinged.stderr
        finally:
            destroyed = vtopo("destroy", "loaded")
        assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    finally:
        removed = vtopo("image", "rm", REFERENCE)
        assert removed.returncode == 0, removed.stdout + removed.stderr
    assert engine_leftovers() == engine_before
    assert snapshot() - before == {}
