"""Ops that make a lab's namespaces: its user namespace (a member's lab), each node's network namespace, and the mount
and UTS namespaces that make a node a container."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from vtopo.ops.base import Op, dev_resource, ns_resource
from vtopo.ops.host import Host


def user_resource(path: str) -> str:
    return f"userns:{path}"


def node_resource(netns: str) -> str:
    """A node that is a container: its mount and UTS namespaces exist."""
    return f"node:{netns}"


def node_needs(netns: str, hosts_file: str, userns: str, binds: tuple[tuple[str, str], ...]) -> frozenset[str]:
    """What a node's container needs first: its network namespace, the lab's hosts file and user namespace, and the
    directories bound into it."""
    return frozenset({ns_resource(netns), f"file:{hosts_file}", *((user_resource(userns),) if userns else ()),
                      *(f"file:{directory}" for directory, _ in binds)})


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

    def apply(self, host: Host) -> None:
        host.add_user_namespace(self.path, self.uid, self.gid)

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

    def apply(self, host: Host) -> None:
        host.add_netns(self.name, self.userns)

    def inverse(self) -> Op:
        return DeleteNamespace(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class DeleteNamespace(Op):
    name: str
    summary_text: ClassVar[str] = "delete network namespace {name}"

    def apply(self, host: Host) -> None:
        host.delete_netns(self.name)


@dataclass(frozen=True, kw_only=True)
class IsolateNode(Op):
    """Make the node in network namespace `netns` a container: a UTS namespace named `hostname`, and a mount namespace
    with its own /tmp, /var/tmp and /run, sysfs of its own network namespace, and the lab's `hosts_file` as
    /etc/hosts. Both are kept at `mount_ns` and `uts_ns`, inside the lab's user namespace `userns` when it has one.
    `binds` puts host directories of the node's own (its router directory) at paths inside it, each (directory, path);
    `files` are files of its own over the host's, each (path, content); with `host_read_only`, every other mount of
    the host's is read-only inside."""

    netns: str
    hostname: str
    hosts_file: str
    mount_ns: str
    uts_ns: str
    userns: str = ""
    binds: tuple[tuple[str, str], ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    host_read_only: bool = False
    summary_text: ClassVar[str] = "make {hostname} a container (hostname, /etc/hosts, private /tmp and /run)"

    def requires(self) -> frozenset[str]:
        return node_needs(self.netns, self.hosts_file, self.userns, self.binds)

    def provides(self) -> frozenset[str]:
        return frozenset({node_resource(self.netns)})

    def apply(self, host: Host) -> None:
        host.isolate_node(self.netns, self.hostname, self.hosts_file, self.mount_ns, self.uts_ns, self.userns,
                          self.binds, self.files, self.host_read_only)

    def inverse(self) -> Op:
        return RemoveNamespaceFiles(owner=self.owner, paths=(self.mount_ns, self.uts_ns))


@dataclass(frozen=True, kw_only=True)
class RemoveNamespaceFiles(Op):
    """Unmount and remove the files that keep namespaces; each namespace ends once nothing else holds it."""

    paths: tuple[str, ...]
    summary_text: ClassVar[str] = "remove namespaces {paths}"

    def apply(self, host: Host) -> None:
        host.remove_namespace_files(self.paths)
