"""Direct QEMU runs confined: started by vtopo as the unprivileged vtopo-qemu user, with no capability, under its full
seccomp sandbox, in the foreground, with the disk image the user allowed (and its taps) handed over on descriptors
vtopo opened (QEMU never sees the path)."""
from __future__ import annotations

import os
import pwd
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from residue import snapshot
from vtopo.lab_terms import Trust
from vtopo.host.deployer import Deployer, DeployError
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

pytestmark = pytest.mark.privileged

BOOTED = b"vtopo-disk-booted"
BOOT_SECONDS = 60


def _vm_lab(name: str, image: str) -> Topology:
    topology = Topology(name=name)
    topology.add_node(Node(id="v1", name="v1", kind="vm", settings={"image": image, "memory_mb": 64}))
    return topology


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {key: value.strip() for key, _, value in (line.partition(":") for line in lines)}


def _boot_sector(message: bytes) -> bytes:
    """A disk whose boot sector writes `message` to the first serial port and halts: proof that the guest read its
    disk through the descriptor vtopo handed QEMU."""
    code = bytes([0xFC, 0x31, 0xC0, 0x8E, 0xD8,  # cld; xor ax,ax; mov ds,ax
                  0xBA, 0xF8, 0x03,  # mov dx,0x3f8
                  0xBE, 0x16, 0x7C,  # mov si,0x7c16 (the message, below)
                  0xAC, 0x84, 0xC0, 0x74, 0x03, 0xEE, 0xEB, 0xF8,  # next: lodsb; test al,al; jz done; out dx,al; jmp
                  0xF4, 0xEB, 0xFD])  # done: hlt; jmp done
    assert len(code) == 0x16
    sector = (code + message + b"\0").ljust(510, b"\0") + b"\x55\xaa"
    return sector.ljust(1024 * 1024, b"\0")


def assert_confined(pid: int) -> None:
    """What a guest that broke out of QEMU would hold: an unprivileged user's process, no capability, no way to
    gain one, a seccomp filter that refuses fork, exec and setuid."""
    user = pwd.getpwnam("vtopo-qemu")
    status = _status(pid)
    assert status["Uid"].split() == [str(user.pw_uid)] * 4 and status["Gid"].split() == [str(user.pw_gid)] * 4
    assert status["Groups"] in ("", str(user.pw_gid)) or set(status["Groups"].split()) <= {str(user.pw_gid)}
    for capabilities in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(status[capabilities], 16) == 0, (capabilities, status[capabilities])
    assert status["NoNewPrivs"] == "1"
    assert status["Seccomp"] == "2" and int(status["Seccomp_filters"]) >= 1, "a seccomp filter is in force"
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    sandbox = argv[argv.index("-sandbox") + 1].split(",")
    assert {"on", "obsolete=deny", "elevateprivileges=deny", "spawn=deny", "resourcecontrol=deny"} <= set(sandbox)
    assert "-runas" not in argv and "-daemonize" not in argv, "QEMU never held root: nothing to drop"


def _wait_for(path: Path, text: bytes) -> None:
    deadline = time.monotonic() + BOOT_SECONDS
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_bytes():
            return
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared in {path}: {path.read_bytes()[-500:] if path.exists() else ''!r}")


def test_qemu_boots_a_disk_image_as_an_unprivileged_user_in_its_sandbox_with_the_image_on_a_descriptor(
        tmp_path: Path) -> None:
    image = tmp_path / "disk.img"
    image.write_bytes(_boot_sector(BOOTED))
    before = snapshot()
    deployer = Deployer()
    report = deployer.deploy(_vm_lab("confined", str(image)), consent=Trust(images=frozenset({str(image)})))
    try:
        run = Path(f"/run/vtopo/{report.prefix}/v1")
        pid = int((run / "qemu.pid").read_text().split()[0])
        assert_confined(pid)
        open_files = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        assert str(image) in open_files
        assert str(image) not in Path(f"/proc/{pid}/cmdline").read_text()
        _wait_for(run / "console.log", BOOTED)
        user = pwd.getpwnam("vtopo-qemu")
        directory = run.stat()
        assert (directory.st_uid, stat.S_IMODE(directory.st_mode)) == (user.pw_uid, 0o700)
        for name, mode in (("console.log", 0o600), ("qemu.pid", 0o600)):
            made = (run / name).stat()
            assert (made.st_uid, stat.S_IMODE(made.st_mode)) == (user.pw_uid, mode), name
    finally:
        deployer.destroy("confined")
    assert snapshot() - before == {}


