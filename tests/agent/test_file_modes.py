"""Every directory and file vtopo makes under /run/vtopo and /var/lib/vtopo has the mode vtopo chose, whatever the
umask of whoever deployed: a student outside the vtopo group reads nothing there, lab records are root's alone (a
member's client asks the agent about the member's own labs), and the daemons' own files sit in directories only
their user can enter."""
from __future__ import annotations

import grp
import json
import os
import pwd
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from residue import snapshot
from vtopo.lab_terms import LAB_USER
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

ROOTS = (Path("/run/vtopo"), Path("/var/lib/vtopo"))
PRIVATE, SHARED, PASSAGE = 0o700, 0o750, 0o711
STATUS_DOCUMENTS = ("from pathlib import Path\nfrom vtopo.client.agent_client import AgentClient\n"
                    "for lab in AgentClient(Path({socket!r})).status(): print(lab.lab, len(lab.document))")


# The system agent's own files, which `make run` leaves (scripts/agent.sh, or systemd's vtopo-agent.socket): its socket,
# which members connect to, and its pid file. They have modes of their own, checked here instead of the labs' rules.
SYSTEM_AGENT = {Path("/run/vtopo/agent.sock"): (stat.S_IFSOCK, 0o660, "vtopo"),
                Path("/run/vtopo/agent.pid"): (stat.S_IFREG, 0o644, "root")}


# The shared image store: root's and vtopo's own images, which every member's labs run and `vtopo image list` reads
# (skopeo and umoci write it as an OCI layout, with the umask of whoever loaded or built an image: directories 755 or
# 700, files 644 or 600, root's). Only the vtopo group reaches it, through /var/lib/vtopo.
SHARED_IMAGES = Path("/var/lib/vtopo/oci/shared")
# The shared images unpacked for root's labs' user, kept for root's next lab: the image's own files and modes, behind
# rootfs/UID, which is root's alone (a member's unpacked images go with their last lab, and are checked as the rest)
UNPACKED_FOR_ROOTS_LABS = Path("/var/lib/vtopo/oci/rootfs")


def entries() -> Iterator[tuple[Path, os.stat_result]]:
    for root in ROOTS:
        if root.exists():
            yield root, root.lstat()
            for directory, names, files in os.walk(root):
                for name in names + files:
                    path = Path(directory, name)
                    yield path, path.lstat()


def namespace_files() -> set[Path]:
    """The files that keep namespaces (bind mounts of the kernel's nsfs, whose mode the kernel sets: 0444)."""
    with open("/proc/self/mountinfo", encoding="utf-8") as mounts:
        return {Path(line.split()[4]) for line in mounts if line.split(" - ", 1)[1].startswith("nsfs ")}


def group_name(gid: int) -> str:
    return grp.getgrgid(gid).gr_name


def mode_problems() -> list[str]:
    """Each entry whose mode breaks the rules, as `path: mode owner:group`."""
    problems = []
    namespaces = namespace_files()
    for path, info in entries():
        mode, owner, group = stat.S_IMODE(info.st_mode), pwd.getpwuid(info.st_uid).pw_name, group_name(info.st_gid)
        parent = path.parent.lstat()
        private_parent = stat.S_IMODE(parent.st_mode) == PRIVATE
        if path in SYSTEM_AGENT:
            right = (stat.S_IFMT(info.st_mode), mode, group) == SYSTEM_AGENT[path] and owner == "root"
        elif path == SHARED_IMAGES or SHARED_IMAGES in path.parents:
            right = owner == "root" and mode in ((0o755, 0o700) if stat.S_ISDIR(info.st_mode) else (0o644, 0o600))
        elif UNPACKED_FOR_ROOTS_LABS in path.parents and \
                path.relative_to(UNPACKED_FOR_ROOTS_LABS).parts[0] == str(pwd.getpwnam(LAB_USER).pw_uid) and \
                path.parent != UNPACKED_FOR_ROOTS_LABS:
            right = True
        elif path in namespaces:
            right = path.parent.parent == Path("/run/vtopo/ns") and owner == "root"
        elif private_parent and parent.st_uid != 0:
            right = True  # in a daemon's own directory, which only its user can enter: its files are its business
        elif owner != "root":  # a directory handed to a daemon
            right = stat.S_ISDIR(info.st_mode) and mode == PRIVATE
        elif stat.S_ISDIR(info.st_mode):
            right = mode in (PRIVATE, PASSAGE) or (mode == SHARED and group == "vtopo")
        elif stat.S_ISREG(info.st_mode):
            right = mode == 0o600 or (mode == 0o640 and group == "frr" and path.suffix == ".conf")
        else:  # a socket a daemon running as root made
            right = mode & 0o077 == 0 or private_parent
        if not right:
            problems.append(f"{path}: {mode:o} {owner}:{group}")
    return problems


