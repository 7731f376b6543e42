"""The namespace and mount system calls that Python's os module lacks, through libc."""
from __future__ import annotations

import ctypes
import fcntl
import os
import struct

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NAMES = {"CLONE_NEWNS": CLONE_NEWNS, "CLONE_NEWUTS": CLONE_NEWUTS, "CLONE_NEWUSER": CLONE_NEWUSER,
               "CLONE_NEWNET": CLONE_NEWNET}
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MS_SLAVE = 1 << 19
MS_SHARED = 1 << 20
MNT_DETACH = 2
NS_GET_MNTNS_ID = 0x8008B705  # _IOR(0xb7, 5, __u64), Linux 6.9
SYS_MOUNT_SETATTR = 442  # Linux 5.12, numbered alike on every architecture since 4.20's common table
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
_libc.sethostname.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
_libc.syscall.restype = ctypes.c_long


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64), ("propagation", ctypes.c_uint64),
                ("userns_fd", ctypes.c_uint64)]


def _names(flags: int) -> str:
    return "|".join(name for name, bit in CLONE_NAMES.items() if flags & bit) or f"{flags:#x}"


def _checked(result: int, operation: str) -> None:
    """Raise the OSError of a refused call; its filename is the call with what it was given (`operation`)."""
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), operation)


def mount(source: str, target: str, fstype: str | None, flags: int, options: str = "") -> None:
    _checked(_libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                         options.encode() or None), f"mount {source} on {target}")


def set_read_only(target: str, read_only: bool, recursive: bool) -> None:
    """Make the mount on `target` (and every mount below it when `recursive`) read-only, or writable again."""
    attributes = _MountAttr(MOUNT_ATTR_RDONLY if read_only else 0, 0 if read_only else MOUNT_ATTR_RDONLY, 0, 0)
    result = _libc.syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), ctypes.c_char_p(target.encode()),
                           ctypes.c_uint(AT_RECURSIVE if recursive else 0), ctypes.byref(attributes),
                           ctypes.c_size_t(ctypes.sizeof(attributes)))
    _checked(int(result), f"mount_setattr {'ro' if read_only else 'rw'} on {target}")


def umount(target: str) -> bool:
    """Detach the mount on `target`; False when nothing is mounted there."""
    return _libc.umount2(target.encode(), MNT_DETACH) == 0


def unshare(flags: int) -> None:
    _checked(_libc.unshare(flags), f"unshare {_names(flags)}")


def setns(fd: int, kind: int) -> None:
    _checked(_libc.setns(fd, kind), f"setns {_names(kind)}")


def mount_namespace_id(path: str) -> int | None:
    """The kernel's id of the mount namespace whose file is `path`; None from a kernel that does not say."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return int(struct.unpack("Q", fcntl.ioctl(fd, NS_GET_MNTNS_ID, bytes(8)))[0])
    except OSError:
        return None
    finally:
        os.close(fd)


def sethostname(name: str) -> None:
    encoded = name.encode()
    _checked(_libc.sethostname(encoded, len(encoded)), "sethostname")


M_MMAP_THRESHOLD = -3
_libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]


def keep_large_blocks_mapped(threshold: int = 128 << 10) -> None:
    """Serve every block of `threshold` bytes or more with its own mapping, returned to the system when freed.
    By default glibc raises the threshold each time such a block is freed, after which large blocks come from arenas
    that keep their memory: a flood of large requests would leave a long-running process hundreds of MiB larger."""
    if _libc.mallopt(M_MMAP_THRESHOLD, threshold) != 1:
        raise OSError("mallopt(M_MMAP_THRESHOLD) refused")