def test_qemu_on_a_bridge_tap_is_confined_and_holds_the_tap_vtopo_attached(deployed) -> None:
    topology = Topology(name="confined-tap")
    topology.add_node(Node(id="br", name="br", kind="bridge"))
    topology.add_node(Node(id="v1", name="v1", kind="vm", settings={"memory_mb": 128}))
    topology.add_node(Node(id="c1", name="c1", kind="container"))
    topology.add_link(Link(id="l1", a=Endpoint("v1", "nic0", Interface(addresses=["10.9.0.2/24"])),
                           b=Endpoint("br", "p1")))
    topology.add_link(Link(id="l2", a=Endpoint("c1", "eth0", Interface(addresses=["10.9.0.3/24"])),
                           b=Endpoint("br", "p2")))
    lab = deployed(topology)
    prefix = lab.lab.context.names.prefix
    run = Path(f"/run/vtopo/{prefix}/v1")
    pid = int((run / "qemu.pid").read_text().split()[0])
    assert_confined(pid)
    assert os.readlink(f"/proc/{pid}/fd/3") == "/dev/net/tun", "the tap vtopo attached, on fd 3"
    assert f"iff:\t{prefix}-v1-nic0" in Path(f"/proc/{pid}/fdinfo/3").read_text()
    _wait_for(run / "console.log", b"vtopo-guest ready")
    assert lab.pings("c1", "v1")


KILLED_ONCE_QEMU_RUNS = """
import os, sys
from vtopo.ops import StartProcess
from vtopo.host.applier import Applier
from vtopo.host.deployer import Deployer
from vtopo.lab_terms import Trust
from vtopo.model.topology import Node, Topology
real = Applier.apply
def apply(self, op):
    real(self, op)
    if isinstance(op, StartProcess):
        os._exit(9)  # killed mid-deploy, with QEMU running: no rollback, no destroy
Applier.apply = apply
topology = Topology(name="confined-killed")
topology.add_node(Node(id="v1", name="v1", kind="vm", settings={"image": sys.argv[1], "memory_mb": 64}))
Deployer().deploy(topology, consent=Trust(images=frozenset({sys.argv[1]})))
"""


def test_kill_9_of_vtopo_with_an_unprivileged_qemu_running_then_cleanup_leaves_nothing(tmp_path: Path) -> None:
    image = tmp_path / "disk.img"
    image.write_bytes(_boot_sector(BOOTED))
    before = snapshot()
    crashed = subprocess.run([sys.executable, "-c", KILLED_ONCE_QEMU_RUNS, str(image)])
    assert crashed.returncode == 9
    assert (snapshot() - before).get("processes"), "QEMU outlived the vtopo that started it (its own session)"
    done = subprocess.run([sys.executable, "-m", "vtopo", "cleanup"], capture_output=True, text=True)
    assert done.returncode == 0 and "confined-killed" in done.stdout, done.stdout + done.stderr
    assert snapshot() - before == {}


def test_an_allowed_image_that_is_a_symlink_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    link = tmp_path / "disk.img"
    link.symlink_to("/etc/shadow")
    before = snapshot()
    with pytest.raises(DeployError, match="is not a regular file"):
        Deployer().deploy(_vm_lab("symlinked", str(link)), consent=Trust(images=frozenset({str(link)})))
    assert snapshot() - before == {}
