"""OCI images for nodes, kept where no registry is needed: OCI image layouts under /var/lib/vtopo/oci, written by
skopeo (`vtopo image load`) and umoci (`vtopo image build`), read by umoci.

    /var/lib/vtopo/oci/shared        root's images and vtopo's own: every lab may run them
    /var/lib/vtopo/oci/users/UID     a member's own images: only that member's labs run them, and they hide a shared
                                     image of the same reference from that member alone
    /var/lib/vtopo/oci/rootfs/UID    each image a lab user runs, unpacked by umoci, owned by that user (root of the
                                     lab's user namespace), by manifest digest; nodes see it through an overlay, and
                                     it goes with the last lab deployed from it (root's labs' user keeps its
                                     roots of the shared images)

All of it is root's; the shared store is readable by everyone (every lab may run its images), the rest root's
alone: one member's image can never stand under another member's lab. A lab names an image by reference (`toolbox`,
`frrouting/frr:8.4`); the deploy resolves it to its manifest digest, the lab's record keeps that digest, and the
digest is checked again when a node first starts from it: a reference loaded anew since then is refused rather than
run (a node restarted starts the unpacked root of its lab's digest).
"""
from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

from vtopo.host.errors import HostError
from vtopo.host.owned_files import PASSAGE, PRIVATE, held, make_directory, open_file
from vtopo.host.state import StateStore
from vtopo.lab_terms import LAB_USER, image_reference

STORE = os.environ.get("VTOPO_OCI_DIR", "/var/lib/vtopo/oci")
REF_ANNOTATION = "org.opencontainers.image.ref.name"
TOOL_SECONDS = 600.0


class ImageError(HostError):
    """An image that cannot be loaded, found or unpacked; the message says which and what to do."""


@dataclass(frozen=True)
class StoredImage:
    """An image in the store: its reference, manifest digest, and whose it is (None: shared, every lab's)."""

    reference: str
    digest: str
    owner: int | None

    @property
    def layout(self) -> str:
        return layout_of(self.owner)

    @property
    def who_may_use(self) -> str:
        return "every lab" if self.owner is None else f"the labs of uid {self.owner}"


def layout_of(owner: int | None) -> str:
    return f"{STORE}/shared" if owner is None else f"{STORE}/users/{owner}"


def _tags(owner: int | None) -> dict[str, str]:
    """reference -> manifest digest of one layout (none where it does not exist yet, or the caller may not read it:
    a member reads the shared store's, every lab's, and no member's)."""
    try:
        with open(f"{layout_of(owner)}/index.json", encoding="utf-8") as file:
            index = json.load(file)
    except (FileNotFoundError, PermissionError):
        return {}
    return {str(m["annotations"][REF_ANNOTATION]): str(m["digest"]) for m in index.get("manifests", [])
            if REF_ANNOTATION in m.get("annotations", {})}


def images(uid: int | None = None) -> list[StoredImage]:
    """What `uid` may run (the shared images and their own), or with None every image of the store."""
    owners: list[int | None] = [None]
    if uid is None:
        users = f"{STORE}/users"
        owners += sorted(int(name) for name in os.listdir(users) if name.isdigit()) if os.path.isdir(users) else []
    elif uid != 0:
        owners.append(uid)
    return [StoredImage(reference, digest, owner) for owner in owners for reference, digest in
            sorted(_tags(owner).items())]


def available(references: list[str], uid: int) -> tuple[tuple[str, str, int], ...]:
    """Of `references`, the images a lab of `uid` runs, as HostFacts.oci_images keeps them."""
    found = (resolve(reference, uid) for reference in sorted(set(references)))
    return tuple((image.reference, image.digest, image.owner or 0) for image in found if image is not None)


def resolve(reference: str, uid: int) -> StoredImage | None:
    """The image a lab of `uid` runs for `reference`: their own, else the shared one."""
    wanted = image_reference(reference)
    for owner in ([uid] if uid else []) + [None]:
        digest = _tags(owner).get(wanted)
        if digest:
            return StoredImage(wanted, digest, owner)
    return None


@contextmanager
def locked(owner: int | None) -> Iterator[None]:
    """One writer or reader of a layout at a time: a load never changes a tag under an unpack that checked it."""
    with _lock_file(f".lock-{'shared' if owner is None else owner}"):
        yield


def run_tool(argv: list[str], what: str) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_SECONDS, check=False,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise ImageError(f"could not {what}: {argv[0]} is not installed (scripts/setup.sh installs it)") from None
    except subprocess.TimeoutExpired:
        raise ImageError(f"could not {what}: {argv[0]} took longer than {TOOL_SECONDS:.0f} s") from None
    if done.returncode:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise ImageError(f"could not {what}: {said[-1] if said else f'{argv[0]} failed'}")
    return done.stdout


