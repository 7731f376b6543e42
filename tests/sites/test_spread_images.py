"""An image node on another site runs from that site's own image store and pulls nothing: while site b lacks the
image, the deploy fails in one line naming the site, the node and how to get the image (this host, which has it,
hands it nothing), and leaves nothing anywhere; once the image is loaded there, the node runs from it, pings across
the tunnel, and destroy leaves no container, bundle mount or cgroup on either host."""
from __future__ import annotations

from pathlib import Path

import pytest

from image_labs import TOOLBOX, copy_image, engine_leftovers, own_images
from sites.simulated import Sites
from spread_labs import LabBuilder

pytestmark = pytest.mark.privileged

LAB = "siteimage"


def image_on_b(sites: Sites) -> LabBuilder:
    """c1 here, a namespace-only container; t2 on site b, from the toolbox image."""
    lab = sites.builder(LAB)
    lab.node("c1", "container")
    lab.node("t2", "container", site="b", image=TOOLBOX)
    lab.link("c1", "t2", "10.0.0.1/24", "10.0.0.2/24")
    return lab


def test_a_site_that_lacks_the_image_says_so_in_one_line_and_keeps_nothing(spread: Sites) -> None:
    own_images()  # this host has the toolbox: site b must not get it from here
    engine_before = engine_leftovers()
    lacking = spread.deploy(image_on_b(spread))
    lines = [line for line in (lacking.stdout + lacking.stderr).splitlines() if "t2" in line]
    assert lacking.returncode != 0 and len(lines) == 1, lacking.stdout + lacking.stderr
    assert lines[0].startswith(f"site b: node t2: image {TOOLBOX} is not on this host") and \
        "`vtopo image build toolbox` makes it" in lines[0], lines
    assert engine_leftovers() == engine_before


def test_an_image_node_on_another_site_runs_the_image_that_site_has(spread: Sites, tmp_path: Path) -> None:
    own_images()
    engine_before = engine_leftovers()
    archive = tmp_path / "toolbox.tar"
    copy_image(TOOLBOX, f"oci-archive:{archive}:{TOOLBOX}")
    archive.chmod(0o644)
    tmp_path.chmod(0o755)
    loaded = spread.b.vtopo("image", "load", str(archive))
    assert loaded.returncode == 0 and "every lab" in loaded.stdout, loaded.stdout + loaded.stderr
    try:
        deployed = spread.deploy(image_on_b(spread))
        assert deployed.returncode == 0, deployed.stdout + deployed.stderr
        try:
            pinged = spread.vtopo("exec", LAB, "t2", "--", "ping", "-c", "3", "-i", "0.2", "-W", "2", "10.0.0.1")
            assert pinged.returncode == 0, pinged.stdout + pinged.stderr
            root = spread.vtopo("exec", LAB, "t2", "--", "sh", "-c", "grep -c PRETTY /etc/os-release; "
                                "test -e /usr/lib/frr/zebra || echo IMAGE; ps -o comm= -p 1")
            assert root.stdout.split() == ["1", "IMAGE", "sleep"], root.stdout + root.stderr  # the image's files
            on_b = spread.b.engine_leftovers()
            assert any(line.startswith("container vtopo-") for line in on_b), on_b
            assert any(line.startswith("cgroup /sys/fs/cgroup/") and "/vtopo-sim-b/vtopo-" in line for line in on_b), on_b
            assert engine_leftovers() == engine_before  # what the real host's cleanup would remove: none of b's
        finally:
            destroyed = spread.vtopo("destroy", LAB)
        assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
        assert spread.b.engine_leftovers() == [] and engine_leftovers() == engine_before
    finally:
        removed = spread.b.vtopo("image", "rm", TOOLBOX)
        assert removed.returncode == 0, removed.stdout + removed.stderr
