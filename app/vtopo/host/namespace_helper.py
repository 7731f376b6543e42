"""The process that makes a lab's namespaces for vtopo.host.namespace_maker, one request at a time on the socket it
gets as file descriptor FD. It runs single-threaded, which entering a user namespace needs (a threaded process may not).

    python -m vtopo.host.namespace_helper FD initial '' HIDDEN...       in the initial user namespace (root's lab)
    python -m vtopo.host.namespace_helper FD new-user '' HIDDEN...      in a new user namespace, whose maps the parent
                                                                       writes
    python -m vtopo.host.namespace_helper FD enter-user PATH HIDDEN...  in the user namespace kept at PATH

Each node's mount namespace is a copy of the helper's own, from which the HIDDEN mounts are gone (/run/netns and the
namespaces directory, which hold a mount per namespace of every lab): copying them for each node would cost time and
memory in proportion to the number of namespaces on the host.

Requests and answers are JSON messages on a SOCK_SEQPACKET socket, with namespace files passed as descriptors:
    {"op": "net", "lo_alias": TAG}            -> a new network namespace, its lo up with alias TAG, and an
                                                 rtnetlink socket opened inside it         [net fd, rtnl fd]
    {"op": "net", "lo_alias": TAG, "node": {"hostname": H, ...as "node"}}   [hosts]
                                              -> the same, and the node's mount and UTS namespaces made in it
                                                                         [net fd, rtnl fd, mnt fd, uts fd]
                                                 or, when the node could not be made, {"ok": true, "node_error":
                                                 "..."}                                    [net fd, rtnl fd]
    {"op": "node", "hostname": H, "keep": [PATH...], "binds": [[DIR, PATH]...], "files": [[PATH, TEXT]...],
     "host_read_only": BOOL}          [net, hosts]
                                              -> the node's mount and UTS namespaces     [mnt fd, uts fd]
       (each PATH of "keep" under a directory the node gets empty stays visible there: vtopo's own code; each DIR
       of "binds", a real directory, is bound at its PATH inside; each file of "files" is bound over its PATH; with
       "host_read_only", every mount of the host's is read-only inside, the node's own tmpfs and binds writable)
    {"op": "sysctl", "path": "net/ipv4/ip_forward", "value": V}   [net]
                                              -> /proc/sys/PATH of that network namespace written, as this process is
Every answer is {"ok": true} or {"error": "..."}.
"""
from __future__ import annotations

import errno
import functools
import json
import os
import socket
import sys
from collections.abc import Sequence
from typing import Any

from vtopo.host import rtnl_wire, syscalls
from vtopo.host.errors import os_error_line
from vtopo.host.syscalls import (CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWUTS, MS_BIND, MS_NODEV,
                                 MS_NOEXEC, MS_NOSUID, MS_REC, MS_SLAVE)
from vtopo.model.rules import NODE_FILES_DIR, NODE_KERNEL_FILES, NODE_TMPFS  # not from vtopo.ops, whose import took 2/3 of the start

MAX_MESSAGE = 4096
THREAD_NS = "/proc/thread-self/ns"
TMPFS_MODES = {"/run": "mode=0755"}
REPLACED_TRIES = 100  # binds over a file the host replaces under each one: one retry is rare, a hundred unheard of
NOBODY = 65534  # the overflow id: what every id outside a user namespace's map shows as inside  # the others are world-writable with the sticky bit, as /tmp is


def main(argv: list[str]) -> int:
    channel = socket.socket(fileno=int(argv[0]))
    mode, userns, hidden = argv[1], argv[2], argv[3:]
    keeper = syscalls.mount_namespace_id(f"{THREAD_NS}/mnt")  # the maker's, which keeps each node's by a bind mount
    user = os.open(userns, os.O_RDONLY) if mode == "enter-user" else -1  # before its directory is hidden below
    syscalls.unshare(CLONE_NEWNS)  # owned by the initial user namespace, which may unmount what is hidden
    syscalls.mount("", "/", None, MS_REC | MS_SLAVE)
    for path in hidden:
        syscalls.umount(path)
    if mode == "new-user":
        syscalls.unshare(CLONE_NEWUSER)
        channel.send(b"unshared")
        if channel.recv(MAX_MESSAGE) != b"mapped":
            return 1
        _become_root()
    elif mode == "enter-user":
        syscalls.setns(user, CLONE_NEWUSER)
        os.close(user)
        _become_root()
    if mode != "initial":  # a mount namespace of the lab's user namespace, to come back to after each node's
        syscalls.unshare(CLONE_NEWNS)
    base = os.open(f"{THREAD_NS}/mnt", os.O_RDONLY)
    channel.send(b"ready")
    while True:
        message, fds, _, _ = socket.recv_fds(channel, MAX_MESSAGE, 2)
        if not message:
            return 0
        try:
            request = json.loads(message)
            if request["op"] == "net":
                syscalls.unshare(CLONE_NEWNET)
                with _loopback_up(request["lo_alias"]) as rtnl:
                    if "node" in request:
                        _network_and_node(channel, request["node"], fds[0], mode, base, keeper, rtnl)
                    else:
                        _answer(channel, {"ok": True}, [f"{THREAD_NS}/net", rtnl])
            elif request["op"] == "sysctl":
                _write_sysctl(fds[0], request["path"], request["value"])
                _answer(channel, {"ok": True}, [])
            elif request["op"] == "node":
                try:
                    _node(request, fds[0], fds[1], mode, base, keeper)
                    _answer(channel, {"ok": True}, [f"{THREAD_NS}/mnt", f"{THREAD_NS}/uts"])
                finally:
                    syscalls.setns(base, CLONE_NEWNS)
            else:
                _answer(channel, {"error": f"no such request: {request['op']}"}, [])
        except (OSError, KeyError, IndexError, ValueError) as error:
            _answer(channel, {"error": _said(error)}, [])
        finally:
            for fd in fds:
                os.close(fd)


