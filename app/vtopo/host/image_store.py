"""OCI images for nodes, kept where no registry is needed: OCI image layouts under /var/lib/vtopo/oci, written by
skopeo (`vtopo image load`) and umoci (`vtopo image build`), read by umoci.

    /var/lib/vtopo/oci/shared        root's images and vtopo's own: every lab may run them
    /var/lib/vtopo-member-images/UID a member's own images: only that member's labs run them, and they hide a shared
                                     image of the same reference from that member alone
    /var/lib/vtopo-member-images/UID.json  root's record of it: the name of the user who loaded into it (a store of
                                     another name is no one's, and goes), and the share of their images
    /var/lib/vtopo/oci/rootfs/UID    each image a lab user runs, unpacked by umoci, owned by that user (root of the
                                     lab's user namespace), by manifest digest; nodes see it through an overlay, and
                                     it goes with the last lab deployed from it (root's labs' user keeps its
                                     roots of the shared images)

The shared store and rootfs are root's; the shared store is readable by everyone (every lab may run its images),
rootfs root's alone. A member's store is the member's own (0700, in a directory root's, 0711, which no one lists;
outside /var/lib/vtopo, which members do not pass through, on the same file system as rootfs): whatever reads or
writes it, loading an archive, unpacking or removing an image, runs as that member, with their groups and
no privilege (`as_account`), so that no member's archive, layer or configuration is ever parsed by root. What root
needs of a member's files, the store's tags, what an image takes unpacked and the process its configuration runs, is
read by nobody (vtopo.oci_layouts) from descriptors root opened (regular files of the member's, never through a link
or a FIFO), and root reads only nobody's one-line answer, bounded as a lab file is, checking each field again (a
reference and a sha256 digest of skopeo's shape, the process's fields by type). A member's images, their store and
what is unpacked of them, stay within their share (image_mb_per_member), when an image is loaded and when it is
unpacked. One member's images can never stand under another member's lab: each lab resolves
references in its owner's store and the shared one only.

A lab names an image by reference (`toolbox`, `frrouting/frr:8.4`); the deploy resolves it to its manifest digest,
the lab's record keeps that digest, and the digest is checked again when a node first starts from it: a reference
loaded anew since then is refused rather than run (a node restarted starts the unpacked root of its lab's digest).
"""
from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from vtopo.host.errors import HostError
from vtopo.host.owned_files import PASSAGE, PRIVATE, held, make_directory, open_file, read_small_file, write_file
from vtopo.host.state import StateStore
from vtopo.lab_terms import LAB_USER, image_reference, in_group
from vtopo.model import untrusted_json
from vtopo.model.rules import CLIENTS_GROUP
from vtopo.model.problems import LabError
from vtopo.oci_archives import ArchiveError, archive_format
from vtopo.oci_layouts import DIGEST, REFERENCE, document, process_of, tags_of
from vtopo.ops import as_account, drop_privileges
from vtopo.privileges import owner_or_nobody, python_module_as, run_bounded
from vtopo.reports import user_name

STORE = os.environ.get("VTOPO_OCI_DIR", "/var/lib/vtopo/oci")
MEMBER_STORES = os.environ.get("VTOPO_OCI_MEMBERS_DIR", "/var/lib/vtopo-member-images")
TOOL_SECONDS = 600.0
TRANSPORTS = ("oci-archive", "docker-archive")
MEMBER_FILE_BYTES = 4 << 30  # the largest file umoci writes for a member removing one of their images
DEFAULT_SHARE_BYTES = 4 << 30  # image_mb_per_member's default, for a store loaded before its share was recorded
READABLE_FILE = 0o644  # root's record of a member's store
PROCESS = "process.json"  # root's summary of an unpacked image's process, beside its root file system
SUMMARY_BYTES = 64 << 10  # what vtopo.oci_layouts may say of a member's files
MAX_LAYERS = 256  # of a member's image (docker's limit is 127)


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
        return "every lab" if self.owner is None else f"{user_name(self.owner)}'s labs"


def layout_of(owner: int | None) -> str:
    return f"{STORE}/shared" if owner is None else f"{MEMBER_STORES}/{owner}"


