"""Ops that run a node from an OCI image: its container, made by the OCI engine inside the namespaces vtopo made for
the node (see vtopo.host.oci_engine), in place of the mount and UTS namespaces IsolateNode makes over the host's own
files."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from vtopo.ops.base import Op
from vtopo.ops.host import Host
from vtopo.ops.namespaces import node_needs, node_resource


@dataclass(frozen=True, kw_only=True)
class RunImage(Op):
    """Run the node `hostname` in network namespace `netns` from the image `image` (a reference), whose manifest
    digest must still be `digest`; `image_owner` is the uid whose store holds it (0: the shared store), and the engine
    keeps its state under `run_root` (LabNames.run_root). The container joins the lab's user namespace `userns`
    (where the lab has one; `ids` are the lab user its files belong to), sees the lab's `hosts_file` as /etc/hosts,
    `binds` (host directory, path inside) and `files` (path inside, content) as IsolateNode gives them, and is held
    to `memory_mb`, `cpus` and a disk of `disk_mb`. Its mount, UTS and PID namespaces are kept at `mount_ns`, `uts_ns`
    and `pid_ns`, beside every node's."""

    image: str
    digest: str
    hostname: str
    netns: str
    mount_ns: str
    uts_ns: str
    pid_ns: str
    hosts_file: str
    run_root: str
    image_owner: int = 0
    userns: str = ""
    ids: tuple[int, int] | None = None
    binds: tuple[tuple[str, str], ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    memory_mb: int = 256
    cpus: float = 1.0
    disk_mb: int = 256
    summary_text: ClassVar[str] = "run {hostname} from image {image} ({digest})"
    waiting_text: ClassVar[str] = "starting {hostname} from image {image}"

    def requires(self) -> frozenset[str]:
        return node_needs(self.netns, self.hosts_file, self.userns, self.binds)

    def provides(self) -> frozenset[str]:
        return frozenset({node_resource(self.netns)})

    def apply(self, host: Host) -> None:
        host.run_image(netns=self.netns, hostname=self.hostname, hosts_file=self.hosts_file, mount_ns=self.mount_ns,
                       uts_ns=self.uts_ns, pid_ns=self.pid_ns, image=self.image, digest=self.digest,
                       run_root=self.run_root, image_owner=self.image_owner,
                       userns=self.userns, ids=self.ids, binds=self.binds, files=self.files, memory_mb=self.memory_mb,
                       cpus=self.cpus, disk_mb=self.disk_mb)

    def inverse(self) -> Op:
        return RemoveImageContainer(owner=self.owner, netns=self.netns, run_root=self.run_root,
                                    paths=(self.mount_ns, self.uts_ns, self.pid_ns))


@dataclass(frozen=True, kw_only=True)
class RemoveImageContainer(Op):
    """End a node's container and remove what it ran on (its cgroup, overlay and bundle), and the files that kept its
    namespaces."""

    netns: str
    run_root: str
    paths: tuple[str, ...]
    summary_text: ClassVar[str] = "remove the container of {netns}"

    def apply(self, host: Host) -> None:
        host.remove_namespace_files(self.paths)
        host.remove_image_container(self.netns, self.run_root)
