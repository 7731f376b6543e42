"""Shared services under concurrency, with a stand-in daemon whose start fails if it already runs (as ovs-ctl
did): processes racing to start it never both start it, and it stops only after the last lab that needs it."""
from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import pytest

from vtopo.host.services import Services, SharedService, host_lock
from vtopo.host.state import StateStore


class FileDaemon:
    """Runs while its pid file exists; start() refuses a running daemon, like `ovs-ctl start` did."""

    def __init__(self, pid_file: Path):
        self.pid_file = pid_file

    def running(self) -> bool:
        return self.pid_file.exists()

    def start(self) -> None:
        time.sleep(0.01)  # a start takes a while: the window the race needs
        fd = os.open(self.pid_file, os.O_CREAT | os.O_EXCL | os.O_WRONLY)  # FileExistsError: "already running"
        os.close(fd)

    def stop(self) -> None:
        self.pid_file.unlink()


def services(root: Path) -> Services:
    daemon = SharedService("fake", "a fake daemon", lambda: FileDaemon(root / "daemon.pid"), lambda op: True)
    return Services(StateStore(root / "state"), {"fake": daemon}, lock_dir=root / "locks")


def deploy_and_destroy(root: Path, lab: str) -> None:
    shared = services(root)
    record = shared.store.create(lab, {"name": lab, "services": ["fake"]})
    shared.ensure(["fake"])
    assert FileDaemon(root / "daemon.pid").running()
    shared.store.forget(record)
    shared.release_unused()


@pytest.mark.privileged  # a lab's record directory belongs to the group vtopo
def test_racing_labs_start_the_daemon_once_and_the_last_one_stops_it(tmp_path):
    context = multiprocessing.get_context("fork")
    for round_ in range(20):
        workers = [context.Process(target=deploy_and_destroy, args=(tmp_path, f"lab{n}")) for n in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(30)
        assert [worker.exitcode for worker in workers] == [0] * 4, f"round {round_}"
        assert not (tmp_path / "daemon.pid").exists(), "stopped after the last lab"
        assert list(tmp_path.iterdir()) == [], "no state, marker or lock is left"


def test_the_lock_file_exists_only_while_it_is_held(tmp_path):
    with host_lock("x", tmp_path / "locks"):
        assert (tmp_path / "locks" / "x.lock").exists()
    assert not (tmp_path / "locks").exists()
