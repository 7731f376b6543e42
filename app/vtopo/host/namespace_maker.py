"""Namespaces that vtopo's own process cannot make: those inside a lab's user namespace (a threaded process may not
enter one), and each node's mount and UTS namespaces. A helper process (vtopo.host.namespace_helper) makes them and
hands their files back; this side keeps each by a bind mount, as `ip netns` keeps a network namespace.

The files live in the lab's namespaces directory, a private tmpfs of its own in the namespaces root, a private tmpfs
too: a node's mount namespace is a copy of the host's, and a bind mount of its file that propagated into such a copy
would hold namespaces in a loop. A tmpfs also makes the two empty files each node's namespaces are bound on in memory:
on a host whose /run lies on a disk's file system, creating and deleting them cost 0.3-0.5 ms each. And a lab's
teardown detaches its own directory, every file in it with it, in one unmount rather than one per file.
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
from collections import deque
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from vtopo.host import netns as namespaces
from vtopo.host import syscalls
from vtopo.host.errors import HostError
from vtopo.host.netlink import sysctl_path
from vtopo.host.owned_files import PASSAGE, PRIVATE, make_directory
from vtopo.host.processes import wait_child
from vtopo.host.syscalls import CLONE_NEWNS, MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE
from vtopo.ops import NETNS_DIR, NODE_TMPFS

HELPER_SECONDS = 30.0
MAX_ANSWER = 4096


class NamespaceError(HostError):
    """The helper could not make a namespace; the message says which and why."""


ENDING_THREADS = 16  # threads that let go of a lab's namespaces together (see remove_lab_directory)
AHEAD = 4  # requests the helper may have queued ahead of the ops (each has a descriptor or three in flight)


@dataclass(frozen=True)
class Node:
    """What makes a node a container (see IsolateNode): its hostname, the lab's hosts file, and `binds` (host
    directory, path inside) and `files` (path inside, content) of its own, and whether the host's other files are
    read-only inside."""

    hostname: str
    hosts_file: str
    binds: tuple[tuple[str, str], ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    host_read_only: bool = False

    def request(self) -> dict[str, object]:
        return {"hostname": self.hostname, "keep": vtopos_own_paths(), "binds": [list(b) for b in self.binds],
                "files": [list(f) for f in self.files], "host_read_only": self.host_read_only}

    def may_follow(self, made: Node | None) -> bool:
        """Whether this node may be made as soon as `made` was: what it needs beside its network namespace (the hosts
        file, the directories bound into it) was there for `made`."""
        return made is not None and self.hosts_file == made.hosts_file and \
            {directory for directory, _ in self.binds} <= {directory for directory, _ in made.binds}


@dataclass
class MadeAhead:
    """What the helper made ahead for one network namespace: its descriptor with an rtnetlink socket's opened in it,
    and the mount and UTS namespaces' of `node` made in it, or why not."""

    node: Node | None
    net: tuple[int, int] | None = None
    mount_and_uts: tuple[int, int] | None = None
    error: str = ""

    def close(self) -> None:
        """What is left of it ends with its descriptors."""
        for fd in [*(self.net or ()), *(self.mount_and_uts or ())]:
            os.close(fd)
        self.net = self.mount_and_uts = None