def _tags(owner: int | None) -> dict[str, str]:
    """reference -> manifest digest of one layout (none where it does not exist yet, or the caller may not read it:
    a member reads the shared store's, every lab's, and no member's). A member's index is the member's file, which
    root has nobody read (`_member_tags`); a store another user of its uid left has none."""
    if owner is not None and not _theirs(owner):
        return {}
    if owner is not None and os.geteuid() == 0:
        return _member_tags(owner)
    return tags_of(read_json(f"{layout_of(owner)}/index.json"))


def _member_tags(owner: int) -> dict[str, str]:
    """The tags of a member's store as nobody read its index.json (vtopo.oci_layouts), each checked again: a
    reference or digest of another shape than skopeo's is left out."""
    try:
        store = _open_beneath(layout_of(owner))
    except (FileNotFoundError, ImageError):
        return {}
    try:
        index = _open_file_of(store, "index.json", owner, "your image store's index")
    except ImageError:
        return {}
    finally:
        os.close(store)
    try:
        tags = read_as_nobody([(index, "")], "tags").get("tags")
    finally:
        os.close(index)
    return {reference: digest for reference, digest in tags.items() if REFERENCE.fullmatch(reference)
            and isinstance(digest, str) and DIGEST.fullmatch(digest)} if isinstance(tags, dict) else {}