def _loopback_up(tag: str) -> socket.socket:
    """An rtnetlink socket in this thread's network namespace, whose lo it has brought up with alias `tag`: the lab's
    tag, by which cleanup finds the namespace. It goes to the maker, which then need not enter the namespace to open
    one (at 400 namespaces, 0.4 s of its time)."""
    rtnl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC, socket.NETLINK_ROUTE)
    try:
        rtnl_wire.loopback_up(rtnl, tag)
    except BaseException:
        rtnl.close()
        raise
    return rtnl


def _network_and_node(channel: socket.socket, node: dict[str, Any], hosts: int, mode: str, base: int,
                      keeper: int | None, rtnl: socket.socket) -> None:
    """Answer with the network namespace just made, the socket `rtnl` opened in it and the node's mount and UTS
    namespaces made in it; without them and with why, when the node could not be made."""
    try:
        netns = os.open(f"{THREAD_NS}/net", os.O_RDONLY)
        try:
            _node(node, netns, hosts, mode, base, keeper)
        finally:
            os.close(netns)
    except (OSError, KeyError, IndexError, ValueError) as error:
        _answer(channel, {"ok": True, "node_error": _said(error)}, [f"{THREAD_NS}/net", rtnl])
    else:
        _answer(channel, {"ok": True}, [f"{THREAD_NS}/net", rtnl, f"{THREAD_NS}/mnt", f"{THREAD_NS}/uts"])
    finally:
        syscalls.setns(base, CLONE_NEWNS)


def _write_sysctl(netns: int, path: str, value: str) -> None:
    """Write /proc/sys/PATH of the network namespace `netns` as this process is: in a lab's user namespace, its root,
    to whom the kernel grants nothing beyond the lab's namespaces (nor loads a module for)."""
    syscalls.setns(netns, CLONE_NEWNET)  # /proc/sys/net shows the namespace of the process that opens it
    with open(f"/proc/sys/{path}", "w", encoding="utf-8") as sysctl:
        sysctl.write(value)


def _said(error: Exception) -> str:
    return os_error_line(error) if isinstance(error, OSError) else str(error)


def _node(request: dict[str, Any], netns: int, hosts: int, mode: str, base: int, keeper: int | None) -> None:
    files = request.get("files", [])
    if mode != "initial":
        files = [*accounts_of_the_lab(), *files]
    _isolate(request["hostname"], netns, hosts, request.get("keep", []), base, keeper, request.get("binds", []),
             files)
    if request.get("host_read_only"):
        _host_read_only([path for _, path in request.get("binds", [])])


@functools.cache
def accounts_of_the_lab() -> tuple[tuple[str, str], ...]:
    """The node's /etc/passwd and /etc/group in a lab's user namespace, where only root (the lab's owner outside)
    and nobody exist: the host's accounts, each but nobody's given the ids of root, so that a program that drops to
    its own user (tcpdump to tcpdump, FRR's daemons to frr) becomes what it already is instead of failing. Read
    once, for every node of the lab."""
    accounts: list[tuple[str, str]] = []
    for path, ids in (("/etc/passwd", (2, 3)), ("/etc/group", (2,))):
        with open(path, encoding="utf-8", errors="replace") as file:
            lines = [line.rstrip("\n").split(":") for line in file if line.count(":") >= max(ids)]
        for fields in lines:
            for index in ids:
                fields[index] = fields[index] if fields[index] == str(NOBODY) else "0"
        accounts.append((path, "".join(":".join(fields) + "\n" for fields in lines)))
    return tuple(accounts)


def _become_root() -> None:
    """uid and gid 0 inside the user namespace, the lab's owner outside: what this process makes is the owner's."""
    os.setgroups([])
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)