class NamespaceMaker:
    """One helper process, in the host's user namespace or in one lab's.

    Told which network namespaces are to come, in order, each with the node it becomes (`expect`), it asks the helper
    for the next ones while this side keeps, furnishes and links those made: a few requests ahead, each for a network
    namespace and, once a node like it was made as asked (the hosts file and the directories it binds are there), its
    node's mount and UTS namespaces too. What was made ahead is kept only when its operation comes; the rest ends with
    the maker."""

    def __init__(self, mode: str, userns: str, namespaces_dir: str, lo_alias: str) -> None:
        """`namespaces_dir` is where the files of the lab's user, mount and UTS namespaces are kept
        (LabNames.namespaces_dir); every lab's, in the directory above, are hidden from its nodes. `lo_alias`: the
        lab's tag, which lo carries in each network namespace made."""
        self._net_request = {"op": "net", "lo_alias": lo_alias}
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.settimeout(HELPER_SECONDS)
        self._channel = ours
        self._coming: deque[tuple[str, Node | None]] = deque()  # network namespaces to come, each with its node
        self._asked: deque[tuple[str, Node | None]] = deque()  # asked for ahead, their answers unread, in order
        self._made: dict[str, MadeAhead] = {}  # by network namespace
        self._last_node: Node | None = None  # the last node made when its operation came
        with theirs:
            self._process = subprocess.Popen([sys.executable, "-m", "vtopo.host.namespace_helper",
                                              str(theirs.fileno()), mode, userns,
                                              *(path for path in (NETNS_DIR, os.path.dirname(namespaces_dir))
                                                if _is_mount_point(path))],
                                             pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)

    @classmethod
    def in_initial(cls, namespaces_dir: str, lo_alias: str) -> NamespaceMaker:
        """A maker in the initial user namespace, where root's labs live."""
        maker = cls("initial", "", namespaces_dir, lo_alias)
        maker._expect(b"ready")
        return maker

    @classmethod
    def in_user_namespace(cls, path: str, lo_alias: str) -> NamespaceMaker:
        maker = cls("enter-user", path, os.path.dirname(path), lo_alias)
        maker._expect(b"ready")
        return maker

    @classmethod
    def new_user_namespace(cls, path: str, uid: int, gid: int, lo_alias: str) -> NamespaceMaker:
        """A user namespace where `uid` and `gid` are root, kept at `path`; the maker works inside it."""
        maker = cls("new-user", "", os.path.dirname(path), lo_alias)
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

    def expect(self, coming: list[tuple[str, Node | None]]) -> None:
        """The network namespaces to be asked for, in order, each with the node it becomes (None: it stays a bare
        network namespace, or becomes another kind of node)."""
        self._coming = deque(coming)

    def network_namespace(self, name: str) -> int:
        """A new network namespace, kept at /run/netns/NAME, its lo up with the lab's tag. Returns an rtnetlink socket
        opened inside it, for the caller to close."""
        what = f"create network namespace {name}"
        made = self._made_ahead(name)
        if made is None:
            self._coming = deque(coming for coming in self._coming if coming[0] != name)
            fd, rtnl = self._ask(self._net_request, [], 2, what)
        elif made.net is None:
            del self._made[name]
            raise NamespaceError(f"could not {what}: {made.error}")
        else:
            (fd, rtnl), made.net = made.net, None
            if made.mount_and_uts is None and not made.error:
                del self._made[name]
        try:
            namespaces.attach_netns(name, fd)
        except BaseException:
            os.close(rtnl)
            raise
        finally:
            os.close(fd)
        self._ask_ahead()
        return rtnl

    def isolate(self, netns: str, node: Node, mount_ns: str, uts_ns: str) -> None:
        """The node's mount and UTS namespaces, kept at `mount_ns` and `uts_ns` (see IsolateNode)."""
        what = f"make {node.hostname} a container"
        made = self._made.pop(netns, None)
        if made is not None and made.node == node and made.error:
            raise NamespaceError(f"could not {what}: {made.error}")
        if made is not None and made.node == node and made.mount_and_uts is not None:
            (mount, uts), made.mount_and_uts = made.mount_and_uts, None
        else:
            if made is not None:
                made.close()
            given = [namespaces.open_netns(netns), os.open(node.hosts_file, os.O_RDONLY | os.O_NOFOLLOW)]
            try:
                mount, uts = self._ask({"op": "node", **node.request()}, given, 2, what)
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
        self._last_node = node
        self._ask_ahead()

    def set_sysctl(self, netns: str, key: str, value: str) -> None:
        """Write the net.* sysctl `key` of network namespace `netns` from the helper, as it is (root of a lab's user
        namespace: the kernel judges the write with the lab's powers)."""
        request = {"op": "sysctl", "path": sysctl_path(key), "value": value}
        given = [namespaces.open_netns(netns)]
        try:
            self._ask(request, given, 0, f"set sysctl {key}={value} in {netns}")
        finally:
            os.close(given[0])

    def close(self) -> None:
        self._coming.clear()
        try:
            self._collect()
        except OSError:  # the helper ended, or does not answer: what it made ends with it
            pass
        for made in self._made.values():
            made.close()
        self._made.clear()
        self._channel.close()
        if wait_child(self._process, HELPER_SECONDS) is None:
            self._process.kill()
            self._process.wait()

    def _ask_ahead(self) -> None:
        """Ask for the namespaces to come, up to AHEAD unread; with the node of each that may follow the last."""
        while self._coming and len(self._asked) < AHEAD:
            name, node = self._coming.popleft()
            request: dict[str, object] = dict(self._net_request)
            given = []
            if node is not None and node.may_follow(self._last_node):
                try:
                    given.append(os.open(node.hosts_file, os.O_RDONLY | os.O_NOFOLLOW))
                    request["node"] = node.request()
                except OSError:  # gone meanwhile: its node is made when its operation comes, and says so
                    node = None
            else:
                node = None
            try:
                socket.send_fds(self._channel, [json.dumps(request).encode()], given)
            finally:
                for fd in given:
                    os.close(fd)
            self._asked.append((name, node))

    def _made_ahead(self, name: str) -> MadeAhead | None:
        """What was made ahead for network namespace `name`, its answer read now if need be; None if not asked."""
        if name not in self._made and any(asked == name for asked, _ in self._asked):
            self._collect(name)
        return self._made.get(name)

    def _collect(self, until: str | None = None) -> None:
        """Read the answers to what was asked for ahead, which come before any other: up to `until`'s, or all."""
        while self._asked:
            name, node = self._asked.popleft()
            message, received, _, _ = socket.recv_fds(self._channel, MAX_ANSWER, 4, socket.MSG_CMSG_CLOEXEC)
            answer = json.loads(message) if message else {"error": "the namespace helper ended"}
            made = self._made[name] = MadeAhead(node, error=answer.get("error", answer.get("node_error", "")))
            if len(received) in (2, 4) and "error" not in answer:
                made.net = (received[0], received[1])
                if len(received) == 4:
                    made.mount_and_uts = (received[2], received[3])
            else:
                for fd in received:
                    os.close(fd)
            if name == until:
                return

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
        self._collect()
        socket.send_fds(self._channel, [json.dumps(request).encode()], fds)
        message, received, _, _ = socket.recv_fds(self._channel, MAX_ANSWER, expected, socket.MSG_CMSG_CLOEXEC)
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
_directory_lock = threading.Lock()  # the agent's labs share the namespaces root: one thread mounts or releases it


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
    """Bind-mount `namespace_file` on `path`, a new empty file in a lab's namespaces directory."""
    _lab_directory(os.path.dirname(path))
    os.close(os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0))
    try:
        syscalls.mount(namespace_file, path, None, MS_BIND)
    except BaseException:
        os.unlink(path)
        raise


