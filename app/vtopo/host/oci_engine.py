"""A node from an OCI image, run by runc in the namespaces vtopo made for it (see docs/architecture.md, "Nodes from
images"): the node's network namespace, wired by vtopo as every node's is, and the lab's user namespace, so that the
container's root is the lab's owner outside and its capabilities reach only the lab's namespaces. runc makes its mount,
UTS, PID, IPC and cgroup namespaces inside them, puts it in a cgroup with the node's memory and CPU limits, and runs
the image's process with no new privileges.

Each node's files lie in a bundle directory of its own, /run/vtopo/oci/NETNS, a tmpfs the size of the node's disk
(so a full disk stops at that size, and what it holds counts in the node's memory cgroup): the overlay of the image's
unpacked root file system (read-only below, the node's writes above), the files vtopo binds in (/etc/hosts,
/etc/hostname, the lab's accounts) and runc's config.json. Its mount and UTS namespaces are kept where a container
node's are (LabNames.node_namespace), so `vtopo exec`, the terminal, measurements, startup commands and a router's
daemons enter the image node as they enter any other.

Names: the container is `vtopo-NETNS` in runc's state directory /run/vtopo/runc; its cgroup `vtopo/vtopo-NETNS`
under each controller (a simulated host's under a parent of its own, VTOPO_CGROUP_PARENT). Cleanup finds all three by
vtopo's prefix.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vtopo.host import namespace_maker, owned_files, syscalls
from vtopo.host.errors import HostError
from vtopo.host.image_store import (ImageError, StoredImage, Unpacked, cgroups_held, release_unused_roots,
                                   roots_held, unpacked)
from vtopo.host.namespace_helper import accounts_of_the_lab
from vtopo.host.syscalls import MS_NODEV, MS_NOSUID
from vtopo.lab_terms import CGROUP_PARENT, CONTAINER_PREFIX, container_name
from vtopo.ops import NETNS_DIR

RUNC = "runc"
CGROUP_ROOT = "/sys/fs/cgroup"
CPU_PERIOD_US = 100_000
PIDS_LIMIT = 1024
START_SECONDS = 30.0
# The capabilities of an image's process, all of them in the lab's user namespace (nothing of the host's): the set
# Docker and Podman give by default, with the network administration a node of a network lab is for.
CAPABILITIES = ("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID",
                "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW", "CAP_NET_ADMIN", "CAP_SYS_CHROOT",
                "CAP_AUDIT_WRITE")
MASKED = ("/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/sched_debug",
          "/sys/firmware", "/proc/scsi", "/sys/kernel/debug")
READ_ONLY = ("/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sysrq-trigger")


class EngineError(HostError):
    """runc could not start or remove a node's container; the message names the node."""


@dataclass(frozen=True)
class ImageNode:
    """What runs one node from an image: see RunImage, whose fields these are."""

    netns: str
    hostname: str
    hosts_file: str
    userns: str
    ids: tuple[int, int] | None
    binds: tuple[tuple[str, str], ...]
    files: tuple[tuple[str, str], ...]
    image: StoredImage
    memory_mb: int
    cpus: float
    disk_mb: int

    @property
    def container(self) -> str:
        return container_name(self.netns)


def runc(*argv: str, run_root: str) -> list[str]:
    return [RUNC, f"--root={state_directory(run_root)}", *argv]


def state_directory(run_root: str) -> str:
    """runc's state directory. vtopo makes it, with its mode, before runc runs: runc would make it, and any missing
    parent such as /run/vtopo itself, 0700, which shuts the labs' users out of /run/vtopo."""
    return f"{run_root}/runc"


def bundle_of(run_root: str, netns: str) -> str:
    return f"{run_root}/oci/{netns}"


