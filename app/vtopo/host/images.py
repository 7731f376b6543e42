"""Disk images (and devices) for VMs: opened by vtopo, never by QEMU, so a lab can only ever hand a guest the file it
names.

The file must be a regular file reached without a symlink at its end, and a qcow2 image must be self-contained:
a backing file or an external data file would make QEMU open another path the lab chose.
"""
from __future__ import annotations

import os
import stat

QCOW2_MAGIC = b"QFI\xfb"
QCOW2_EXTERNAL_DATA = 1 << 2  # incompatible feature bit: the guest's data lives in another file


class ImageRefused(ValueError):
    pass


def open_image(path: str) -> int:
    """A read-only descriptor of the disk image at `path`, inheritable by a child; ImageRefused or OSError."""
    handle = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)  # opens nothing yet: no device is touched
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise ImageRefused(f"{path} is not a regular file (a device, directory, pipe or symlink is never given "
                               "to a VM)")
        fd = os.open(f"/proc/self/fd/{handle}", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(handle)
    try:
        _check_self_contained(path, os.pread(fd, 80, 0))
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_device(path: str) -> int:
    """A read-write descriptor of the character device at `path` (/dev/vhost-net), inheritable by a child."""
    fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    if not stat.S_ISCHR(os.fstat(fd).st_mode):
        os.close(fd)
        raise ImageRefused(f"{path} is not a character device")
    return fd


def _check_self_contained(path: str, header: bytes) -> None:
    if header[:4] != QCOW2_MAGIC or len(header) < 16:
        return
    version = int.from_bytes(header[4:8], "big")
    if int.from_bytes(header[8:16], "big"):
        raise ImageRefused(f"{path} is a qcow2 image with a backing file, which QEMU would open too; boot a "
                           "self-contained copy (qemu-img convert -O qcow2 IMAGE COPY)")
    if version >= 3 and len(header) >= 80 and int.from_bytes(header[72:80], "big") & QCOW2_EXTERNAL_DATA:
        raise ImageRefused(f"{path} is a qcow2 image whose data lives in an external file; boot a self-contained "
                           "copy (qemu-img convert -O qcow2 IMAGE COPY)")