def archive_format(path: str) -> tuple[str, str]:
    """("oci-archive" or "docker-archive", the reference the archive names or "") of the tar file at `path`."""
    try:
        with tarfile.open(path) as archive:
            names = set(archive.getnames())
            if "oci-layout" in names and "index.json" in names:
                index = json.load(_member(archive, "index.json"))
                refs = [m.get("annotations", {}).get(REF_ANNOTATION, "") for m in index.get("manifests", [])]
                return "oci-archive", next((r for r in refs if r), "")
            if "manifest.json" in names:
                manifest = json.load(_member(archive, "manifest.json"))
                tags = manifest[0].get("RepoTags") or [] if manifest else []
                return "docker-archive", str(tags[0]) if tags else ""
    except (OSError, tarfile.TarError, ValueError, KeyError, IndexError, TypeError) as error:
        raise ImageError(f"{path} is not an OCI or docker archive: {error}") from None
    raise ImageError(f"{path} is neither an OCI archive (no oci-layout) nor a docker archive (no manifest.json)")


def _member(archive: tarfile.TarFile, name: str) -> IO[bytes]:
    file = archive.extractfile(name)
    if file is None:
        raise KeyError(name)
    return file


def load(path: str, uid: int, reference: str = "") -> StoredImage:
    """Copy the OCI or docker archive at `path` into the store of `uid` (root: the shared one) under `reference`,
    or the one the archive names. The archive is opened by the caller's rights (the agent hands a descriptor)."""
    transport, named = archive_format(path)
    wanted = image_reference(reference or named)
    if not (reference or named):
        raise ImageError(f"{path} names no image; give it one: vtopo image load {path} --name NAME[:TAG]")
    owner = uid or None
    with locked(owner):
        make_directory(os.path.dirname(layout_of(owner)), PRIVATE, exist_ok=True)  # users/: root's alone
        source = f"{transport}:{path}" + (f":{named}" if transport == "docker-archive" and named else "")
        run_tool(["skopeo", "copy", "--quiet", source, f"oci:{layout_of(owner)}:{wanted}"], f"load {path}")
        _readable_index(owner)
    found = resolve(wanted, uid)
    assert found is not None
    return found


def remove(reference: str, uid: int) -> StoredImage:
    """Take the image `reference` out of the store of `uid` (root: the shared one); labs deployed from it keep running
    from its unpacked files, which go with the last of them."""
    owner = uid or None
    wanted = image_reference(reference)
    with locked(owner):
        digest = _tags(owner).get(wanted)
        if digest is None:
            raise ImageError(f"no image {reference} is in {'the shared store' if owner is None else 'your store'}")
        run_tool(["umoci", "rm", "--image", f"{layout_of(owner)}:{wanted}"], f"remove image {wanted}")
        run_tool(["umoci", "gc", "--layout", layout_of(owner)], "drop the blobs no image uses")
        _readable_index(owner)
    release_unused_roots()
    return StoredImage(wanted, digest, owner)


def add_rootfs_tar(tar: str, reference: str, config: list[str]) -> StoredImage:
    """A shared image of one layer, the file system in `tar` (mmdebstrap's), with umoci's `config` arguments."""
    wanted = image_reference(reference)
    layout = layout_of(None)
    with locked(None):
        if not os.path.exists(f"{layout}/oci-layout"):
            run_tool(["umoci", "init", "--layout", layout], "make the image store")
        image = f"{layout}:{wanted}"
        run_tool(["umoci", "new", "--image", image], f"make image {wanted}")
        run_tool(["umoci", "raw", "add-layer", "--image", image, tar], f"add the file system of {wanted}")
        run_tool(["umoci", "config", "--image", image, *config], f"configure {wanted}")
        run_tool(["umoci", "gc", "--layout", layout], "drop the blobs no image uses")
        _readable_index(None)
    found = resolve(wanted, 0)
    assert found is not None
    return found


def _readable_index(owner: int | None) -> None:
    """The shared store's index readable by everyone (a member's `validate` finds its images); a member's store
    stays root's alone, behind users/."""
    if owner is None:
        os.chmod(f"{layout_of(None)}/index.json", 0o644)


@dataclass(frozen=True)
class Unpacked:
    """An image unpacked for one lab user: its root file system, and the process its configuration says to run."""

    rootfs: str
    process: dict[str, object]


