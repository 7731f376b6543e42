"""What a process of no privilege reads out of an OCI image layout a member wrote, for root, who parses none of it.

Root opens the member's files (never through a symlink, never a FIFO, only regular files of theirs) and runs this
module as nobody (no group, no capability, no_new_privs, no file it may write, and before it reads anything not
dumpable, so that another reader run as nobody cannot reach it) with those descriptors alone, each given as FD=DIGEST
and checked against its digest (a blob's); it prints one JSON object, which root reads through the lab file's bounded
decoder (vtopo.model.untrusted_json) and checks field by field (vtopo.host.image_store):

    python -m vtopo.oci_layouts tags FD=                       FD: a layout's index.json -> {"tags": {REF: DIGEST}}
    python -m vtopo.oci_layouts process FD=                    FD: an image's runtime config.json -> {"process": {}}
    python -m vtopo.oci_layouts manifest FD=DIGEST             -> {"layers": [DIGEST...], "config_bytes": N}
    python -m vtopo.oci_layouts unpacked-bytes LIMIT FD=DIGEST...  -> {"bytes": N}

`unpacked-bytes` is what an image of those layers takes on disk when unpacked, at most: each file's data in whole
4 KiB blocks, and a block and its name for every entry and every directory it implies; counting stops once past
LIMIT, so that a layer that expands a thousandfold is read no further than that.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import posixpath
import re
import stat
import sys
import tarfile
from typing import BinaryIO

REF_ANNOTATION = "org.opencontainers.image.ref.name"
PR_SET_DUMPABLE = 4
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")  # the only digests root opens a blob by
REFERENCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}")
DOCUMENT_BYTES = 1 << 20  # an index, a manifest or a configuration
BLOCK = 4096
MANIFEST = "application/vnd.oci.image.manifest.v1+json"


class LayoutError(Exception):
    """A layout that cannot be read as an OCI image layout; the message says what is wrong."""


def tags_of(index: object) -> dict[str, str]:
    """reference -> manifest digest of a layout's index: a reference or digest of another shape than skopeo's is left
    out."""
    manifests = index.get("manifests") if isinstance(index, dict) else None
    tags = {}
    for manifest in manifests if isinstance(manifests, list) else []:
        annotations = manifest.get("annotations") if isinstance(manifest, dict) else None
        reference = annotations.get(REF_ANNOTATION) if isinstance(annotations, dict) else None
        digest = manifest.get("digest") if isinstance(manifest, dict) else None
        if isinstance(reference, str) and REFERENCE.fullmatch(reference) and isinstance(digest, str) \
                and DIGEST.fullmatch(digest):
            tags[reference] = digest
    return tags


def process_of(config: object) -> dict[str, object]:
    """The fields of a runtime configuration's process that vtopo uses, each of the type runc takes."""
    process = config.get("process") if isinstance(config, dict) else None
    process = process if isinstance(process, dict) else {}
    kept: dict[str, object] = {}
    for name in ("args", "env"):
        if isinstance(words := process.get(name), list) and all(isinstance(word, str) for word in words):
            kept[name] = words
    if isinstance(cwd := process.get("cwd"), str):
        kept["cwd"] = cwd
    if isinstance(user := process.get("user"), dict) and all(type(user.get(n)) is int for n in ("uid", "gid")):
        kept["user"] = {"uid": user["uid"], "gid": user["gid"]}
    return kept


def document(file: BinaryIO) -> object:
    """The JSON document of at most DOCUMENT_BYTES in `file`; None where it is longer or no JSON."""
    data = file.read(DOCUMENT_BYTES + 1)
    try:
        return json.loads(data) if len(data) <= DOCUMENT_BYTES else None
    except (ValueError, RecursionError):
        return None


class _Hashed:
    """A file read through, its bytes hashed as they go."""

    def __init__(self, file: BinaryIO):
        self.file, self.sha256 = file, hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.file.read(size)
        self.sha256.update(data)
        return data

    def digest(self) -> str:
        while self.read(1 << 20):
            pass
        return f"sha256:{self.sha256.hexdigest()}"


