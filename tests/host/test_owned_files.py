"""Root never follows a symlink planted in a directory another user can write (a router's, owned by frr)."""
from __future__ import annotations

import grp
import os
import stat
from pathlib import Path

import pytest

from vtopo import ops as o
from vtopo.host import owned_files
from vtopo.host.applier import Applier, OpFailed


@pytest.fixture
def applier():
    applier = Applier("vttest")
    yield applier
    applier.close()


@pytest.mark.parametrize("planted", ["symlink", "fifo"])
def test_a_config_is_never_written_through_what_another_user_planted(tmp_path: Path, applier, planted: str) -> None:
    victim = tmp_path / "shadow"
    victim.write_text("root:secret\n")
    config = tmp_path / "router" / "zebra.conf"
    config.parent.mkdir()
    if planted == "symlink":
        config.symlink_to(victim)
    else:
        os.mkfifo(config)
    with pytest.raises(OpFailed, match="zebra.conf"):
        applier.apply(o.WriteFile(owner="node r1", path=str(config), content="hostname r1\n"))
    assert victim.read_text() == "root:secret\n"


def test_a_config_is_never_written_through_a_hard_link(tmp_path: Path, applier) -> None:
    """A second name for a file elsewhere, put where root writes a router's configuration: refused before anything
    is truncated or written."""
    victim = tmp_path / "shadow"
    victim.write_text("root:secret\n")
    config = tmp_path / "router" / "frr.conf"
    config.parent.mkdir()
    os.link(victim, config)
    with pytest.raises(OpFailed, match="frr.conf"):
        applier.apply(o.WriteFile(owner="node r1", path=str(config), content="hostname r1\n"))
    assert victim.read_text() == "root:secret\n"


def test_a_config_is_written_when_nothing_was_planted(tmp_path: Path, applier) -> None:
    config = tmp_path / "zebra.conf"
    applier.apply(o.WriteFile(owner="node r1", path=str(config), content="hostname r1\n"))
    assert config.read_text() == "hostname r1\n"


def test_a_private_directory_that_is_a_symlink_is_refused(tmp_path: Path, applier) -> None:
    router = tmp_path / "r1"
    router.mkdir()
    (router / "var-tmp").symlink_to("/etc")
    before = os.stat("/etc")
    start = o.StartProcess(owner="node r1", name="zebra@r1", argv=("true",), netns=None,
                           pid_file=str(router / "zebra.pid"), private_dirs=(("/var/tmp", str(router / "var-tmp")),))
    with pytest.raises(OpFailed, match="var-tmp"):
        applier.apply(start)
    after = os.stat("/etc")
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)


@pytest.mark.privileged  # gives the directory to another user
def test_a_private_directory_under_a_parent_another_user_can_write_is_refused(tmp_path: Path, applier) -> None:
    router = tmp_path / "r1"  # the daemon's own directory: a user other than root could swap its entries
    router.mkdir()
    os.chown(router, 65534, 65534)
    start = o.StartProcess(owner="node r1", name="zebra@r1", argv=("true",), netns=None,
                           pid_file=str(router / "zebra.pid"), private_dirs=(("/var/tmp", str(router / "var-tmp")),))
    with pytest.raises(OpFailed, match="parent can be written by another user"):
        applier.apply(start)
    assert not (router / "var-tmp").exists()


def test_the_shipped_router_keeps_its_private_directories_in_a_directory_of_roots() -> None:
    from vtopo.lab import plan_of
    from vtopo.model import io
    from vtopo.resources import TOPOLOGIES

    plan = plan_of(io.load(TOPOLOGIES / "l2-vs-l3.vtopo"))
    made = {op.path: op.user for op in plan.ops if isinstance(op, o.MakeDirectory)}
    starts = [op for op in plan.ops if isinstance(op, o.StartProcess) and op.private_dirs]
    assert starts
    for start in starts:
        daemon_dir = start.pid_file.rsplit("/", 1)[0]
        assert made[daemon_dir] == "frr"
        for _, source in start.private_dirs:
            parent = source.rsplit("/", 1)[0]
            assert made[parent] == "", f"{source} must sit in a directory owned by root, not by the daemon's user"


@pytest.mark.privileged  # gives directories and files to the group vtopo and the user frr
@pytest.mark.parametrize("umask", [0, 0o077, 0o277])
def test_directories_and_files_get_their_mode_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        lab = tmp_path / "run" / "vtopo" / "vtabc"
        owned_files.make_directory(lab)
        owned_files.make_directory(lab / "r1")
        owned_files.hand_over(str(lab / "r1"), "frr")
        owned_files.write_for_daemon(str(lab / "r1" / "zebra.conf"), "hostname r1\n")
        records = tmp_path / "state" / "labs" / "vtabc"
        owned_files.make_directory(records, owned_files.SHARED, gid=owned_files.clients_gid())
        owned_files.write_file(records / "lab.json", "{}", owned_files.SHARED_FILE, gid=owned_files.clients_gid())
        owned_files.write_file(records / "journal.jsonl", "")
    finally:
        os.umask(old)

    def mode(path: Path) -> int:
        return stat.S_IMODE(path.stat().st_mode)
    assert [mode(path) for path in (tmp_path / "run", tmp_path / "run" / "vtopo", lab, lab / "r1")] == \
        [owned_files.PASSAGE, owned_files.PASSAGE, owned_files.PASSAGE, owned_files.PRIVATE]
    config = (lab / "r1" / "zebra.conf").stat()
    assert (mode(lab / "r1" / "zebra.conf"), config.st_gid) == (0o640, (lab / "r1").stat().st_gid)
    assert [mode(path) for path in (tmp_path / "state", records.parent, records)] == [owned_files.SHARED] * 3
    assert (mode(records / "lab.json"), mode(records / "journal.jsonl")) == (0o640, 0o600)
    assert (records / "lab.json").stat().st_gid == grp.getgrnam("vtopo").gr_gid
