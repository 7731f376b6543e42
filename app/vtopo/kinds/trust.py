"""The rules for what a lab may put on the host outside its own objects. Pure: the host's facts come in as inputs.

The compiler calls them for every lab; a backend that hands the same things to another program (libvirt) calls
them too, so a rule is written once.
"""
from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

MIN_HOST_PREFIX = {4: 8, 6: 16}


def host_address_problem(address: str, host_networks: Iterable[str]) -> str | None:
    """Why `address` (with prefix) may not go on an interface in the host's own namespace, or None if it may.

    Such an address comes with a connected route; one that is more specific than, or equal to, a route the host
    already has would take the host's own traffic into the lab.
    """
    interface = ipaddress.ip_interface(address)
    ip, network = interface.ip, interface.network
    for label, special in (("a loopback", ip.is_loopback), ("a multicast", ip.is_multicast),
                           ("a link-local", ip.is_link_local), ("the unspecified", ip.is_unspecified),
                           ("a reserved", ip.version == 4 and ip.is_reserved)):
        if special:
            return f"{address} is {label} address, which a lab may not give the host"
    shortest = MIN_HOST_PREFIX[ip.version]
    if network.prefixlen < shortest:
        return (f"{address} has a /{network.prefixlen} prefix; in the host's own namespace a lab's prefix must be "
                f"/{shortest} or longer, or its route would take over the host's traffic to a large part of the "
                "Internet")
    theirs = overlapped(address, host_networks)
    if theirs is not None:
        return (f"{address} overlaps {theirs}, which the host already has (an address or route of its own); "
                "the host's traffic there would go into the lab. Pick a subnet this host does not use")
    return None


def overlapped(address: str, networks: Iterable[str]) -> str | None:
    """The first of `networks` (CIDR) that the subnet of `address` overlaps, or None: a route to either would take
    traffic meant for the other."""
    network = ipaddress.ip_interface(address).network
    for text in networks:
        theirs = ipaddress.ip_network(text)
        if theirs.version == network.version and theirs.overlaps(network):
            return str(theirs)
    return None


def held_by_lab_problem(address: str, lab: str, owner: str) -> str:
    """Why `address` may not go on an interface in the host's own namespace, when it overlaps what lab `lab` of
    `owner` gives the host. It says no more of that lab than `vtopo status` shows every member: its name and owner."""
    return (f"{address} overlaps an address or route that lab {lab} ({owner}'s), another lab deployed on this host, "
            "gives the host; the host's traffic to that lab would go into this one. Pick a subnet no deployed lab "
            "gives the host")


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
