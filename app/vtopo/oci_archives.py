"""OCI and docker archives, as `vtopo image load` reads them before anything else does: which of the two a file is,
and the reference it names. The caller's own process reads it (a member's client, before the agent gets the archive
as a descriptor), so this lies below both the client and the host layer."""
from __future__ import annotations

import json
import tarfile
from typing import IO

from vtopo.oci_layouts import REF_ANNOTATION


class ArchiveError(Exception):
    """A file that cannot be read, or is no OCI or docker archive; the message names it."""


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
    except (FileNotFoundError, PermissionError, IsADirectoryError) as error:
        raise ArchiveError(f"cannot read {path}: {error.strerror}") from None
    except (OSError, tarfile.TarError, ValueError, KeyError, IndexError, TypeError) as error:
        raise ArchiveError(f"{path} is not an OCI or docker archive: {error}") from None
    raise ArchiveError(f"{path} is neither an OCI archive (no oci-layout) nor a docker archive (no manifest.json)")


def _member(archive: tarfile.TarFile, name: str) -> IO[bytes]:
    file = archive.extractfile(name)
    if file is None:
        raise KeyError(name)
    return file
