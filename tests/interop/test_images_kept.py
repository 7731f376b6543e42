"""containerlab's `image:` and GNS3's Docker templates kept: a node whose image is on this host (vtopo's toolbox and FRR images here) runs from
it; one whose image is not is named in one line with what vtopo runs instead; export writes each node's image back."""
from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest
import yaml

from image_labs import FRR, TOOLBOX
from vtopo.host import image_store
from vtopo.interop.export import to_containerlab
from vtopo.interop.importing import import_lab
from vtopo.lab import registry

CAMPUS = Path(__file__).parent / "gns3" / "campus" / "campus.gns3"
LAB = f"""
name: images
topology:
  nodes:
    t1: {{kind: linux, image: {TOOLBOX}, exec: [ip addr add 10.1.0.10/24 dev eth0]}}
    r1: {{kind: linux, image: {FRR}, exec: [ip addr add 10.1.0.1/24 dev eth0, ip addr add 10.2.0.1/24 dev eth1]}}
    a1: {{kind: linux, image: alpine:3.19, exec: [ip addr add 10.2.0.10/24 dev eth0]}}
  links:
    - endpoints: [t1:eth0, r1:eth0]
    - endpoints: [r1:eth1, a1:eth0]
"""


@pytest.fixture(autouse=True)
def images_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This host's images are a store of the test's own, holding the toolbox and FRR images made as vtopo makes a
    shared image (of one empty layer: the import asks the store which images it holds, not what is in them). The
    host's store is the vtopo group's, and builds its images as root."""
    monkeypatch.setattr(image_store, "STORE", str(tmp_path / "oci"))
    monkeypatch.setattr(image_store, "MEMBER_STORES", str(tmp_path / "members"))
    layer = tmp_path / "layer.tar"
    tarfile.open(layer, "w").close()
    for reference in (TOOLBOX, FRR):
        image_store.add_rootfs_tar(str(layer), reference, [])


def test_images_present_are_run_the_rest_named_and_export_writes_them(tmp_path: Path) -> None:
    path = tmp_path / "images.clab.yml"
    path.write_text(LAB)
    result = import_lab(path, registry(), frozenset())
    nodes = {node.name: node for node in result.topology.nodes.values()}
    assert (nodes["t1"].kind, nodes["t1"].settings.get("image")) == ("container", TOOLBOX)
    assert (nodes["r1"].kind, nodes["r1"].settings.get("image")) == ("router", FRR)
    assert "image" not in nodes["a1"].settings
    said = [str(notice) for notice in result.notices]
    assert any("a1" in line and "alpine:3.19" in line and "is not on this host" in line and "vtopo image load" in line
               for line in said), said
    exported = to_containerlab(result.topology, registry())
    clab = yaml.safe_load(exported.files[exported.topology_file])["topology"]["nodes"]
    assert (clab["t1"]["image"], clab["r1"]["image"]) == (TOOLBOX, FRR)


def test_a_gns3_docker_template_whose_image_is_here_runs_from_it(tmp_path: Path) -> None:
    project = tmp_path / "campus"
    shutil.copytree(CAMPUS.parent, project)
    text = (project / CAMPUS.name).read_text()
    (project / CAMPUS.name).write_text(text.replace('"image": "alpine:latest"', f'"image": "{TOOLBOX}"'))
    result = import_lab(project / CAMPUS.name, registry(), frozenset())
    web = result.topology.node_named("web")
    assert web is not None and web.settings.get("image") == TOOLBOX, web
    said = [str(notice) for notice in result.notices]
    assert any(line.startswith(f"node web: a container (Docker image {TOOLBOX}), run from that image") for line in said)
