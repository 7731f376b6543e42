"""The rule for the disk image a VM boots: the built-in guest, a file in vtopo's images directory, or a file the user
allowed by its path. Pure: the images directory and the user's consent come in as inputs. vtopo.kinds.api hands it
to a plugin when a hook first names it, so a lab without VMs does not load it."""
from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass


BUILTIN_IMAGE = "builtin"
IMAGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
"""A file in vtopo's images directory, named without a path."""
OPTION_SYNTAX = re.compile(r"[,:=\\\"'\s]")
"""What QEMU or a shell could read as more than a file name: option separators and protocol prefixes."""


def image_path(image: str, images_dir: str) -> str:
    """The absolute path of a lab's (non-builtin) image: a bare name lives in the images directory."""
    return os.path.join(images_dir, image) if IMAGE_NAME.fullmatch(image) else os.path.normpath(image)


@dataclass(frozen=True)
class ImageRefusal:
    """Why a node may not boot the disk image it names."""

    message: str
    consent_path: str = ""  # set when the user's --allow-image of this path would clear it


def image_problem(image: str, images_dir: str, allowed: Iterable[str]) -> ImageRefusal | None:
    """Why a VM may not boot `image`, or None if it may.

    An image is the built-in guest, a file named without a path in vtopo's images directory, or a file the user
    allowed by its absolute path (on the command line or in the designer). Device nodes and other non-regular
    files are refused by the host layer when it opens the image.
    """
    if image == BUILTIN_IMAGE:
        return None
    if OPTION_SYNTAX.search(image):
        return ImageRefusal(f"image {image!r} holds a comma, colon, quote, '=' or space: a protocol prefix (json:, "
                            "fat:, nbd:...) or option syntax is never passed to QEMU. Name a file in the images "
                            f"directory ({images_dir}), or give an absolute path")
    if IMAGE_NAME.fullmatch(image):
        return None
    if not os.path.isabs(image) or ".." in image.split("/"):
        return ImageRefusal(f"image {image!r} must be a file name in the images directory ({images_dir}) or an "
                            "absolute path without '..'")
    path = os.path.normpath(image)
    if path.startswith("/dev/") or path.startswith("/proc/") or path.startswith("/sys/"):
        return ImageRefusal(f"image {image} is not a disk image file: devices and kernel files are never handed "
                            "to a VM")
    if os.path.dirname(path) == os.path.normpath(images_dir) or path in allowed:
        return None
    return ImageRefusal(f"image {path} is outside vtopo's images directory ({images_dir}); a lab file cannot choose "
                        f"a host file for a VM. To allow it, pass --allow-image {path} to vtopo deploy (the designer "
                        "asks)", consent_path=path)