def vtopo_as_root(umask: int, *args: str) -> subprocess.CompletedProcess[str]:
    """`vtopo ARGS` as root in its own process (no agent), under `umask`."""
    return subprocess.run([sys.executable, "-m", "vtopo", *args], capture_output=True, text=True, timeout=180,
                          umask=umask, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("umask", [0, 0o077], ids=["umask-000", "umask-077"])
def test_a_router_and_a_vm_get_the_modes_vtopo_chose_whatever_the_umask(umask, tmp_path):
    topology = io.load(TOPOLOGIES / "vm-router.vtopo")
    topology.vm_backend = "qemu"  # QEMU started by vtopo, whose console log vtopo's directory holds
    io.save(topology, tmp_path / "vm-router.vtopo")
    before = snapshot()
    deployed = vtopo_as_root(umask, "deploy", str(tmp_path / "vm-router.vtopo"))
    assert deployed.returncode == 0, deployed.stderr
    try:
        run_dir = next(Path("/run/vtopo").glob("*/vmr"), None)
        assert run_dir is not None and (run_dir / "console.log").exists(), sorted(map(str, Path("/run/vtopo").iterdir()))
        assert stat.S_IMODE((run_dir / "console.log").stat().st_mode) == 0o600
        assert mode_problems() == []
    finally:
        destroyed = vtopo_as_root(umask, "destroy", "vm-router")
    assert destroyed.returncode == 0, destroyed.stderr
    assert snapshot() - before == {}


def test_an_owner_uses_the_lab_through_the_agent_and_nobody_else_reads_its_record(users):
    """The agent itself runs under umask 0; a member deploys a lab with routers, measures it and reads its status
    through the agent. Lab records are root's alone: neither the owner, nor another member, nor a user outside the
    group reads one, nor lists the run directory; another member's status shows the lab's state, not how it is made."""
    from agent_process import Agent

    a, b, c = users["a"].pw_name, users["b"].pw_name, users["c"].pw_name
    before = snapshot()
    old_umask = os.umask(0)
    try:
        with Agent.running() as agent:
            os.umask(old_umask)
            deployed = agent.vtopo(a, "deploy", str(TOPOLOGIES / "l2-vs-l3.vtopo"))
            assert deployed.returncode == 0, deployed.stderr
            try:
                assert mode_problems() == []
                record = next(Path("/var/lib/vtopo/labs").glob("*/lab.json"))
                router_dir = next(Path("/run/vtopo").glob("*/r1"))
                assert (stat.S_IMODE(record.stat().st_mode), record.stat().st_uid) == (0o600, 0)
                assert stat.S_IMODE(router_dir.parent.stat().st_mode) == PASSAGE  # a passes through to r1
                assert pwd.getpwuid(router_dir.stat().st_uid).pw_name == a  # its daemons run as a, in the lab
                assert stat.S_IMODE(router_dir.stat().st_mode) == PRIVATE
                config = (router_dir / "frr.conf").stat()
                assert (stat.S_IMODE(config.st_mode), config.st_uid, config.st_gid) == (0o640, 0, users["a"].pw_gid)
                assert stat.S_IMODE((record.parent / "journal.jsonl").stat().st_mode) == 0o600

                status = agent.vtopo(a, "status", "l2-vs-l3")
                assert status.returncode == 0 and f"owner {a}: running" in status.stdout, status.stdout + status.stderr
                ping = agent.vtopo(a, "ping", "l2-vs-l3", "h1", "h2", "-c", "1")
                assert ping.returncode == 0 and "1 received" in ping.stdout, ping.stdout + ping.stderr
                checked = agent.vtopo(a, "check", "l2-vs-l3", "--json", timeout=180)  # compiled from the agent's answer
                assert json.loads(checked.stdout)["checks"], checked.stdout + checked.stderr
                for user in (a, b):
                    peek = agent.run_as(user, "cat", str(record))
                    assert peek.returncode != 0 and "Permission denied" in peek.stderr, (user, peek.stdout)
                for path, argv in ((record, ["cat", str(record)]), (Path("/run/vtopo"), ["ls", "/run/vtopo"]),
                                   (router_dir, ["ls", str(router_dir)])):
                    peek = agent.run_as(c, *argv)
                    assert peek.returncode != 0 and "Permission denied" in peek.stderr, (path, peek.stdout)
                summaries = agent.run_as(b, sys.executable, "-c", STATUS_DOCUMENTS.format(socket=str(agent.socket)))
                assert summaries.stdout.split() == ["l2-vs-l3", "0"], summaries.stdout + summaries.stderr
                theirs = agent.vtopo(b, "check", "l2-vs-l3")
                assert theirs.returncode != 0 and f"belongs to {a}" in theirs.stderr, theirs.stdout + theirs.stderr
            finally:
                destroyed = agent.vtopo(a, "destroy", "l2-vs-l3")
            assert destroyed.returncode == 0, destroyed.stderr
    finally:
        os.umask(old_umask)
    assert snapshot() - before == {}
