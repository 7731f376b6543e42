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


def test_the_shipped_routers_daemons_start_inside_their_node_with_its_own_files() -> None:
    """No daemon of a router reads or writes a path of the host's: it starts inside its node, whose /etc/frr,
    /run/frr and /var/log/frr are the router's own directory."""
    from vtopo.compile.compiler import compile_plan
    from vtopo.compile.resolve import resolve
    from vtopo.lab import registry
    from vtopo.model import io
    from vtopo.resources import TOPOLOGIES

    plan = compile_plan(resolve(io.load(TOPOLOGIES / "l2-vs-l3.vtopo"), registry()))
    binds = {op.netns: op.binds for op in plan.ops if isinstance(op, o.IsolateNode)}
    starts = [op for op in plan.ops if isinstance(op, o.StartProcess) and "/usr/lib/frr/" in op.argv[0]]
    assert starts
    for start in starts:
        assert f"--mount=/run/vtopo/ns/{plan.prefix}/{start.netns.removeprefix(plan.prefix + '-')}.mnt" in start.enter
        directory = start.pid_file.rsplit("/", 1)[0]
        assert sorted(binds[start.netns]) == [(directory, "/etc/frr"), (directory, "/run/frr"),
                                              (directory, "/var/log/frr")]
        assert all(word.startswith(("/run/frr", "file:/var/log/frr")) for word in start.argv if "/" in word
                   and not word.startswith("/usr/lib/frr/") and word != "/dev/null")


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
