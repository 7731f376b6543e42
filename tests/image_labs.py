"""Labs whose nodes run from OCI images (vtopo's own toolbox and FRR images, built once and kept in the image store),
and what the engine could leave on the host."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from vtopo.host import image_build, image_store, oci_engine
from vtopo.lab_terms import image_reference
from vtopo.model.topology import Node, Topology
from wiring import wire

RUN_ROOT = "/run/vtopo"
TOOLBOX, FRR = "vtopo/toolbox", "vtopo/frr"


def own_images() -> None:
    """vtopo's toolbox and FRR images in the shared store: built once (scripts/setup.sh builds them), kept after."""
    for name in ("toolbox", "frr"):
        image_build.build(name)


def mixed_lab(name: str) -> Topology:
    """t1 (toolbox image) - r1 (FRR image) - r2 (the host's FRR) - h2 (a namespace-only container), running OSPF."""
    topology = Topology(name=name)
    for node, kind, settings in (("t1", "container", {"image": TOOLBOX, "default_route": "10.1.0.1"}),
                                 ("r1", "router", {"image": FRR}), ("r2", "router", {}),
                                 ("h2", "container", {"default_route": "10.2.0.1"})):
        topology.add_node(Node(id=node, name=node, kind=kind, settings=settings))
    return wire(topology, ("t1:eth0", "r1:eth0", "10.1.0.10/24", "10.1.0.1/24"),
                ("r1:eth1", "r2:eth1", "10.0.12.1/30", "10.0.12.2/30"),
                ("r2:eth0", "h2:eth0", "10.2.0.1/24", "10.2.0.10/24"))


def engine_leftovers() -> list[str]:
    """runc's containers of vtopo's, bundle mounts and cgroups: what destroy must leave none of."""
    return oci_engine.leftovers(RUN_ROOT)


def derived_image(reference: str, scratch: Path, cmd: list[str], setuid: tuple[str, ...] = (),
                  files: dict[str, str] | None = None) -> str:
    """An image made from vtopo's toolbox as a hostile author would make one (`derived_archive`), loaded into the
    shared store under `reference` by `vtopo image load`, as root. Returns the archive's path."""
    archive = derived_archive(reference, scratch, cmd, setuid, files)
    loaded = subprocess.run([sys.executable, "-m", "vtopo", "image", "load", str(archive)], capture_output=True,
                            text=True, check=False)
    assert loaded.returncode == 0 and "every lab" in loaded.stdout, loaded.stdout + loaded.stderr
    return str(archive)


def derived_archive(reference: str, scratch: Path, cmd: list[str], setuid: tuple[str, ...] = (),
                    files: dict[str, str] | None = None, removed: tuple[str, ...] = (),
                    transport: str = "docker-archive") -> Path:
    """An archive (`transport`: a docker archive, `docker save`'s format, or an OCI archive) of an image made from
    vtopo's toolbox: `setuid` files set-uid root, `files` (path: content, executable) added, `removed` taken out,
    running `cmd`, naming `reference`."""
    layout, bundle, archive = scratch / "layout", scratch / "bundle", scratch / f"{re.sub('[/:]', '-', reference)}.tar"
    shutil.rmtree(bundle, ignore_errors=True)
    copy_image(TOOLBOX, f"oci:{layout}:base")
    subprocess.run(["umoci", "unpack", "--image", f"{layout}:base", str(bundle)], check=True, capture_output=True)
    rootfs = bundle / "rootfs"
    for path in setuid:
        (rootfs / path.lstrip("/")).chmod(0o4755)
    for path, content in (files or {}).items():
        (rootfs / path.lstrip("/")).write_text(content)
        (rootfs / path.lstrip("/")).chmod(0o755)
    for path in removed:
        (rootfs / path.lstrip("/")).unlink()
    subprocess.run(["umoci", "repack", "--image", f"{layout}:derived", str(bundle)], check=True, capture_output=True)
    subprocess.run(["umoci", "config", "--image", f"{layout}:derived", *(w for word in cmd for w in ("--config.cmd",
                                                                                                      word))],
                   check=True, capture_output=True)
    subprocess.run(["skopeo", "copy", "--quiet", f"oci:{layout}:derived", f"{transport}:{archive}:{reference}"],
                   check=True)
    return archive


def copy_image(shared: str, destination: str) -> None:
    """The shared store's image `shared` copied by skopeo to `destination` (TRANSPORT:PATH[:REFERENCE])."""
    subprocess.run(["skopeo", "copy", "--quiet", f"oci:{image_store.layout_of(None)}:{image_reference(shared)}",
                    destination], check=True)