def unpacked(image: StoredImage, ids: tuple[int, int] | None) -> Unpacked:
    """The image unpacked for the lab user `ids` (None: the host's root), once; the reference must still name the
    digest the lab was deployed with (a digest changed since is refused), and umoci checks every blob it reads
    against its digest."""
    uid = ids[0] if ids else 0
    directory = f"{STORE}/rootfs/{uid}/{image.digest.replace(':', '-')}"
    with locked(image.owner):
        if os.path.isdir(directory):
            return _read_unpacked(directory)
        current = _tags(image.owner).get(image.reference)
        if current != image.digest:
            raise ImageError(f"image {image.reference} is now {current or 'gone'}, not {image.digest} that the lab "
                             "was deployed with; deploy the lab again to run the image as it is now")
        make_directory(os.path.dirname(directory), PRIVATE, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".unpacking-", dir=os.path.dirname(directory))
        try:
            source = f"{image.layout}:{image.reference}"
            run_tool(["umoci", "raw", "unpack", "--rootless", "--image", source, f"{staging}/rootfs"],
                     f"unpack image {image.reference}")
            run_tool(["umoci", "raw", "runtime-config", "--image", source, f"{staging}/config.json"],
                     f"read the configuration of image {image.reference}")
            if ids:
                _give(f"{staging}/rootfs", ids)
            os.rename(staging, directory)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return _read_unpacked(directory)


@contextmanager
def roots_held() -> Iterator[None]:
    """While the block runs, no unpacked root is released: a node's overlay is mounted on one inside it."""
    with _lock_file(".lock-rootfs"):
        yield


@contextmanager
def cgroups_held(shared: bool) -> Iterator[None]:
    """While the block runs, the parent cgroup of image nodes stays (`shared`: a container's start, which makes its
    own cgroup under it), or nothing makes a cgroup under it (the removal of the parent, once it is empty)."""
    with _lock_file(".lock-cgroups", shared):
        yield


@contextmanager
def _lock_file(name: str, shared: bool = False) -> Iterator[None]:
    """The store's lock file `name`, root's alone, held while the block runs."""
    make_directory(STORE, PASSAGE, exist_ok=True)
    with held(open_file(f"{STORE}/{name}", os.O_WRONLY | os.O_CREAT), shared):
        yield


def release_unused_roots() -> None:
    """Remove each unpacked root that no node's overlay is on and no deployed lab may start again: its files are a lab
    user's, which outlive no lab (and whose uid a later user may get)."""
    if not os.path.isdir(f"{STORE}/rootfs"):  # no image was ever unpacked: nothing to release, and no store to make
        return
    with roots_held(), open("/proc/self/mountinfo", encoding="utf-8") as mounts:
        mounted, kept = mounts.read(), _held_by_labs()
        for user in _directories(f"{STORE}/rootfs"):
            for root in _directories(user):
                if f"{root}/rootfs" not in mounted and os.path.relpath(root, f"{STORE}/rootfs") not in kept:
                    shutil.rmtree(root, ignore_errors=True)
            if not os.listdir(user):
                os.rmdir(user)


def _held_by_labs() -> set[str]:
    """The unpacked roots ("UID/DIGEST") of the deployed labs' images: a node stopped, or restarted, starts again from
    the digest its lab was deployed with, whatever its reference names since. Root's labs run as LAB_USER, a system
    user no member's uid becomes: its roots of the shared images are kept for root's next lab."""
    try:
        lab_user = pwd.getpwnam(LAB_USER).pw_uid
    except KeyError:
        held = set()
    else:
        held = {f"{lab_user}/{image.digest.replace(':', '-')}" for image in images(0)}
    for record in StateStore().labs():
        try:
            facts, owner = record.facts(), record.consent().owner
        except FileNotFoundError:  # destroyed meanwhile
            continue
        uid = owner.ids[0] if owner.ids else 0
        held |= {f"{uid}/{digest.replace(':', '-')}" for _, digest, _ in facts.oci_images}
    return held


def _directories(path: str) -> list[str]:
    try:
        return [entry.path for entry in os.scandir(path) if entry.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return []


def _give(rootfs: str, ids: tuple[int, int]) -> None:
    """Every file of `rootfs` to the lab user `ids`, root of the lab's user namespace: the image's files are its
    root's inside, as in the image. chown clears each setuid and setgid bit, so no file stays set-id to anyone."""
    os.chown(rootfs, *ids)
    for directory, dirs, files in os.walk(rootfs):
        for name in dirs + files:
            os.lchown(os.path.join(directory, name), *ids)


def _read_unpacked(directory: str) -> Unpacked:
    with open(f"{directory}/config.json", encoding="utf-8") as file:
        process = json.load(file).get("process", {})
    return Unpacked(f"{directory}/rootfs", process)

