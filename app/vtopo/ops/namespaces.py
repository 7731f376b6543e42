"""Ops that make a lab's namespaces: its user namespace (a member's lab), each node's network namespace, and the mount
and UTS namespaces that make a node a container.

The shell cannot make a namespace inside another process's user namespace in one command, so the explained lines do
what vtopo's helper process does: a placeholder process unshares it, and the namespace is kept by a bind mount of its
file, as `ip netns add` keeps a network namespace.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import ClassVar

from vtopo.ops.base import Op, dev_resource, ip_cmd, ns_resource, sh

NETNS_DIR = "/run/netns"  # where network namespaces are kept, as iproute2 keeps them
NODE_TMPFS = ("/tmp", "/var/tmp", "/run")
"""What each node gets empty and its own; /run hides the host's sockets and /run/netns from what runs inside."""
NODE_FILES_DIR = "/run/vtopo-node"  # inside a node's own /run: its hostname and hosts files, bound over /etc's


def user_resource(path: str) -> str:
    return f"userns:{path}"


def node_resource(netns: str) -> str:
    """A node that is a container: its mount and UTS namespaces exist."""
    return f"node:{netns}"


def _held_by_placeholder(unshare: list[str], mounts: list[tuple[str, str]]) -> list[str]:
    """Shell lines: `unshare` runs a placeholder process, whose namespaces are then bind-mounted on their files."""
    binds = "; ".join(f"mount --bind /proc/$holder/ns/{kind} {shlex.quote(path)}" for kind, path in mounts)
    return [sh("touch", *(path for _, path in mounts)),
            f"{sh(*unshare)} & holder=$!; sleep 0.1",
            f"{binds}; kill $holder"]


@dataclass(frozen=True, kw_only=True)
class CreateUserNamespace(Op):
    """The user namespace of a member's lab, kept at `path`: `uid` and `gid` outside are root inside it. Every other
    namespace of the lab is made inside it, so the owner's capabilities there reach the lab's nodes and nothing the
    host's own user namespace owns (the host's network, other labs)."""

    path: str
    uid: int
    gid: int
    summary_text: ClassVar[str] = "create the lab's user namespace (uid {uid} is root inside)"

    def provides(self) -> frozenset[str]:
        return frozenset({user_resource(self.path)})

    def explain(self) -> list[str]:
        held = _held_by_placeholder(["unshare", "--user", "sleep", "infinity"], [("user", self.path)])
        maps = (f"echo '0 {self.uid} 1' > /proc/$holder/uid_map; echo '0 {self.gid} 1' > /proc/$holder/gid_map")
        return [f"# the lab's user namespace: uid {self.uid} and gid {self.gid} outside are root inside it, and own "
                "nothing of the host's", held[0], held[1], maps, held[2]]

    def inverse(self) -> Op:
        return RemoveNamespaceFiles(owner=self.owner, paths=(self.path,))


@dataclass(frozen=True, kw_only=True)
class CreateNamespace(Op):
    """A network namespace; inside the lab's user namespace `userns` when it has one (a member's lab)."""

    name: str
    userns: str = ""
    summary_text: ClassVar[str] = "create network namespace {name}"

    def requires(self) -> frozenset[str]:
        return frozenset({user_resource(self.userns)} if self.userns else ())

    def provides(self) -> frozenset[str]:
        return frozenset({ns_resource(self.name), dev_resource(self.name, "lo")})

    def explain(self) -> list[str]:
        """lo carries the lab's tag (the plan's script sets LAB_TAG), so cleanup finds the namespace."""
        tag = f'{ip_cmd(self.name, "link", "set", "lo", "up")} alias "$LAB_TAG"'
        if not self.userns:
            return [sh("ip", "netns", "add", self.name), tag]
        return [*_held_by_placeholder(["nsenter", f"--user={self.userns}", "unshare", "--net", "sleep", "infinity"],
                                      [("net", f"{NETNS_DIR}/{self.name}")]), tag]

    def inverse(self) -> Op:
        return DeleteNamespace(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class DeleteNamespace(Op):
    name: str
    summary_text: ClassVar[str] = "delete network namespace {name}"

    def explain(self) -> list[str]:
        return [sh("ip", "netns", "del", self.name)]


@dataclass(frozen=True, kw_only=True)
class IsolateNode(Op):
    """Make the node in network namespace `netns` a container: a UTS namespace named `hostname`, and a mount namespace
    with its own /tmp, /var/tmp and /run, sysfs of its own network namespace, and the lab's `hosts_file` as
    /etc/hosts. Both are kept at `mount_ns` and `uts_ns`, inside the lab's user namespace `userns` when it has one."""

    netns: str
    hostname: str
    hosts_file: str
    mount_ns: str
    uts_ns: str
    userns: str = ""
    summary_text: ClassVar[str] = "make {hostname} a container (hostname, /etc/hosts, private /tmp and /run)"

    def requires(self) -> frozenset[str]:
        return frozenset({ns_resource(self.netns), f"file:{self.hosts_file}",
                          *((user_resource(self.userns),) if self.userns else ())})

    def provides(self) -> frozenset[str]:
        return frozenset({node_resource(self.netns)})

    def explain(self) -> list[str]:
        inside = "; ".join([sh("hostname", self.hostname), "mount -t sysfs sysfs /sys",
                            sh("mount", "--bind", self.hosts_file, "/etc/hosts"),
                            *(sh("mount", "-t", "tmpfs", "tmpfs", path) for path in NODE_TMPFS),
                            "exec sleep infinity"])
        enter = ["nsenter", *([f"--user={self.userns}"] if self.userns else []), f"--net={NETNS_DIR}/{self.netns}"]
        return [f"# {self.hostname} is a container: its own hostname, /etc/hosts naming the lab's nodes, and empty "
                "/tmp, /var/tmp and /run",
                *_held_by_placeholder([*enter, "unshare", "--mount", "--uts", "--propagation", "slave",
                                       "sh", "-c", inside], [("mnt", self.mount_ns), ("uts", self.uts_ns)])]

    def inverse(self) -> Op:
        return RemoveNamespaceFiles(owner=self.owner, paths=(self.mount_ns, self.uts_ns))


@dataclass(frozen=True, kw_only=True)
class RemoveNamespaceFiles(Op):
    """Unmount and remove the files that keep namespaces; each namespace ends once nothing else holds it."""

    paths: tuple[str, ...]
    summary_text: ClassVar[str] = "remove namespaces {paths}"

    def explain(self) -> list[str]:
        return [f"umount {shlex.join(self.paths)}; {sh('rm', '-f', *self.paths)}"]