def _isolate(hostname: str, netns: int, hosts: int, keep: list[str], base: int, keeper: int | None,
             binds: list[list[str]], files: Sequence[Sequence[str]]) -> None:
    """Unshare the node's mount and UTS namespaces while inside its network namespace, and furnish them; each of
    `keep` stays visible where it is, though the directory it lies under becomes the node's own; each directory of
    `binds` is bound at its path inside (opened before /run is hidden, never through a symlink), and each of `files`
    over its path."""
    syscalls.setns(netns, CLONE_NEWNET)
    _unshare_above(keeper, base)
    syscalls.mount("", "/", None, MS_REC | MS_SLAVE)
    syscalls.sethostname(hostname)
    try:  # the node's own interfaces under /sys/class/net, as `ip netns exec` shows them
        syscalls.mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except PermissionError:  # a kernel that refuses a fresh sysfs here: the host's stays, and `ip` is unaffected
        pass
    hosts_text = os.read(hosts, 1 << 24)
    kept = [(fd, path) for path in keep if (fd := _reachable(path)) is not None]
    bound = [(os.open(directory, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW), path) for directory, path in binds]
    for path in NODE_TMPFS:
        syscalls.mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, TMPFS_MODES.get(path, "mode=1777"))
    for fd, path in kept + bound:
        os.makedirs(path, exist_ok=True)  # within a tmpfs of the node's, or a directory the host has
        syscalls.mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)
    os.mkdir(NODE_FILES_DIR, 0o755)
    for path, content in [("/etc/hostname", f"{hostname}\n".encode()), ("/etc/hosts", hosts_text),
                          *((path, text.encode()) for path, text in files)]:
        copy = f"{NODE_FILES_DIR}/{os.path.basename(path)}"
        with open(copy, "wb") as file:
            file.write(content)
        os.chmod(copy, 0o644)
        _bind_over(copy, path)


def _bind_over(copy: str, path: str) -> None:
    """Bind the file `copy` over the file `path`, when there is one. The host may replace that file meanwhile, as
    useradd and groupadd rename a new /etc/group into place: the kernel refuses a mount on a file replaced after the
    mount looked it up (ENOENT though the path is there), and the file now there is bound over instead."""
    tries = REPLACED_TRIES
    while os.path.exists(path):
        try:
            syscalls.mount(copy, path, None, MS_BIND)
            return
        except FileNotFoundError:
            tries -= 1
            if not tries:
                raise


def _host_read_only(bound: list[str]) -> None:
    """Every mount of the node's read-only but its own, /tmp, /var/tmp, /run and the directories `bound` there, and
    the kernel's /proc and /sys, whose files the kernel itself guards (zebra's `ip forwarding` writes its network
    namespace's /proc/sys/net/ipv4/ip_forward; a host's process's /proc/PID/root is its own mount, not /proc's): what
    runs inside may write nothing of the host's, whatever a configuration tells it to open (a program that could
    make system calls of its choosing could mount again, but that is running code, which a lab's text may not do
    without consent). Only those mounts are made writable again, not what is mounted below them."""
    syscalls.set_read_only("/", True, recursive=True)
    for path in [*NODE_TMPFS, *bound, *NODE_KERNEL_FILES]:
        syscalls.set_read_only(path, False, recursive=False)


def _reachable(path: str) -> int | None:
    """A descriptor on the directory `path`, or None where the lab's user may not reach it (a checkout under root's
    own temporary directory): inside the node it would be out of that user's reach all the same."""
    try:
        return os.open(path, os.O_PATH | os.O_DIRECTORY)
    except PermissionError:
        return None


def _unshare_above(keeper: int | None, base: int) -> None:
    """New mount and UTS namespaces, the mount namespace's id above `keeper`'s. The kernel lets a mount namespace's
    file be bind-mounted only in a namespace of a lower id (mnt_ns_loop), and hands ids out in per-CPU batches: one
    made on another CPU than the keeper's may have a lower id though it is newer (EINVAL when the maker keeps it: seen
    with a maker in a mount namespace of its own, as a simulated host's agent is). The CPU whose batch held the
    keeper's id, or any CPU once its batch is used up, gives a higher one; this process may move to any CPU of its
    cpuset, whatever affinity it inherited."""
    inherited = os.sched_getaffinity(0)
    try:
        for cpu in [None, *range(os.cpu_count() or 1)]:
            if cpu is not None:
                try:
                    os.sched_setaffinity(0, {cpu})
                except OSError:
                    continue  # outside this process's cpuset, or offline
                syscalls.setns(base, CLONE_NEWNS)
            syscalls.unshare(CLONE_NEWNS | CLONE_NEWUTS)
            made = syscalls.mount_namespace_id(f"{THREAD_NS}/mnt")
            if keeper is None or made is None or made > keeper:
                return
        raise OSError(errno.EAGAIN, f"no CPU made a mount namespace of an id above {keeper}, its keeper's")
    finally:
        os.sched_setaffinity(0, inherited)


def _answer(channel: socket.socket, answer: dict[str, object], passed: Sequence[str | socket.socket]) -> None:
    """Send `answer` with a descriptor of each of `passed`: a namespace's by its file, or a socket's."""
    fds = [os.dup(each.fileno()) if isinstance(each, socket.socket) else os.open(each, os.O_RDONLY) for each in passed]
    try:
        socket.send_fds(channel, [json.dumps(answer).encode()], fds)
    finally:
        for fd in fds:
            os.close(fd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