def _opened(fd: int) -> BinaryIO:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise LayoutError("a blob is not a file")
    return os.fdopen(fd, "rb")


def manifest_of(fd: int, digest: str) -> dict[str, object]:
    """What unpacking the image of the manifest open at `fd` reads: its layers' digests, and its configuration's size."""
    with _opened(fd) as file:
        hashed = _Hashed(file)
        manifest = document(hashed)  # type: ignore[arg-type]
        if hashed.digest() != digest or not isinstance(manifest, dict):
            raise LayoutError(f"blob {digest} is not the document its digest names")
    config, layers = manifest.get("config"), manifest.get("layers")
    if manifest.get("mediaType", MANIFEST) != MANIFEST or not isinstance(config, dict) or not isinstance(layers, list) \
            or not all(isinstance(layer, dict) and isinstance(layer.get("digest"), str) for layer in layers):
        raise LayoutError(f"{digest} is not an image manifest")
    size = config.get("size")
    return {"layers": [layer["digest"] for layer in layers],
            "config_bytes": size if type(size) is int and 0 <= size <= DOCUMENT_BYTES else DOCUMENT_BYTES}


def unpacked_bytes(layers: list[tuple[int, str]], limit: int) -> int:
    """What the layers open at their descriptors, each (fd, digest), take on disk unpacked, at most; a number past
    `limit` once it is more."""
    total = 0
    directories: set[str] = set()
    for fd, digest in layers:
        total = _layer_bytes(fd, digest, total, limit, directories)
        if total > limit:
            break
    return total


def _layer_bytes(fd: int, digest: str, total: int, limit: int, directories: set[str]) -> int:
    with _opened(fd) as file:
        hashed = _Hashed(file)
        try:
            with tarfile.open(fileobj=hashed, mode="r|*") as layer:  # type: ignore[call-overload]
                for entry in layer:
                    total += _entry_bytes(entry, directories)
                    if total > limit:
                        return total
        except (tarfile.TarError, OSError, EOFError) as error:
            raise LayoutError(f"layer {digest} is not a tar stream vtopo can read: {error}") from None
        if hashed.digest() != digest:
            raise LayoutError(f"layer {digest} is not the file its digest names")
    return total


def _entry_bytes(entry: tarfile.TarInfo, directories: set[str]) -> int:
    """A block and the name of the entry and of each directory it implies not counted yet; a regular file's data in
    whole blocks."""
    path = posixpath.normpath(f"/{entry.name}").lstrip("/")
    found = BLOCK + len(path)
    parent = posixpath.dirname(path)
    while parent and parent not in directories:
        directories.add(parent)
        found += BLOCK + len(parent)
        parent = posixpath.dirname(parent)
    if entry.isreg():
        found += -(-entry.size // BLOCK) * BLOCK
    return found


def undumpable() -> None:
    """No other process of nobody's (another member's files being read at the same time) may trace this one, or open
    its memory or descriptors: the kernel lets only a process that may dump this one's core do that."""
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0)")


def main(argv: list[str]) -> int:
    undumpable()
    command, *words = argv
    limit = int(words.pop(0)) if command == "unpacked-bytes" else 0
    opened = [(int(fd), digest) for fd, _, digest in (word.partition("=") for word in words)]
    try:
        if command == "manifest":
            answer = manifest_of(*opened[0])
        elif command == "unpacked-bytes":
            answer = {"bytes": unpacked_bytes(opened, limit)}
        elif command in ("tags", "process"):
            with _opened(opened[0][0]) as file:
                found = document(file)
            answer = {"tags": tags_of(found)} if command == "tags" else {"process": process_of(found)}
        else:
            raise LayoutError(f"no such command: {command}")
    except LayoutError as error:
        answer = {"error": str(error)}
    sys.stdout.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
