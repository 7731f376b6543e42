"""Named network namespaces, kept the way `ip netns` keeps them, without forking.

A namespace is a bind mount of a namespace file on /run/netns/NAME. Namespace membership is
per thread, so `entered()` moves only the calling thread and puts it back afterwards.
"""
from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from vtopo.host import syscalls
from vtopo.host.errors import HostError
from vtopo.host.processes import kill_each
from vtopo.host.syscalls import CLONE_NEWNET, MS_BIND, MS_REC, MS_SHARED
from vtopo.ops import NETNS_DIR as NETNS_RUN_DIR

ENDING_ROUNDS = 3
THREAD_NETNS = "/proc/thread-self/ns/net"


class NetlinkError(HostError):
    """A host networking operation the kernel refused, with its errno as `code`.

    Defined here, below `vtopo.host.netlink` which re-exports it, so that both modules raise it.
    """

    def __init__(self, operation: str, kernel_message: str, code: int = 0) -> None:
        super().__init__(f"{operation}: {kernel_message}")
        self.operation = operation
        self.kernel_message = kernel_message
        self.code = code


class NetnsNotFoundError(NetlinkError):
    """The named network namespace does not exist."""


def _error(operation: str, code: int) -> NetlinkError:
    cls = NetnsNotFoundError if code == errno.ENOENT else NetlinkError
    return cls(operation, os.strerror(code), code)


@contextmanager
def _as_netlink_error(operation: str) -> Iterator[None]:
    try:
        yield
    except OSError as error:
        raise NetlinkError(operation, os.strerror(error.errno or errno.EIO), error.errno or errno.EIO) from None


def netns_path(name: str) -> str:
    """The bind-mount path of namespace `name`; rejects names that are not a plain file name."""
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise ValueError(f"invalid network namespace name {name!r}")
    return f"{NETNS_RUN_DIR}/{name}"


def open_netns(name: str) -> int:
    """Open namespace `name` read-only and return the file descriptor (the caller closes it)."""
    try:
        return os.open(netns_path(name), os.O_RDONLY)
    except OSError as e:
        raise _error(f"open netns {name}", e.errno or errno.EIO) from e


_shared_run_dir: list[tuple[int, int]] = []  # (st_dev, st_ino) of the run dir this process made a shared mount


def _share_run_dir() -> None:
    """As iproute2 does: make the run dir a shared mount so bind mounts propagate to other mount namespaces. Once
    per directory: the recursive flag change walks every namespace already mounted there."""
    os.makedirs(NETNS_RUN_DIR, exist_ok=True)
    identity = os.stat(NETNS_RUN_DIR)
    if (identity.st_dev, identity.st_ino) in _shared_run_dir:
        return
    try:
        syscalls.mount("", NETNS_RUN_DIR, None, MS_SHARED | MS_REC)
    except OSError:  # not a mount point yet
        with _as_netlink_error(f"share {NETNS_RUN_DIR}"):
            syscalls.mount(NETNS_RUN_DIR, NETNS_RUN_DIR, None, MS_BIND | MS_REC)
            syscalls.mount("", NETNS_RUN_DIR, None, MS_SHARED | MS_REC)
    shared = os.stat(NETNS_RUN_DIR)  # the bind mount, when one was needed
    _shared_run_dir.append((shared.st_dev, shared.st_ino))


def create_netns(name: str, inside: Callable[[], None] | None = None) -> None:
    """Create namespace `name` like `ip netns add`: unshare in this thread, bind-mount it, switch back.

    `inside` runs in the new namespace before the switch back: what opens a socket there saves entering it again."""
    operation = f"create netns {name}"
    path = _placeholder(name)
    try:
        home = os.open(THREAD_NETNS, os.O_RDONLY)
        try:
            with _as_netlink_error(operation):
                syscalls.unshare(CLONE_NEWNET)
            try:
                with _as_netlink_error(operation):
                    syscalls.mount(THREAD_NETNS, path, None, MS_BIND)
                if inside is not None:
                    inside()
            finally:
                with _as_netlink_error(f"{operation}: return to the original netns"):
                    syscalls.setns(home, CLONE_NEWNET)
        finally:
            os.close(home)
    except BaseException:
        syscalls.umount(path)
        os.unlink(path)
        raise


def _placeholder(name: str) -> str:
    """The empty file that namespace `name` is going to be bind-mounted on (it must not exist yet): its path."""
    path = netns_path(name)
    _share_run_dir()
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0))
    except OSError as e:
        raise _error(f"create netns {name}", e.errno or errno.EIO) from e
    return path


def attach_netns(name: str, namespace_fd: int) -> None:
    """Keep the network namespace open on `namespace_fd` as `name`, as `ip netns attach` does."""
    path = _placeholder(name)
    try:
        with _as_netlink_error(f"create netns {name}"):
            syscalls.mount(f"/proc/self/fd/{namespace_fd}", path, None, MS_BIND)
    except BaseException:
        os.unlink(path)
        raise


def delete_netns(name: str) -> None:
    """Delete namespace `name` like `ip netns del`; it dies once nothing else holds it."""
    path = netns_path(name)
    syscalls.umount(path)  # fails harmlessly when missing or not mounted
    try:
        os.unlink(path)
    except OSError as e:
        raise _error(f"delete netns {name}", e.errno or errno.EIO) from e


def list_netns() -> list[str]:
    """Names of the namespaces under /run/netns, sorted."""
    try:
        return sorted(os.listdir(NETNS_RUN_DIR))
    except FileNotFoundError:
        return []


def netns_exists(name: str) -> bool:
    return os.path.exists(os.path.join(NETNS_RUN_DIR, name))


def pids_in(name: str) -> list[int]:
    """The processes living in namespace `name` (this one excepted): what runs inside a container or router."""
    return pids_in_each([name]).get(name, [])


def end_processes_in(names: set[str]) -> None:
    """Kill whatever runs in these namespaces: it would keep a deleted namespace alive, or a restarted node running
    what ran before. One pass over /proc serves all of them, and passes go on until one finds nothing, since a
    process may fork while the others die."""
    for _ in range(ENDING_ROUNDS):
        pids = [pid for found in pids_in_each(names).values() for pid in found]
        if not pids:
            return
        kill_each(pids)


def pids_in_each(names: Iterable[str]) -> dict[str, list[int]]:
    """The processes living in each of the namespaces `names` (this one excepted), from one pass over /proc."""
    named = {}
    for name in names:
        try:
            target = os.stat(netns_path(name))
        except OSError:
            continue
        named[(target.st_dev, target.st_ino)] = name
    found: dict[str, list[int]] = {name: [] for name in named.values()}
    if not named:
        return found
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            namespace = os.stat(f"/proc/{entry.name}/ns/net")
        except OSError:  # gone meanwhile, or a kernel thread
            continue
        holder = named.get((namespace.st_dev, namespace.st_ino))
        if holder is not None:
            found[holder].append(int(entry.name))
    return found


@contextmanager
def entered(name: str | None) -> Iterator[None]:
    """Run the calling thread inside namespace `name` for the block (None: stay where it is)."""
    if name is None:
        yield
        return
    target = open_netns(name)
    try:
        home = os.open(THREAD_NETNS, os.O_RDONLY)
        try:
            with _as_netlink_error(f"enter netns {name}"):
                syscalls.setns(target, CLONE_NEWNET)
            try:
                yield
            finally:
                with _as_netlink_error(f"leave netns {name}"):
                    syscalls.setns(home, CLONE_NEWNET)
        finally:
            os.close(home)
    finally:
        os.close(target)
