"""Namespaces that vtopo's own process cannot make: those inside a lab's user namespace (a threaded process may not
enter one), and each node's mount and UTS namespaces. A helper process (vtopo.host.namespace_helper) makes them and
hands their files back; this side keeps each by a bind mount, as `ip netns` keeps a network namespace.

The files live in the lab's namespaces directory, a private tmpfs of its own: a node's mount namespace is a copy of
the host's, and a bind mount of its file that propagated into such a copy would hold namespaces in a loop. A tmpfs
also makes the two empty files each node's namespaces are bound on in memory: on a host whose /run lies on a disk's
file system, creating and deleting them cost 0.3-0.5 ms each.
"""
from __future__ import annotations

import fcntl
import functools
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from vtopo.host import netns as namespaces
from vtopo.host import syscalls
from vtopo.host.errors import HostError
from vtopo.host.owned_files import PASSAGE, make_directory
from vtopo.host.syscalls import MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE
from vtopo.ops import NETNS_DIR, NODE_TMPFS

HELPER_SECONDS = 30.0
MAX_ANSWER = 4096


class NamespaceError(HostError):
    """The helper could not make a namespace; the message says which and why."""


class NamespaceMaker:
    """One helper process, in the host's user namespace or in one lab's."""

    def __init__(self, mode: str, userns: str, namespaces_dir: str) -> None:
        """`namespaces_dir` is where the files of user, mount and UTS namespaces are kept (LabNames.namespaces_dir)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.settimeout(HELPER_SECONDS)
        self._channel = ours
        with theirs:
            self._process = subprocess.Popen([sys.executable, "-m", "vtopo.host.namespace_helper",
                                              str(theirs.fileno()), mode, userns,
                                              *(path for path in (NETNS_DIR, namespaces_dir) if _is_mount_point(path))],
                                             pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)

    @classmethod
    def in_initial(cls, namespaces_dir: str) -> NamespaceMaker:
        """A maker in the initial user namespace, where root's labs live."""
        maker = cls("initial", "", namespaces_dir)
        maker._expect(b"ready")
        return maker

    @classmethod
    def in_user_namespace(cls, path: str) -> NamespaceMaker:
        maker = cls("enter-user", path, os.path.dirname(path))
        maker._expect(b"ready")
        return maker

    @classmethod
    def new_user_namespace(cls, path: str, uid: int, gid: int) -> NamespaceMaker:
        """A user namespace where `uid` and `gid` are root, kept at `path`; the maker works inside it."""
        maker = cls("new-user", "", os.path.dirname(path))
        try:
            maker._expect(b"unshared")
            pid = maker._process.pid
            Path(f"/proc/{pid}/uid_map").write_text(f"0 {uid} 1\n")
            Path(f"/proc/{pid}/gid_map").write_text(f"0 {gid} 1\n")
            keep(f"/proc/{pid}/ns/user", path)
            maker._channel.send(b"mapped")
            maker._expect(b"ready")
        except BaseException:
            maker.close()
            raise
        return maker

    def network_namespace(self, name: str) -> None:
        """A new network namespace, kept at /run/netns/NAME."""
        (fd,) = self._ask({"op": "net"}, [], 1, f"create network namespace {name}")
        try:
            namespaces.attach_netns(name, fd)
        finally:
            os.close(fd)

    def isolate(self, netns: str, hostname: str, hosts_file: str, mount_ns: str, uts_ns: str,
                binds: tuple[tuple[str, str], ...] = (), files: tuple[tuple[str, str], ...] = ()) -> None:
        """The node's mount and UTS namespaces, kept at `mount_ns` and `uts_ns`, with `binds` (host directory, path
        inside) and `files` (path inside, content) of its own (see IsolateNode)."""
        given = [namespaces.open_netns(netns), os.open(hosts_file, os.O_RDONLY | os.O_NOFOLLOW)]
        request = {"op": "node", "hostname": hostname, "keep": vtopos_own_paths(), "binds": [list(b) for b in binds],
                   "files": [list(f) for f in files]}
        try:
            mount, uts = self._ask(request, given, 2, f"make {hostname} a container")
        finally:
            for fd in given:
                os.close(fd)
        try:
            keep(f"/proc/self/fd/{mount}", mount_ns)
            keep(f"/proc/self/fd/{uts}", uts_ns)
        except BaseException:
            remove([mount_ns, uts_ns])
            raise
        finally:
            os.close(mount)
            os.close(uts)

    def close(self) -> None:
        self._channel.close()
        try:
            self._process.wait(HELPER_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _expect(self, word: bytes) -> None:
        try:
            said = self._channel.recv(MAX_ANSWER)
        except OSError as error:
            said = str(error).encode()
        if said != word:
            self.close()
            raise NamespaceError(f"the namespace helper did not start (it said {said!r}, exit status "
                                 f"{self._process.returncode})")

    def _ask(self, request: Mapping[str, object], fds: list[int], expected: int, what: str) -> list[int]:
        socket.send_fds(self._channel, [json.dumps(request).encode()], fds)
        message, received, _, _ = socket.recv_fds(self._channel, MAX_ANSWER, expected)
        answer = json.loads(message) if message else {"error": "the namespace helper ended"}
        if "error" in answer or len(received) != expected:
            for fd in received:
                os.close(fd)
            raise NamespaceError(f"could not {what}: {answer.get('error', 'no namespace came back')}")
        return received


@functools.cache
def vtopos_own_paths() -> tuple[str, ...]:
    """Where vtopo's own Python and code lie under a directory each node gets empty (a checkout under /tmp): what
    vtopo runs inside nodes (its request/response server) must still find them there. Looked up once per process."""
    private = tuple(f"{path}/" for path in NODE_TMPFS)
    found = sorted({os.path.realpath(path) for path in (sys.prefix, *sys.path) if path and os.path.isdir(path)})
    inside = [path for path in found if path.startswith(private)]
    return tuple(path for path in inside if not any(path.startswith(f"{other}/") for other in inside))


_private_dirs: set[tuple[int, int]] = set()
_directory_lock = threading.Lock()  # the agent's labs share one namespaces directory: one thread mounts or releases it


@contextmanager
def _held(directory: str) -> Iterator[bool]:
    """The namespaces `directory` mounted or released by one thread of one process at a time: the agent's threads,
    and root's own vtopo commands deploying and destroying beside it, hold a lock on the directory it lies in. Yields
    whether that directory is there."""
    with _directory_lock:
        try:
            parent = os.open(os.path.dirname(directory), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            yield False
            return
        try:
            fcntl.flock(parent, fcntl.LOCK_EX)
            yield True
        finally:
            os.close(parent)


def keep(namespace_file: str, path: str) -> None:
    """Bind-mount `namespace_file` on `path`, a new empty file in a private directory."""
    directory = os.path.dirname(path)
    if not os.path.isdir(os.path.dirname(directory)):
        make_directory(os.path.dirname(directory), PASSAGE, exist_ok=True)
    with _held(directory):
        private_directory(directory)
        os.close(os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0))
        try:
            syscalls.mount(namespace_file, path, None, MS_BIND)
        except BaseException:
            os.unlink(path)
            raise


def private_directory(path: str) -> None:
    """`path` a private mount, once per process: a tmpfs of its own, or as it is when a mount is there already (one
    another vtopo made)."""
    try:
        identity = os.stat(path)
        if (identity.st_dev, identity.st_ino) in _private_dirs:
            return
    except FileNotFoundError:
        pass
    make_directory(path, PASSAGE, exist_ok=True)
    if not _is_mount_point(path):
        syscalls.mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, f"mode={PASSAGE:o}")
    syscalls.mount("", path, None, MS_PRIVATE)
    mounted = os.stat(path)
    _private_dirs.add((mounted.st_dev, mounted.st_ino))


def _is_mount_point(path: str) -> bool:
    """Whether the mount `path` resolves to has its root there. /proc/self/mountinfo is no answer: it lists mounts
    hidden under one on a parent directory too (a simulated host's /run/vtopo over the host's own), and making such a
    path private fails (EINVAL)."""
    try:
        return _mount_id(path) != _mount_id(os.path.dirname(path))
    except FileNotFoundError:
        return False


def _mount_id(path: str) -> int:
    fd = os.open(path, os.O_PATH)
    try:
        with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as info:
            return next(int(line.split()[1]) for line in info if line.startswith("mnt_id:"))
    finally:
        os.close(fd)


def remove(paths: list[str]) -> None:
    """Unmount and remove namespace files; each namespace ends once nothing else holds it."""
    for path in paths:
        syscalls.umount(path)
        Path(path).unlink(missing_ok=True)


def release_directory(path: str) -> None:
    """Remove the namespaces directory once it keeps nothing: unmount it and delete it."""
    with _held(path) as there:
        try:
            if not there or os.listdir(path):
                return
        except FileNotFoundError:
            return
        while _is_mount_point(path):
            syscalls.umount(path)
        _private_dirs.clear()
        os.rmdir(path)