def runtime_spec(node: ImageNode, process: dict[str, object], bundle: str) -> dict[str, object]:
    """runc's config.json for `node`, whose bundle is `bundle`: the image's process (`process`, as umoci reads it
    from the image), vtopo's namespaces, files and limits."""
    env = [str(e) for e in process.get("env", []) or [] if not str(e).startswith("HOSTNAME=")]  # type: ignore
    binds = [*((f"{bundle}/files/{_file_name(path)}", path) for path, _ in _files(node)), *node.binds]
    namespaces: list[dict[str, str]] = [{"type": kind} for kind in ("pid", "ipc", "uts", "mount", "cgroup")]
    namespaces.append({"type": "network", "path": f"{NETNS_DIR}/{node.netns}"})
    if node.userns:
        namespaces.append({"type": "user", "path": node.userns})
    return {
        "ociVersion": "1.0.2",
        "process": {
            "terminal": False,
            # a lab's user namespace maps its root alone: every user of the image is that root inside
            "user": {"uid": 0, "gid": 0} if node.userns else process.get("user", {"uid": 0, "gid": 0}),
            "args": process.get("args") or ["sh"],
            "env": [*env, f"HOSTNAME={node.hostname}"],
            "cwd": process.get("cwd") or "/",
            "capabilities": {kind: list(CAPABILITIES) for kind in ("bounding", "effective", "permitted")},
            "noNewPrivileges": True,
        },
        "root": {"path": "root", "readonly": False},
        "hostname": node.hostname,
        "mounts": [
            {"destination": "/proc", "type": "proc", "source": "proc", "options": ["nosuid", "noexec", "nodev"]},
            {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
             "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
            {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
             "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
            {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
             "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
            {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
             "options": ["nosuid", "noexec", "nodev"]},
            {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
            *({"destination": inside, "type": "bind", "source": source,
               "options": ["rbind", "nosuid", "nodev", *(["ro"] if source.startswith(bundle) else [])]}
              for source, inside in binds),
        ],
        "linux": {
            "namespaces": namespaces,
            **({"uidMappings": [{"containerID": 0, "hostID": node.ids[0], "size": 1}],  # the lab's, which it joins
                "gidMappings": [{"containerID": 0, "hostID": node.ids[1], "size": 1}]} if node.userns and node.ids
               else {}),
            "cgroupsPath": f"/{CGROUP_PARENT}/{node.container}",
            "resources": {
                "devices": [{"allow": False, "access": "rwm"}],
                "memory": {"limit": node.memory_mb << 20},
                "cpu": {"quota": int(node.cpus * CPU_PERIOD_US), "period": CPU_PERIOD_US},
                "pids": {"limit": PIDS_LIMIT},
            },
            "maskedPaths": list(MASKED),
            "readonlyPaths": list(READ_ONLY),
        },
    }


def _files(node: ImageNode) -> list[tuple[str, str]]:
    """The files vtopo binds over the image's, each (path inside, content): the node's name and the lab's hosts, the
    lab's accounts in a lab's user namespace (every user there is its root), then the node's own (a router's group)."""
    with open(node.hosts_file, encoding="utf-8") as hosts:
        found = {"/etc/hostname": f"{node.hostname}\n", "/etc/hosts": hosts.read()}
    if node.userns:
        found.update(accounts_of_the_lab())
    found.update(dict(node.files))
    return list(found.items())


def _file_name(path: str) -> str:
    return path.strip("/").replace("/", "-")


def run(node: ImageNode, mount_ns: str, uts_ns: str, pid_ns: str, run_root: str) -> None:
    """Start `node`'s container (detached: it outlives this process, as a daemon does) and keep its mount, UTS and
    PID namespaces at `mount_ns`, `uts_ns` and `pid_ns`."""
    bundle = bundle_of(run_root, node.netns)
    owned_files.make_directory(state_directory(run_root), exist_ok=True)
    with roots_held():
        try:
            image = unpacked(node.image, node.ids)
        except ImageError as error:
            raise EngineError(f"node {node.hostname}: {error}") from None
        _prepare(bundle, image, node)
    try:
        cpus = namespace_maker.cpus_whose_mount_namespaces_keep()  # where runc makes a mount namespace this keeps
        pinned = ["taskset", "--cpu-list", ",".join(map(str, sorted(cpus)))] if cpus is not None else []
        with open(f"{bundle}/console.log", "wb+") as console, cgroups_held(shared=True):  # the container's output too
            done = subprocess.run([*pinned, *runc("run", "--detach", f"--bundle={bundle}", f"--pid-file={bundle}/pid",
                                                  node.container, run_root=run_root)], stdin=subprocess.DEVNULL,
                                  stdout=console, stderr=console, timeout=START_SECONDS, check=False)
            if done.returncode:
                console.seek(0)
                said = console.read(1 << 16).decode(errors="replace").strip().splitlines()
                raise EngineError(f"node {node.hostname}: runc could not start image {node.image.reference}: "
                                  f"{said[-1] if said else 'no reason given'}")
        pid = int(Path(f"{bundle}/pid").read_text(encoding="ascii").strip())
        namespace_maker.keep(f"/proc/{pid}/ns/mnt", mount_ns)
        namespace_maker.keep(f"/proc/{pid}/ns/uts", uts_ns)
        namespace_maker.keep(f"/proc/{pid}/ns/pid", pid_ns)
        if cpus is not None:  # the image's process, and what it starts from now on, may run on any CPU again
            os.sched_setaffinity(pid, os.sched_getaffinity(0))
    except BaseException:
        remove(node.netns, run_root)
        raise


def _prepare(bundle: str, image: Unpacked, node: ImageNode) -> None:
    """The bundle: a tmpfs of the node's disk size with the overlay of the image's root, the bound files and
    config.json."""
    namespace_maker.private_directory(os.path.dirname(bundle))
    os.makedirs(bundle, 0o700, exist_ok=True)
    syscalls.mount("tmpfs", bundle, "tmpfs", MS_NOSUID | MS_NODEV, f"size={node.disk_mb}m,mode=0711")
    try:
        for name in ("upper", "work", "root", "files"):
            os.mkdir(f"{bundle}/{name}")
            os.chmod(f"{bundle}/{name}", 0o755)  # whatever the caller's umask: the lab's root goes through them
        if node.ids:
            os.chown(f"{bundle}/upper", *node.ids)  # the root of the node's file system is its root's, as below
        syscalls.mount("overlay", f"{bundle}/root", "overlay", MS_NOSUID | MS_NODEV,
                       f"lowerdir={image.rootfs},upperdir={bundle}/upper,workdir={bundle}/work")
        for path, content in _files(node):
            with open(f"{bundle}/files/{_file_name(path)}", "w", encoding="utf-8") as file:
                file.write(content)
            os.chmod(f"{bundle}/files/{_file_name(path)}", 0o644)
        with open(f"{bundle}/config.json", "w", encoding="utf-8") as config:
            json.dump(runtime_spec(node, image.process, bundle), config, indent=1)
    except BaseException:
        _unmount(bundle)
        raise


def remove(netns: str, run_root: str) -> None:
    """End the node's container and remove its cgroup, overlay and bundle; gone already is fine."""
    name = container_name(netns)
    if os.path.isdir(state_directory(run_root)):
        subprocess.run(runc("delete", "--force", name, run_root=run_root), capture_output=True, check=False,
                       timeout=START_SECONDS)
    _unmount(bundle_of(run_root, netns))
    owned_files.remove_if_empty(state_directory(run_root))
    with cgroups_held(shared=False):  # not while another container's start makes its cgroup under the parent
        for controller in _cgroup_controllers():  # runc removes them; a container killed with it may leave one
            for group in (f"{controller}/{CGROUP_PARENT}/{name}", f"{controller}/{CGROUP_PARENT}"):
                try:
                    os.rmdir(group)
                except OSError as error:
                    if error.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ENOTEMPTY, errno.EBUSY):
                        raise


def _unmount(bundle: str) -> None:
    """Unmount and remove the bundle, and the directory of bundles once it holds none."""
    syscalls.umount(f"{bundle}/root")
    syscalls.umount(bundle)
    shutil.rmtree(bundle, ignore_errors=True)
    namespace_maker.release_directory(os.path.dirname(bundle))


def _cgroup_controllers() -> list[str]:
    """Each cgroup hierarchy (v1: one per controller; v2: the one unified tree)."""
    root = Path(CGROUP_ROOT)
    if (root / "cgroup.controllers").exists():
        return [str(root)]
    return [str(path) for path in sorted(root.iterdir()) if path.is_dir() and not path.is_symlink()]


def containers(run_root: str) -> list[str]:
    """vtopo's containers runc knows of, by name."""
    if not os.path.isdir(state_directory(run_root)):
        return []
    done = subprocess.run(runc("list", "--quiet", run_root=run_root), capture_output=True, text=True, check=False,
                          timeout=START_SECONDS)
    return [name for name in done.stdout.split() if name.startswith(CONTAINER_PREFIX)] if done.returncode == 0 else []


def leftovers(run_root: str, prefixes: Sequence[str] = ("",)) -> list[str]:
    """What image nodes left on the host (of labs whose prefixes start with one of `prefixes`): runc's containers,
    bundle mounts and cgroups, each as a line cleanup and the tests show."""
    found = [f"container {name}" for name in containers(run_root)
             if any(name.startswith(container_name(prefix)) for prefix in prefixes)]
    with open("/proc/self/mountinfo", encoding="utf-8") as mounts:
        points = [line.split()[4] for line in mounts]
    found += [f"mount {point}" for point in points if any(point.startswith(bundle_of(run_root, prefix))
                                                          for prefix in prefixes)]
    for controller in _cgroup_controllers():
        parent = Path(controller) / CGROUP_PARENT
        found += [f"cgroup {group}" for group in sorted(parent.glob(f"{CONTAINER_PREFIX}*")) if group.is_dir()
                  and any(group.name.startswith(container_name(prefix)) for prefix in prefixes)]
    return found


def remove_leftovers(run_root: str) -> list[str]:
    """Remove every container, bundle and cgroup of vtopo's image nodes (`vtopo cleanup`, once every lab the journal
    knows is destroyed): what a deploy killed halfway left."""
    found = leftovers(run_root)
    names = {line.split()[1] for line in found if line.startswith("container ")}
    bundles = Path(f"{run_root}/oci")
    names |= {container_name(path.name) for path in bundles.iterdir()} if bundles.is_dir() else set()
    for controller in _cgroup_controllers():
        names |= {group.name for group in (Path(controller) / CGROUP_PARENT).glob(f"{CONTAINER_PREFIX}*")}
    for name in sorted(names):
        remove(name.removeprefix(CONTAINER_PREFIX), run_root)
    release_unused_roots()
    return found