def read_json(path: str) -> object:
    """The JSON document in the file at `path`, read as a file its user may have made anything of: a regular file,
    not through a symlink at its end, of at most DOCUMENT_BYTES; None otherwise, or where there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        return document(file) if stat.S_ISREG(os.fstat(fd).st_mode) else None


def images(uid: int | None = None) -> list[StoredImage]:
    """What `uid` may run (the shared images and their own), or with None every image of the store."""
    owners: list[int | None] = [None]
    if uid is None:
        owners += sorted(int(name) for name in os.listdir(MEMBER_STORES) if name.isdigit()) \
            if os.path.isdir(MEMBER_STORES) else []
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


def run_tool(argv: list[str], what: str, stdin: int = subprocess.DEVNULL) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TOOL_SECONDS, check=False, stdin=stdin)
    except FileNotFoundError:
        raise ImageError(f"could not {what}: {argv[0]} is not installed (scripts/setup.sh installs it)") from None
    except subprocess.TimeoutExpired:
        raise ImageError(f"could not {what}: {argv[0]} took longer than {TOOL_SECONDS:.0f} s") from None
    if done.returncode:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise ImageError(f"could not {what}: {said[-1] if said else f'{argv[0]} failed'}")
    return done.stdout


def load(path: str, reference: str = "") -> StoredImage:
    """Copy root's OCI or docker archive at `path` into the shared store under `reference`, or the one the archive
    names (a member's archive: `load_own`)."""
    try:
        transport, named = archive_format(path)
    except ArchiveError as error:
        raise ImageError(str(error)) from None
    wanted = image_reference(reference or named)
    if not (reference or named):
        raise ImageError(f"{path} names no image; give it one: vtopo image load {path} --name NAME[:TAG]")
    with locked(None):
        source = f"{transport}:{path}" + (f":{named}" if transport == "docker-archive" and named else "")
        _copy_in(lambda argv: argv, ["skopeo", "copy", "--quiet", source], layout_of(None), wanted, f"load {path}")
        _readable_index(None)
    found = resolve(wanted, 0)
    assert found is not None
    return found


def load_own(archive: int, transport: str, named: str, uid: int, reference: str, limit_bytes: int) -> StoredImage:
    """Copy a member's archive into their own store under `reference`, or the one the archive names (`named`, as
    the member's own process read it, in `transport`'s format). `archive` is a descriptor the member's process
    opened; everything that reads it runs as the member (`as_account`), limited to files of `limit_bytes` (as is
    the archive, and their store as a whole), in the member's own store: the archive is copied there from the
    descriptor, skopeo unpacks it there (--tmpdir) and writes the image there."""
    wanted = image_reference(reference or named)
    if transport not in TRANSPORTS:
        raise ImageError(f"an archive is an {' or a '.join(TRANSPORTS)}, not {transport!r}")
    if not (reference or named):
        raise ImageError("the archive names no image; give it one: vtopo image load FILE --name NAME[:TAG]")
    if not REFERENCE.fullmatch(wanted) or (named and not REFERENCE.fullmatch(named)):
        raise ImageError(f"{reference or named!r} is not an image reference (NAME[:TAG], of letters, digits and . _ / "
                         "- : @)")
    about = os.fstat(archive)
    if not stat.S_ISREG(about.st_mode):
        raise ImageError("an image archive is a regular file (not a pipe, a device or a directory)")
    if about.st_size > limit_bytes:
        raise ImageError(f"the archive has {about.st_size >> 20:,} MiB, more than the {limit_bytes >> 20:,} MiB a "
                         "member's images may take (image_mb_per_member)")
    with locked(uid):
        store = _member_store(uid)
        with _member_scratch(uid, limit_bytes) as (scratch, member):
            run_tool(member(["dd", f"of={scratch}/archive", "bs=1M", "status=none"]), "copy the archive",
                     stdin=archive)
            source = f"{transport}:{scratch}/archive" + (f":{named}" if transport == "docker-archive" and named else "")
            _copy_in(member, ["skopeo", f"--tmpdir={scratch}", "copy", "--quiet", source], store, wanted,
                     "load the archive")
        _record(uid, limit_bytes)
        found = resolve(wanted, uid)
        if found is None or found.owner != uid:
            raise ImageError(f"skopeo wrote no image {wanted} into your store")
        try:
            _within_share(found, limit_bytes)
        except ImageError as error:
            refused = error
        else:
            return found
    remove(wanted, uid)
    raise refused


def _copy_in(run: Callable[[list[str]], list[str]], copy: list[str], layout: str, wanted: str, what: str) -> None:
    """The image skopeo's words `copy` read put into `layout` under `wanted`, each command run as `run` words it
    (root's own, or as the member whose store it is). skopeo writes it under a loading name of its own, to which umoci
    then moves `wanted`: an image `wanted` named before loses its last name, and `umoci gc` takes its manifest and its
    blobs, where skopeo 1.9, loading under `wanted` itself, left them in the layout, named by nothing, for ever."""
    loading = f"loading-{uuid.uuid4().hex}"
    run_tool(run([*copy, f"oci:{layout}:{loading}"]), what)
    try:
        run_tool(run(["umoci", "tag", "--image", f"{layout}:{loading}", wanted]), what)
    finally:
        run_tool(run(["umoci", "rm", "--image", f"{layout}:{loading}"]), what)
    run_tool(run(["umoci", "gc", "--layout", layout]), "drop the blobs no image uses")


def _member_store(uid: int) -> str:
    """The member's own store, MEMBER_STORES/UID, theirs (0700) in a directory root's (which members pass through and
    no one lists): only root makes or renames what it holds, so the store is the directory root made. A store another
    user of that uid left is removed first."""
    make_directory(MEMBER_STORES, PASSAGE, exist_ok=True)
    store = layout_of(uid)
    if not _theirs(uid):
        _forget(uid)
    try:
        os.mkdir(store, PRIVATE)
    except FileExistsError:
        pass
    os.lchown(store, uid, pwd.getpwuid(uid).pw_gid)
    return store


def as_member(uid: int, limit_bytes: int, argv: list[str]) -> list[str]:
    """`argv` run as the member `uid` (their groups, no privilege), writing no file larger than `limit_bytes`."""
    return [*as_account(uid), "prlimit", f"--fsize={limit_bytes}", "--", *argv]


@contextmanager
def _member_scratch(uid: int, limit_bytes: int) -> Iterator[tuple[str, Callable[[list[str]], list[str]]]]:
    """A directory of the member's own in their store, made and removed by the member, and how to run a command as
    them (`as_member`)."""
    def member(argv: list[str]) -> list[str]:
        return as_member(uid, limit_bytes, argv)

    scratch = f"{layout_of(uid)}/.scratch-{uuid.uuid4().hex}"
    run_tool(member(["mkdir", "--mode=700", scratch]), "make a directory in your store")
    try:
        yield scratch, member
    finally:
        run_tool(member(["rm", "--recursive", "--force", "--", scratch]), "clean your store")


def remove(reference: str, uid: int) -> StoredImage:
    """Take the image `reference` out of the store of `uid` (root: the shared one; a member's, as the member); labs
    deployed from it keep running from its unpacked files, which go with the last of them."""
    owner = uid or None
    wanted = image_reference(reference)
    run = (lambda argv: argv) if owner is None else (lambda argv: as_member(uid, MEMBER_FILE_BYTES, argv))
    with locked(owner):
        digest = _tags(owner).get(wanted)
        if digest is None:
            raise ImageError(f"no image {reference} is in {'the shared store' if owner is None else 'your store'}")
        run_tool(run(["umoci", "rm", "--image", f"{layout_of(owner)}:{wanted}"]), f"remove image {wanted}")
        run_tool(run(["umoci", "gc", "--layout", layout_of(owner)]), "drop the blobs no image uses")
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
    against its digest. A member's own image is unpacked by the member (`_unpack_own`); a shared one by root, then
    given to the lab user."""
    uid = ids[0] if ids else 0
    directory = f"{STORE}/rootfs/{uid}/{image.digest.replace(':', '-')}"
    with locked(image.owner):
        if os.path.isdir(directory):
            return _read_unpacked(directory, image)
        current = _tags(image.owner).get(image.reference)
        if current != image.digest:
            raise ImageError(f"image {image.reference} is now {current or 'gone'}, not {image.digest} that the lab "
                             "was deployed with; deploy the lab again to run the image as it is now")
        make_directory(os.path.dirname(directory), PRIVATE, exist_ok=True)
        if image.owner is not None:
            if image.owner != uid:
                raise ImageError(f"image {image.reference} is {user_name(image.owner)}'s, whose labs alone run it")
            _unpack_own(image, directory)
            return _read_unpacked(directory, image)
        staging = tempfile.mkdtemp(prefix=".unpacking-", dir=os.path.dirname(directory))
        try:
            source = f"{image.layout}:{image.reference}"
            run_tool(["umoci", "raw", "unpack", "--rootless", "--image", source, f"{staging}/rootfs"],
                     f"unpack image {image.reference}")
            run_tool(["umoci", "raw", "runtime-config", "--image", source, f"{staging}/config.json"],
                     f"read the configuration of image {image.reference}")
            write_file(f"{staging}/{PROCESS}", json.dumps(process_of(read_json(f"{staging}/config.json"))))
            if ids:
                _give(f"{staging}/rootfs", ids)
            os.rename(staging, directory)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return _read_unpacked(directory, image)


def _unpack_own(image: StoredImage, directory: str) -> None:
    """A member's image unpacked by the member, in their store, then moved by root into `directory` (root's, in
    rootfs/UID, root's alone) and made root's at its top: the member can no longer replace its rootfs (say with a
    symlink the overlay would follow), only change their own files within it."""
    uid = image.owner
    assert uid is not None
    room = _within_share(image, _recorded_share(uid))
    with _member_scratch(uid, room) as (scratch, member):
        source = f"{image.layout}:{image.reference}"
        unpacking = f"{scratch}/image"
        run_tool(member(["mkdir", unpacking]), f"unpack image {image.reference}")
        run_tool(member(["umoci", "raw", "unpack", "--rootless", "--image", source, f"{unpacking}/rootfs"]),
                 f"unpack image {image.reference}")
        run_tool(member(["umoci", "raw", "runtime-config", "--image", source, f"{unpacking}/config.json"]),
                 f"read the configuration of image {image.reference}")
        os.rename(unpacking, directory)
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:  # the member put something else there than the directory umoci made
        _remove_planted(directory)
        raise ImageError(f"image {image.reference} was not unpacked: its directory was replaced meanwhile") from None
    try:
        os.fchown(fd, 0, 0)
        os.fchmod(fd, PRIVATE)
        rootfs = os.stat("rootfs", dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISDIR(rootfs.st_mode):
            _remove_planted(directory)
            raise ImageError(f"image {image.reference} was not unpacked: its root was replaced meanwhile")
        _keep_process(fd, image)
    finally:
        os.close(fd)


def _keep_process(directory: int, image: StoredImage) -> None:
    """Root's own summary of the process a member's image runs, in its unpacked directory (root's now, which the
    member can no longer add to): the member's config.json as nobody read it, each field checked again."""
    assert image.owner is not None
    config = _open_file_of(directory, "config.json", image.owner, f"the configuration of image {image.reference}")
    try:
        process = process_of(read_as_nobody([(config, "")], "process"))
    finally:
        os.close(config)
    try:
        os.unlink(PROCESS, dir_fd=directory)  # one the member made before the directory was root's
    except FileNotFoundError:
        pass
    kept = os.open(PROCESS, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                   dir_fd=directory)
    with os.fdopen(kept, "w", encoding="utf-8") as file:
        file.write(json.dumps(process))


def _within_share(image: StoredImage, share_bytes: int) -> int:
    """The bytes left of a member's `share_bytes` for unpacking `image` of theirs, once it is checked that what their
    images take on disk (their store, and their own images unpacked for their nodes), with what `image` takes
    unpacked (counted by vtopo.oci_layouts as nobody), stays within it; one line saying so otherwise."""
    uid = image.owner
    assert uid is not None
    room = share_bytes - _own_bytes(uid)
    needed = _unpacked_bytes(image, max(room, 0))
    if needed > room:
        raise ImageError(f"image {image.reference} unpacked takes more than the {max(room, 0) >> 20:,} MiB left of the "
                         f"{share_bytes >> 20:,} MiB a member's images may take (image_mb_per_member): `vtopo image "
                         "rm` one, or destroy a lab of yours first")
    return room


def _own_bytes(uid: int) -> int:
    """What a member's images take on disk: their store (measured by them), and their own images unpacked for their
    nodes (the shared images unpacked for them apart)."""
    store = run_tool(as_member(uid, SUMMARY_BYTES, ["du", "--summarize", "--block-size=1", layout_of(uid)]),
                     "measure your store")
    shared = {digest.replace(":", "-") for digest in _tags(None).values()}
    roots = [root for root in _directories(f"{STORE}/rootfs/{uid}")
             if DIGEST.fullmatch(os.path.basename(root).replace("-", ":", 1)) and os.path.basename(root) not in shared]
    unpacked = run_tool(["du", "--summarize", "--total", "--block-size=1", *roots], "measure your unpacked images") \
        if roots else "0"
    return int(store.split()[0]) + int(unpacked.split()[-2 if roots else 0])


def _unpacked_bytes(image: StoredImage, limit: int) -> int:
    """What `image` of a member's takes unpacked, at most; a number past `limit` once it is more."""
    blobs = _open_beneath(image.layout, "blobs", "sha256")
    opened: list[tuple[int, str]] = []
    try:
        opened.append((_open_blob(blobs, image, image.digest), image.digest))
        manifest = read_as_nobody(opened, "manifest")
        layers, config_bytes = manifest.get("layers"), manifest.get("config_bytes")
        if not isinstance(layers, list) or len(layers) > MAX_LAYERS or type(config_bytes) is not int \
                or not all(isinstance(layer, str) and DIGEST.fullmatch(layer) for layer in layers):
            raise ImageError(f"could not read image {image.reference}: {_why(manifest)}")
        opened += [(_open_blob(blobs, image, layer), layer) for layer in layers]
        counted = read_as_nobody(opened[1:], "unpacked-bytes", str(limit))
    finally:
        for fd, _ in opened:
            os.close(fd)
        os.close(blobs)
    found = counted.get("bytes")
    if type(found) is not int or found < 0:
        raise ImageError(f"could not measure image {image.reference}: {_why(counted)}")
    return found + config_bytes


def _open_blob(blobs: int, image: StoredImage, digest: str) -> int:
    assert image.owner is not None
    return _open_file_of(blobs, digest.removeprefix("sha256:"), image.owner, f"image {image.reference}")


def _open_beneath(top: str, *names: str) -> int:
    """A descriptor on the directory `names` lead to from `top`, a member's: never through a symlink."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    for name in names:
        try:
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        except OSError as error:
            raise ImageError(f"your image store's {name} cannot be read: {error.strerror}") from None
        finally:
            os.close(fd)
        fd = inner
    return fd


def _open_file_of(directory: int, name: str, owner: int, what: str) -> int:
    """A descriptor on the file `name` in the directory open at `directory`: a regular file of `owner`'s, opened
    without following a symlink or waiting on a FIFO."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=directory)
    except OSError as error:
        raise ImageError(f"{what} cannot be read: {error.strerror}") from None
    about = os.fstat(fd)
    if not stat.S_ISREG(about.st_mode) or about.st_uid != owner:
        os.close(fd)
        raise ImageError(f"{what} cannot be read: it is not a file of its owner's")
    return fd


def reader_as_nobody(opened: list[tuple[int, str]], command: str, *words: str) -> list[str]:
    """The command that runs vtopo.oci_layouts `command` on the files open at `opened` (fd, digest) as nobody."""
    return python_module_as(*owner_or_nobody(0), SUMMARY_BYTES, "vtopo.oci_layouts", command, *words,
                            *(f"{fd}={digest}" for fd, digest in opened))


def read_as_nobody(opened: list[tuple[int, str]], command: str, *words: str) -> dict[str, object]:
    """What vtopo.oci_layouts `command` says of the member's files open at `opened` (fd, digest), run as nobody (no
    group, no capability, no_new_privs) with those descriptors alone: one JSON object of at most SUMMARY_BYTES, read
    through the lab file's bounded decoder (vtopo.model.untrusted_json)."""
    try:
        printed = run_bounded(reader_as_nobody(opened, command, *words), SUMMARY_BYTES, TOOL_SECONDS,
                              pass_fds=[fd for fd, _ in opened])
    except subprocess.TimeoutExpired:
        raise ImageError(f"could not read your image store: it took longer than {TOOL_SECONDS:.0f} s") from None
    try:
        answer = untrusted_json.parse(printed.output.decode()) if not printed.status and printed.within_limit else None
    except (UnicodeDecodeError, LabError):
        answer = None
    if not isinstance(answer, dict):
        raise ImageError(f"could not read your image store: its reader ended with status {printed.status}")
    return answer


def _why(said: dict[str, object]) -> str:
    error = said.get("error")
    return error[:200] if isinstance(error, str) else "its reader said nothing of use"


def _record(uid: int, share_bytes: int) -> None:
    """Root's record of a member's store, beside it (readable, so that the member's own `validate` finds their
    images): whose it is, by their name, and the share of their images in force when they last loaded one, which
    unpacking one for a node may take."""
    content = json.dumps({"user": pwd.getpwuid(uid).pw_name, "share_bytes": share_bytes})
    write_file(_record_of(uid), content, READABLE_FILE)


def _record_of(uid: int) -> str:
    return f"{MEMBER_STORES}/{uid}.json"


def _recorded(uid: int) -> dict[str, object]:
    try:
        recorded = json.loads(read_small_file(_record_of(uid)))
    except (OSError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def _recorded_share(uid: int) -> int:
    share = _recorded(uid).get("share_bytes")
    return share if isinstance(share, int) else DEFAULT_SHARE_BYTES


def _theirs(uid: int) -> bool:
    """Whether the store of `uid` is the one its account loaded: a store is keyed by uid and the user's name, so that
    a user given the uid of one removed finds none of theirs (root's own listing shows neither)."""
    try:
        return _recorded(uid).get("user") == pwd.getpwuid(uid).pw_name
    except KeyError:
        return False


def forget_departed() -> list[str]:
    """Remove the stores of the uids that are no longer members (`vtopo cleanup`): no account, an account outside the
    vtopo group, or one of another name than the user who loaded the images (the uid given to someone else)."""
    removed = []
    for uid in _store_owners():
        if not _theirs(uid) or not in_group(uid, CLIENTS_GROUP):
            loaded_by = _recorded(uid).get("user", "no one recorded")
            with locked(uid):
                _forget(uid)
            removed.append(f"image store of uid {uid} (loaded by {loaded_by}, no longer a member)")
    return removed


def _store_owners() -> list[int]:
    try:
        names = os.listdir(MEMBER_STORES)
    except FileNotFoundError:
        return []
    return sorted({int(name.removesuffix(".json")) for name in names if name.removesuffix(".json").isdigit()})


def _forget(uid: int) -> None:
    """A member's store and its record gone: the files a departed user left, which no later user of the uid gets."""
    shutil.rmtree(layout_of(uid), ignore_errors=True)
    try:
        os.unlink(_record_of(uid))
    except FileNotFoundError:
        pass


def _remove_planted(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        os.unlink(path)


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


def _read_unpacked(directory: str, image: StoredImage) -> Unpacked:
    """The unpacked image's root and process, as root kept it (`_keep_process`; for a shared image, from root's own
    config.json)."""
    summary = f"{directory}/{PROCESS}"
    if image.owner is None and not os.path.exists(summary):  # unpacked by an earlier vtopo, from root's own files
        write_file(summary, json.dumps(process_of(read_json(f"{directory}/config.json"))))
    try:
        process = json.loads(read_small_file(summary, SUMMARY_BYTES))
    except FileNotFoundError:
        raise ImageError(f"image {image.reference} was unpacked by an earlier vtopo: destroy the lab and deploy it "
                         "again") from None
    return Unpacked(f"{directory}/rootfs", process)
