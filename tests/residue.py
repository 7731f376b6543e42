"""A snapshot of everything a lab could leave behind, to assert that destroy leaves nothing."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from vtopo.host.facts import PROBE_NAME

DAEMONS = {"zebra", "ospfd", "ospf6d", "bgpd", "ripd", "ripngd", "isisd", "bfdd", "qemu-system-x86", "iperf3", "watchfrr",
           "staticd", "tcpdump", "dnsmasq", "busybox"}
STATE_PATHS = (Path("/run/vtopo"), Path("/var/lib/vtopo"), Path("/var/log/libvirt/qemu"))
IMAGE_STORE = Path("/var/lib/vtopo/oci")  # OCI images and their unpacked files: kept for the next lab, not residue
# On a machine shared with other work, objects matching this regex are not counted (CI leaves it unset).
IGNORED = re.compile(os.environ["VTOPO_RESIDUE_IGNORE"]) if os.environ.get("VTOPO_RESIDUE_IGNORE") else None


@dataclass(frozen=True)
class Residue:
    namespaces: frozenset[str]
    links: frozenset[str]
    ovs: frozenset[str]
    processes: frozenset[str]
    files: frozenset[str]
    nftables: frozenset[str]
    domains: frozenset[str]

    def __sub__(self, before: Residue) -> dict[str, set[str]]:
        grown = {}
        for field in ("namespaces", "links", "ovs", "processes", "files", "nftables", "domains"):
            extra = {item for item in set(getattr(self, field)) - set(getattr(before, field))
                     if not (IGNORED and IGNORED.search(item))}
            if extra:
                grown[field] = extra
        return grown


def _lines(argv: list[str]) -> set[str]:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    return {line.strip() for line in result.stdout.splitlines() if line.strip()}


def _ovs() -> set[str]:
    if subprocess.run(["ovs-vsctl", "--timeout=2", "show"], capture_output=True).returncode != 0:
        return set()
    found = set()
    for bridge in _lines(["ovs-vsctl", "--timeout=2", "list-br"]):
        found.add(f"bridge {bridge}")
        found |= {f"port {bridge}/{port}" for port in _lines(["ovs-vsctl", "--timeout=2", "list-ports", bridge])}
    return found


def this_machines(names: set[str]) -> set[str]:
    """The live processes named (by comm) among `names` that run on this machine, as NAME(PID)."""
    found = set()
    ours = os.stat("/")
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                comm = (entry / "comm").read_text().strip()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            dead = state == "Z"  # a zombie: only its parent (here init) still has to reap it
            if comm in names and not dead and not _another_machines(entry, ours) and not _anothers_kvm_probe(entry):
                found.add(f"{comm}({entry.name})")
    return found


def _another_machines(process: Path, ours: os.stat_result) -> bool:
    """A process whose / is another directory: a container's, or one of scripts/fresh-machine.sh's machine. The nodes
    of labs, simulated hosts and VMs all have this host's / (a process whose / cannot be read counts as this host's)."""
    try:
        root = (process / "root").stat()
    except OSError:
        return False
    return (root.st_dev, root.st_ino) != (ours.st_dev, ours.st_ino)


def _anothers_kvm_probe(process: Path) -> bool:
    """A KVM probe of another vtopo process (one that gathers a VM lab's host facts beside the tests): it ends by
    itself within its few seconds, whatever its owner does."""
    try:
        argv = (process / "cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return False
    return any(arg.startswith(PROBE_NAME) and arg != f"{PROBE_NAME}{os.getpid()}" for arg in argv)


def _domains() -> set[str]:
    """libvirt domains, when libvirtd runs (virsh answers at once when it does not)."""
    return _lines(["virsh", "-c", "qemu:///system", "list", "--all", "--name"]) if shutil.which("virsh") else set()


def _files() -> set[str]:
    """Every path under STATE_PATHS but the image store and what it holds, which is not walked: its unpacked images
    are thousands of files, and a snapshot is taken before and after most tests."""
    found = set()
    for root in STATE_PATHS:
        if not root.exists():
            continue
        found.add(str(root))
        for directory, subdirectories, files in os.walk(root):
            subdirectories[:] = [name for name in subdirectories if os.path.join(directory, name) != str(IMAGE_STORE)]
            found.update(os.path.join(directory, name) for name in [*subdirectories, *files])
    return found


def snapshot() -> Residue:
    return Residue(
        namespaces=frozenset(line.split()[0] for line in _lines(["ip", "netns", "list"])),
        links=frozenset(line.split(": ")[1].split("@")[0] for line in _lines(["ip", "-o", "link", "show"])),
        ovs=frozenset(_ovs()),
        processes=frozenset(this_machines(DAEMONS)),
        files=frozenset(_files()),
        nftables=frozenset(_lines(["nft", "list", "tables"]) if shutil.which("nft") else ()),
        domains=frozenset(_domains()),
    )


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def zombie_children(parent: int) -> set[int]:
    """The children of `parent` that ended and whose exit status it has not collected."""
    zombies = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == parent:
            zombies.add(int(stat.parent.name))
    return zombies