_keepable_cpus: list[frozenset[int]] = []  # found once per process
_keepable_lock = threading.Lock()


def cpus_whose_mount_namespaces_keep() -> frozenset[int] | None:
    """The CPUs where a mount namespace made now gets an id above this process's own, whose file `keep` can therefore
    bind here; None when every CPU this process runs on does. The kernel lets a mount namespace's file be bind-mounted
    only from a namespace of a lower id (mnt_ns_loop) and hands ids out in per-CPU batches, so that one made on another
    CPU than the keeper's may have a lower id though it is newer: with a keeper in a mount namespace of its own (a
    simulated host's agent, a machine in namespaces of its own), a process that makes its mount namespace itself
    (runc) must run on these CPUs. Found once per process: once a CPU gives an id above the keeper's it always does."""
    with _keepable_lock:
        if not _keepable_cpus:
            _keepable_cpus.append(_cpus_above())
        found = _keepable_cpus[0]
    if not found:
        raise NamespaceError("no CPU makes a mount namespace of an id above this process's, which it could keep")
    return None if os.sched_getaffinity(0) <= found else found


def _cpus_above() -> frozenset[int]:
    """The CPUs on which a new mount namespace's id is above the caller's, of all those of its cpuset (whatever
    affinity it inherited): each tried by a thread of its own (a thread may leave the process's mount namespace and
    come back to it), which ends with the try."""
    keeper = syscalls.mount_namespace_id("/proc/thread-self/ns/mnt")
    if keeper is None:  # a kernel that numbers mount namespaces in one sequence, and says nothing of their ids
        return frozenset(range(os.cpu_count() or 1))
    found: set[int] = set()
    failed: list[OSError] = []

    def try_each() -> None:
        home = os.open("/proc/thread-self/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        try:
            for cpu in range(os.cpu_count() or 1):
                try:
                    os.sched_setaffinity(0, {cpu})
                except OSError:
                    continue  # outside this process's cpuset, or offline
                syscalls.unshare(CLONE_NEWNS)
                try:
                    made = syscalls.mount_namespace_id("/proc/thread-self/ns/mnt")
                finally:
                    syscalls.setns(home, CLONE_NEWNS)
                if made is None or made > keeper:
                    found.add(cpu)
        except OSError as error:
            failed.append(error)
        finally:
            os.close(home)

    trier = threading.Thread(target=try_each, name="vtopo namespace ids")
    trier.start()
    trier.join()
    if failed:
        raise failed[0]
    return frozenset(found)




def _lab_directory(path: str) -> None:
    """The lab's namespaces directory `path` there, a private tmpfs that root alone may enter, in the namespaces root
    above it, a private tmpfs too. Under the lock on the root's parent: a teardown may be releasing the root."""
    if _private(path):
        return
    root = os.path.dirname(path)
    if not os.path.isdir(os.path.dirname(root)):
        make_directory(os.path.dirname(root), PASSAGE, exist_ok=True)
    with _held(root):
        private_directory(root)
        private_directory(path, PRIVATE)


def _private(path: str) -> bool:
    """Whether this process made `path` a private mount, or found it one."""
    try:
        identity = os.stat(path)
    except FileNotFoundError:
        return False
    return (identity.st_dev, identity.st_ino) in _private_dirs


def private_directory(path: str, mode: int = PASSAGE) -> None:
    """`path` a private mount, once per process: a tmpfs of its own of `mode`, or as it is when a mount is there
    already (one another vtopo made)."""
    if _private(path):
        return
    make_directory(path, mode, exist_ok=True)
    if not _is_mount_point(path):
        syscalls.mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, f"mode={mode:o}")
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


def remove_lab_directory(path: str) -> None:
    """Detach a lab's namespaces directory, every namespace file in it with it, and remove it; each namespace ends
    once nothing else holds it.

    The kernel frees a mount namespace only after an RCU grace period (0.5 ms here), which a thread waits for once per
    namespace: the files are held open while the directory is detached, and let go on ENDING_THREADS threads at once,
    whose namespaces end after the same grace periods."""
    try:
        identity = os.stat(path)
        held = [os.open(entry.path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC) for entry in os.scandir(path)]
    except FileNotFoundError:
        return
    try:
        _private_dirs.discard((identity.st_dev, identity.st_ino))
        while _is_mount_point(path):
            syscalls.umount(path)
        os.rmdir(path)
    finally:
        with ThreadPoolExecutor(ENDING_THREADS, thread_name_prefix="vtopo namespaces") as pool:
            for share in range(ENDING_THREADS):
                pool.submit(_close_all, held[share::ENDING_THREADS])


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


def release_directory(path: str) -> None:
    """Remove a directory of namespaces directories (the namespaces root) or of bundles once it holds none: unmount
    it and delete it."""
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
