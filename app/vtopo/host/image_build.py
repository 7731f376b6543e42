"""vtopo's own images, made from Debian's packages with no image registry: mmdebstrap installs them from the Debian
mirror apt uses into one file-system layer, and umoci makes it an image of the shared store (vtopo.host.image_store).

- `vtopo/toolbox`: a shell and the network tools vtopo's measurements and a student use (iproute2, ping, iperf3,
  tcpdump, ps);
- `vtopo/frr`: the same with FRR, whose daemons vtopo starts from the image (the router kind's image setting).

Both keep running `sleep infinity`: a node lives while its lab does, and what runs in it is started by vtopo, by its
startup commands or from a terminal.
"""
from __future__ import annotations

import os
import platform
import tempfile

from vtopo.host.image_store import ImageError, StoredImage, add_rootfs_tar, resolve, run_tool
from vtopo.lab_terms import OWN_IMAGES

TOOLS = ("iproute2", "iputils-ping", "iperf3", "tcpdump", "procps")
PACKAGES = {"toolbox": TOOLS, "frr": (*TOOLS, "frr")}
assert tuple(f"vtopo/{name}" for name in PACKAGES) == OWN_IMAGES
LEFT_OUT = ("/usr/share/man/*", "/usr/share/doc/*", "/usr/share/locale/*", "/usr/share/info/*")
CONFIG = ("--config.cmd", "sleep", "--config.cmd", "infinity", "--config.workingdir", "/",
          "--config.env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")


def suite() -> str:
    """The host's Debian release (its packages are the ones the mirror has for it)."""
    with open("/etc/os-release", encoding="utf-8") as release:
        fields = dict(line.rstrip("\n").split("=", 1) for line in release if "=" in line)
    return fields.get("VERSION_CODENAME", "bookworm").strip('"')


def build(name: str, rebuild: bool = False) -> tuple[StoredImage, bool]:
    """The image vtopo/NAME in the shared store, built unless it is there already (or `rebuild`); whether it was
    built now."""
    if name not in PACKAGES:
        raise ImageError(f"vtopo builds no image {name!r}; it builds: {', '.join(PACKAGES)}")
    reference = f"vtopo/{name}:latest"
    found = resolve(reference, 0)
    if found is not None and not rebuild:
        return found, False
    with tempfile.TemporaryDirectory(prefix="vtopo-image-") as scratch:
        tar = os.path.join(scratch, "rootfs.tar")
        run_tool(["mmdebstrap", "--quiet", "--variant=essential", f"--include={','.join(PACKAGES[name])}",
                  f"--architectures={_architecture()}", *(f"--dpkgopt=path-exclude={path}" for path in LEFT_OUT),
                  suite(), tar], f"install the packages of image {reference}")
        return add_rootfs_tar(tar, reference, [*CONFIG, "--author", "vtopo image build"]), True


def _architecture() -> str:
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
