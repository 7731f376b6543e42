"""Disk images are opened by vtopo: a regular file, never a symlink, device or pipe, and a qcow2 only if it is
self-contained."""
from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from vtopo.host.images import QCOW2_MAGIC, ImageRefused, open_image


def _qcow2(path: Path, backing_offset: int = 0, incompatible: int = 0) -> Path:
    header = QCOW2_MAGIC + struct.pack(">IQ", 3, backing_offset) + bytes(56) + struct.pack(">Q", incompatible)
    path.write_bytes(header + bytes(512))
    return path


def test_a_regular_image_is_opened_read_only(tmp_path: Path) -> None:
    image = tmp_path / "disk.img"
    image.write_bytes(b"boot" + bytes(1020))
    fd = open_image(str(image))
    try:
        assert os.read(fd, 4) == b"boot"
        with pytest.raises(OSError):
            os.write(fd, b"x")
    finally:
        os.close(fd)
    os.close(open_image(str(_qcow2(tmp_path / "plain.qcow2"))))


@pytest.mark.parametrize("case", ["symlink", "fifo", "device", "directory", "backing", "external-data"])
def test_anything_but_a_self_contained_file_is_refused(tmp_path: Path, case: str) -> None:
    path = tmp_path / case
    if case == "symlink":
        path.symlink_to("/etc/hostname")
    elif case == "fifo":
        os.mkfifo(path)
    elif case == "device":
        path = Path("/dev/null")
    elif case == "directory":
        path.mkdir()
    elif case == "backing":
        _qcow2(path, backing_offset=512)
    else:
        _qcow2(path, incompatible=1 << 2)
    with pytest.raises(ImageRefused):
        os.close(open_image(str(path)))
