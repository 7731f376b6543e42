"""QEMU runs confined: as the unprivileged vtopo-qemu user, under its seccomp sandbox, with the disk image the user
allowed handed over on a descriptor vtopo opened (QEMU never sees the path)."""
from __future__ import annotations

import os
import pwd
import time
from pathlib import Path

import pytest

from residue import snapshot
from vtopo.kinds.environment import Trust
from vtopo.host.deployer import Deployer, DeployError
from vtopo.model.topology import Node, Topology

pytestmark = pytest.mark.privileged


def _vm_lab(name: str, image: str) -> Topology:
    topology = Topology(name=name)
    topology.add_node(Node(id="v1", name="v1", kind="vm", settings={"image": image, "memory_mb": 64}))
    return topology


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {key: value.strip() for key, _, value in (line.partition(":") for line in lines)}


def test_qemu_runs_as_an_unprivileged_user_in_its_sandbox_with_the_image_on_a_descriptor(tmp_path: Path) -> None:
    image = tmp_path / "disk.img"
    image.write_bytes(bytes(1024 * 1024))
    before = snapshot()
    deployer = Deployer()
    report = deployer.deploy(_vm_lab("confined", str(image)), consent=Trust(images=frozenset({str(image)})))
    try:
        pid = int(Path(f"/run/vtopo/{report.prefix}/v1/qemu.pid").read_text().split()[0])
        user = pwd.getpwnam("vtopo-qemu")
        deadline = time.monotonic() + 10  # -runas takes effect once QEMU has set the machine up
        while _status(pid)["Uid"].split()[0] == "0" and time.monotonic() < deadline:
            time.sleep(0.05)
        status = _status(pid)
        assert status["Uid"].split() == [str(user.pw_uid)] * 4 and status["Gid"].split() == [str(user.pw_gid)] * 4
        assert status["Seccomp"] == "2"  # a seccomp filter is in force
        open_files = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        assert str(image) in open_files
        assert str(image) not in Path(f"/proc/{pid}/cmdline").read_text()
    finally:
        deployer.destroy("confined")
    assert snapshot() - before == {}


def test_an_allowed_image_that_is_a_symlink_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    link = tmp_path / "disk.img"
    link.symlink_to("/etc/shadow")
    before = snapshot()
    with pytest.raises(DeployError, match="is not a regular file"):
        Deployer().deploy(_vm_lab("symlinked", str(link)), consent=Trust(images=frozenset({str(link)})))
    assert snapshot() - before == {}
