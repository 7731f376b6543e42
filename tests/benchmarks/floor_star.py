"""The floor of the deploy benchmark: N containers on one Linux bridge, made and taken down in this one process with
the kernel work vtopo does for them and nothing else, as directly as Python can ask for it. Prints its two times, as
JSON [seconds to build, seconds to take down].

    python floor_star.py N
"""
from __future__ import annotations

import fcntl
import ipaddress
import json
import os
import resource
import socket
import struct
import sys
import time
from pathlib import Path

from vtopo.host import rtnl_wire as wire
from vtopo.host import syscalls
from vtopo.host.namespace_maker import cpus_whose_mount_namespaces_keep
from vtopo.host.syscalls import (CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWUTS, MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID,
                                 MS_PRIVATE, MS_REC, MS_SHARED, MS_SLAVE)

NETNS_DIR = "/run/netns"
CAPTION = ("The floor is the kernel work vtopo does per container, in one Python process of its own that uses only "
           "vtopo's libc wrappers and netlink packing (tests/benchmarks/floor_star.py): a network namespace kept on "
           "/run/netns, its lo up; mount and UTS namespaces unshared inside it from a copy of the host's mounts "
           "without the namespaces' files, receiving none back (slave), with a hostname, a sysfs, tmpfs on /tmp, "
           "/var/tmp and /run, and the hostname and hosts files written there and bound over /etc's, both "
           "namespaces kept by bind mounts in a private tmpfs; then, in vtopo's order (every pair made before any "
           "end comes up), one netlink request per veth pair, each end with one transmit and one receive queue, its "
           "host end on the bridge, its peer in the namespace; the peer brought up and addressed through a socket "
           "opened inside; the host ends brought up, then the bridge. No user namespace (vtopo makes one per lab, which takes a second process), no tags. "
           "It takes down what it made as vtopo does: the bridge deleted, the tmpfs of namespace files detached in "
           "one unmount, each network namespace's mount detached and its file removed.")
KEPT = "/run/vtopo-floor"  # the hosts file and the mount and UTS namespaces' files
BRIDGE = "fb-br"
THREAD_NS = "/proc/thread-self/ns"
NODE_TMPFS = ("/tmp", "/var/tmp", "/run")
NODE_FILES = "/run/vtopo-node"
RTM_NEWLINK, RTM_DELLINK, RTM_NEWADDR = 16, 17, 20
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 1, 4, 0x200, 0x400
NLMSG_ERROR = 2
IFF_UP = 1
SIOCGIFINDEX = 0x8933
HEADER = struct.Struct("=IHHII")
IFREQ_INDEX = struct.Struct("16si20x")


class Rtnl:
    """An rtnetlink socket in the namespace it was opened in: one request, then its ack."""

    def __init__(self) -> None:
        self.socket = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC, socket.NETLINK_ROUTE)
        self.socket.bind((0, 0))
        self.sequence = 0

    def ask(self, kind: int, payload: bytes, create: bool = False) -> None:
        self.sequence += 1
        flags = NLM_F_REQUEST | NLM_F_ACK | (NLM_F_CREATE | NLM_F_EXCL if create else 0)
        self.socket.send(HEADER.pack(HEADER.size + len(payload), kind, flags, self.sequence, 0) + payload)
        answer = self.socket.recv(65536)
        if HEADER.unpack_from(answer)[1] == NLMSG_ERROR and (code := -struct.unpack_from("=i", answer, 16)[0]):
            raise OSError(code, os.strerror(code), f"rtnetlink request {kind}")

    def index(self, name: str) -> int:
        """The ifindex of `name` in the socket's namespace (socket.if_nametoindex opens a socket of its own)."""
        answer = fcntl.ioctl(self.socket.fileno(), SIOCGIFINDEX, IFREQ_INDEX.pack(name.encode(), 0))
        return int(IFREQ_INDEX.unpack(answer)[1])


def address(i: int) -> ipaddress.IPv4Interface:
    return ipaddress.IPv4Interface(f"10.{i // 250}.{i % 250}.1/8")


def bind_on_new_file(source: str, path: str) -> None:
    os.close(os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0))
    syscalls.mount(source, path, None, MS_BIND)


