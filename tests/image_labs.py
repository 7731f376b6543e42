"""Labs whose nodes run from OCI images (vtopo's own toolbox and FRR images, built once and kept in the image store),
and what the engine could leave on the host."""
from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path, PurePosixPath

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
    shared store under `reference` by `vtopo image load`, as root. Returns the archive's path. The archive is an OCI
    one, whose layers stay gzipped as the store keeps them: in a docker archive skopeo would decompress the toolbox's
    layer and the load compress it again (tests/test_image_store.py loads both kinds)."""
    archive = derived_archive(reference, scratch, cmd, setuid, files, transport="oci-archive")
    loaded = subprocess.run([sys.executable, "-m", "vtopo", "image", "load", str(archive)], capture_output=True,
                            text=True, check=False)
    assert loaded.returncode == 0 and "every lab" in loaded.stdout, loaded.stdout + loaded.stderr
    return str(archive)


def derived_archive(reference: str, scratch: Path, cmd: list[str], setuid: tuple[str, ...] = (),
                    files: dict[str, str] | None = None, removed: tuple[str, ...] = (),
                    transport: str = "docker-archive") -> Path:
    """An archive (`transport`: a docker archive, `docker save`'s format, or an OCI archive) of an image made from
    vtopo's toolbox as `docker build` makes one, a layer added on top: `setuid` files set-uid root, `files` (path:
    content, executable) added, `removed` taken out (whiteouts), running `cmd`, naming `reference`."""
    layout, layer = scratch / "layout", scratch / "layer.tar"
    archive = scratch / f"{re.sub('[/:]', '-', reference)}.tar"
    copy_image(TOOLBOX, f"oci:{layout}:derived")
    write_layer(layer, toolbox_layers(), setuid, files or {}, removed)
    subprocess.run(["umoci", "raw", "add-layer", "--image", f"{layout}:derived", str(layer)], check=True,
                   capture_output=True)
    subprocess.run(["umoci", "config", "--image", f"{layout}:derived", *(w for word in cmd for w in ("--config.cmd",
                                                                                                      word))],
                   check=True, capture_output=True)
    subprocess.run(["skopeo", "copy", "--quiet", f"oci:{layout}:derived", f"{transport}:{archive}:{reference}"],
                   check=True)
    return archive


def toolbox_layers() -> list[Path]:
    """The layer blobs of the shared store's toolbox image, lowest first."""
    layout = Path(image_store.layout_of(None))
    image = image_store.resolve(TOOLBOX, 0)
    assert image is not None, "own_images() builds the toolbox"
    manifest = json.loads((layout / "blobs" / Path(*image.digest.split(":"))).read_text())
    return [layout / "blobs" / Path(*layer["digest"].split(":")) for layer in manifest["layers"]]


def write_layer(layer: Path, below: list[Path], setuid: tuple[str, ...], files: dict[str, str],
                removed: tuple[str, ...]) -> None:
    """The tar of a layer over the layers `below` (gzipped tars): their files at `setuid` again, set-uid, `files`
    new, and a whiteout for each of `removed`; a path is followed through the symlinks of the layers below, as the
    image's root sees it (/bin/bash is usr/bin/bash where /bin is a symlink to usr/bin)."""
    links: dict[str, str] = {}
    kept: dict[str, tuple[tarfile.TarInfo, bytes]] = {}
    wanted = {PurePosixPath(path).name for path in setuid}
    for blob in below:
        with tarfile.open(blob, "r|gz") as lower:
            for member in lower:
                name = os.path.normpath(member.name).lstrip("/")
                if member.issym():
                    links[name] = member.linkname
                elif member.isreg() and PurePosixPath(name).name in wanted:
                    extracted = lower.extractfile(member)
                    assert extracted is not None
                    kept[name] = (member, extracted.read())
    with tarfile.open(layer, "w") as upper:
        for path in setuid:
            member, data = kept[followed(path, links)]
            member.name, member.mode = followed(path, links), member.mode | 0o4000
            upper.addfile(member, io.BytesIO(data))
        for path, content in files.items():
            member, data = tarfile.TarInfo(followed(path, links)), content.encode()
            member.mode, member.size = 0o755, len(data)
            upper.addfile(member, io.BytesIO(data))
        for path in removed:
            whiteout = PurePosixPath(followed(path, links, last=False))
            upper.addfile(tarfile.TarInfo(str(whiteout.parent / f".wh.{whiteout.name}")))


def followed(path: str, links: dict[str, str], last: bool = True) -> str:
    """`path` relative to the image's root, through the symlinks in `links` (of its directories, and of its last
    part unless not `last`)."""
    resolved: list[str] = []
    pending = [part for part in path.split("/") if part not in ("", ".")]
    for _ in range(40):  # the kernel's limit of symlinks followed
        if not pending:
            return "/".join(resolved)
        part = pending.pop(0)
        target = links.get("/".join([*resolved, part])) if pending or last else None
        if part == "..":
            resolved = resolved[:-1]
        elif target is None:
            resolved.append(part)
        else:
            resolved = [] if target.startswith("/") else resolved
            pending = [piece for piece in target.split("/") if piece not in ("", ".")] + pending
    raise AssertionError(f"{path}: too many symlinks")


def copy_image(shared: str, destination: str) -> None:
    """The shared store's image `shared` copied by skopeo to `destination` (TRANSPORT:PATH[:REFERENCE])."""
    subprocess.run(["skopeo", "copy", "--quiet", f"oci:{image_store.layout_of(None)}:{image_reference(shared)}",
                    destination], check=True)