def deploy(count: int, host: Rtnl, keeper: int) -> None:
    os.makedirs(KEPT, exist_ok=True)
    syscalls.mount("tmpfs", KEPT, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=700")
    syscalls.mount("", KEPT, None, MS_PRIVATE)
    hosts = "127.0.0.1\tlocalhost\n" + "".join(f"{address(i).ip}\tc{i}\n" for i in range(count))
    with open(f"{KEPT}/hosts", "w", encoding="ascii") as file:
        file.write(hosts)
    os.makedirs(NETNS_DIR, exist_ok=True)
    try:
        syscalls.mount("", NETNS_DIR, None, MS_SHARED | MS_REC)
    except OSError:  # not a mount point yet
        syscalls.mount(NETNS_DIR, NETNS_DIR, None, MS_BIND | MS_REC)
        syscalls.mount("", NETNS_DIR, None, MS_SHARED | MS_REC)
    syscalls.unshare(CLONE_NEWNS)  # the mount namespace each node's is copied from: without the namespaces' files
    syscalls.mount("", "/", None, MS_REC | MS_SLAVE)
    syscalls.umount(NETNS_DIR)
    syscalls.umount(KEPT)
    base = os.open(f"{THREAD_NS}/mnt", os.O_RDONLY)
    syscalls.setns(keeper, CLONE_NEWNS)
    bridge = wire.link_kind("bridge", wire.u32(wire.IFLA_BR_FORWARD_DELAY, 0))
    host.ask(RTM_NEWLINK, wire.link(wire.text(wire.IFLA_IFNAME, BRIDGE), bridge), True)
    bridge_index = host.index(BRIDGE)
    home = os.open(f"{THREAD_NS}/net", os.O_RDONLY)
    made = [container(i, hosts, keeper, base, home) for i in range(count)]
    os.close(home)
    os.close(base)
    for i, (net, _) in enumerate(made):  # every pair made before any end comes up, as vtopo's plan orders them
        peer = wire.attribute(wire.VETH_INFO_PEER, wire.link(wire.text(wire.IFLA_IFNAME, "eth0"),
                                                             wire.u32(wire.IFLA_NET_NS_FD, net), wire.queues(1)))
        host.ask(RTM_NEWLINK, wire.link(wire.text(wire.IFLA_IFNAME, f"fb-p{i}"), wire.link_kind("veth", peer),
                                        wire.u32(wire.IFLA_MASTER, bridge_index), wire.queues(1)), True)
        os.close(net)
    for i, (_, inner) in enumerate(made):
        inner.ask(RTM_NEWLINK, wire.link(wire.text(wire.IFLA_IFNAME, "eth0"), flags=IFF_UP, change=IFF_UP))
        inner.ask(RTM_NEWADDR, wire.address(address(i), inner.index("eth0")), True)
        inner.socket.close()
    for name in [*(f"fb-p{i}" for i in range(count)), BRIDGE]:
        host.ask(RTM_NEWLINK, wire.link(wire.text(wire.IFLA_IFNAME, name), flags=IFF_UP, change=IFF_UP))


def container(i: int, hosts: str, keeper: int, base: int, home: int) -> tuple[int, Rtnl]:
    """Container i's network, mount and UTS namespaces made, furnished and kept, its lo up: a descriptor of its
    network namespace, and a socket inside it."""
    syscalls.unshare(CLONE_NEWNET)
    net = os.open(f"{THREAD_NS}/net", os.O_RDONLY)
    inner = Rtnl()
    syscalls.setns(base, CLONE_NEWNS)
    syscalls.unshare(CLONE_NEWNS | CLONE_NEWUTS)
    syscalls.mount("", "/", None, MS_REC | MS_SLAVE)
    syscalls.sethostname(f"c{i}")
    syscalls.mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for path in NODE_TMPFS:
        syscalls.mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755" if path == "/run" else "mode=1777")
    os.mkdir(NODE_FILES, 0o755)
    for path, content in (("/etc/hostname", f"c{i}\n"), ("/etc/hosts", hosts)):
        copy = f"{NODE_FILES}/{os.path.basename(path)}"
        with open(copy, "w", encoding="ascii") as file:
            file.write(content)
        syscalls.mount(copy, path, None, MS_BIND)
    mount, uts = os.open(f"{THREAD_NS}/mnt", os.O_RDONLY), os.open(f"{THREAD_NS}/uts", os.O_RDONLY)
    syscalls.setns(keeper, CLONE_NEWNS)
    bind_on_new_file(f"/proc/self/fd/{net}", f"{NETNS_DIR}/fb-c{i}")
    bind_on_new_file(f"/proc/self/fd/{mount}", f"{KEPT}/c{i}.mnt")
    bind_on_new_file(f"/proc/self/fd/{uts}", f"{KEPT}/c{i}.uts")
    os.close(mount)
    os.close(uts)
    syscalls.setns(home, CLONE_NEWNET)
    inner.ask(RTM_NEWLINK, wire.link(wire.text(wire.IFLA_IFNAME, "lo"), flags=IFF_UP, change=IFF_UP))
    return net, inner


def destroy(count: int, host: Rtnl) -> None:
    host.ask(RTM_DELLINK, wire.link(wire.text(wire.IFLA_IFNAME, BRIDGE)))
    syscalls.umount(KEPT)
    os.rmdir(KEPT)
    for i in range(count):
        syscalls.umount(f"{NETNS_DIR}/fb-c{i}")
        os.unlink(f"{NETNS_DIR}/fb-c{i}")


def take_away_leftovers(count: int, host: Rtnl) -> None:
    """What a deploy that failed made, whatever it got to."""
    try:
        host.ask(RTM_DELLINK, wire.link(wire.text(wire.IFLA_IFNAME, BRIDGE)))
    except OSError:
        pass
    while syscalls.umount(KEPT):
        pass
    if os.path.isdir(KEPT):
        os.rmdir(KEPT)
    for i in range(count):
        syscalls.umount(f"{NETNS_DIR}/fb-c{i}")
        Path(f"{NETNS_DIR}/fb-c{i}").unlink(missing_ok=True)


def main(count: int) -> None:
    _, most = resource.getrlimit(resource.RLIMIT_NOFILE)  # two descriptors per container until its pair is made
    resource.setrlimit(resource.RLIMIT_NOFILE, (most, most))
    cpus = cpus_whose_mount_namespaces_keep()  # those where a new mount namespace may be kept from this one
    if cpus is not None:
        os.sched_setaffinity(0, cpus)
    keeper = os.open(f"{THREAD_NS}/mnt", os.O_RDONLY)
    host = Rtnl()
    started = time.perf_counter()
    try:
        deploy(count, host, keeper)
    except BaseException:
        take_away_leftovers(count, host)
        raise
    built = time.perf_counter() - started
    stopping = time.perf_counter()
    destroy(count, host)
    print(json.dumps([built, time.perf_counter() - stopping]))


if __name__ == "__main__":
    main(int(sys.argv[1]))
