"""`vtopo checkpoint` on a running OSPF ring, as root: a checkpoint kept in the lab's file, a student's changes (an
OSPF cost typed into vtysh, a link pulled, a rate limit, a node stopped, an address added by hand), and a restore that
puts back only what differs: the routers left alone keep their daemons, the rest of the lab runs on, and the undo
brings the changes back. A stage that starts from the checkpoint restores it."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from residue import snapshot
from vtopo.model import io
from vtopo.model.checkpoints import UNDO
from vtopo.model.stages import Stage
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

LAB, PREFIX = "checkpoint-ring", "vcr"
CONVERGED_WITHIN_S = 30.0
COST = "ip ospf cost 50"


def vtopo(*args: str, data: Path | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **({"VTOPO_DATA_DIR": str(data)} if data else {})}
    return subprocess.run([sys.executable, "-m", "vtopo", *args], capture_output=True, text=True, timeout=120,
                          env=environment)


def run_in(node: str, *argv: str) -> str:
    done = vtopo("exec", LAB, node, "--", *argv)
    assert done.returncode == 0, done.stderr
    return done.stdout


def daemons(router: str) -> dict[str, str]:
    """The pid of each of the router's daemons, from their pid files."""
    directory = Path(f"/run/vtopo/{PREFIX}/{router}")
    return {daemon: (directory / f"{daemon}.pid").read_text().strip() for daemon in ("zebra", "ospfd", "staticd")}


def reaches_h3() -> bool:
    return vtopo("exec", LAB, "h1", "--", "ping", "-c", "1", "-W", "1", "10.3.0.10").returncode == 0


def wait_until(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + CONVERGED_WITHIN_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.5)


@pytest.fixture(scope="module")
def ring(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The OSPF ring, deployed from a file of the test's with two stages, the second starting from checkpoint
    `good`; destroyed after the module, leaving nothing."""
    before = snapshot()
    path = tmp_path_factory.mktemp("checkpoints") / "ring.vtopo"
    topology = io.load(TOPOLOGIES / "ospf-ring.vtopo")
    topology.name, topology.prefix = LAB, PREFIX
    topology.stages = [Stage("Break the ring"), Stage("Start again", checkpoint="good")]
    io.save(topology, path)
    deployed = vtopo("deploy", str(path))
    assert deployed.returncode == 0, deployed.stderr
    try:
        wait_until(reaches_h3, "OSPF did not converge")
        yield path
    finally:
        destroyed = vtopo("destroy", LAB)
    assert destroyed.returncode == 0, destroyed.stderr
    assert snapshot() - before == {}, "destroy left something behind"


def break_the_lab() -> None:
    """What a student does: a cost typed into r1's vtysh, the short link pulled, a rate limit on r1-r2, h3
    stopped, an address added to h1 by hand."""
    run_in("r1", "vtysh", "-c", "configure terminal", "-c", "interface eth1", "-c", COST)
    for change in (["link", LAB, "r1", "r3", "down"], ["link", LAB, "r1", "r2", "set", "--rate", "10mbit"],
                   ["node", LAB, "h3", "stop"]):
        done = vtopo(*change)
        assert done.returncode == 0, done.stderr
    run_in("h1", "ip", "address", "add", "10.1.0.99/24", "dev", "eth0")


def is_broken() -> dict[str, bool]:
    """Whether each of the student's changes holds in the running lab."""
    return {"cost": COST in run_in("r1", "vtysh", "-c", "show running-config"),
            "r3:eth1 down": "state DOWN" in run_in("r3", "ip", "-d", "link", "show", "eth1"),
            "rate": "tbf" in run_in("r1", "tc", "qdisc", "show", "dev", "eth1"),
            "h3 stopped": "node h3                       stopped" in vtopo("status", LAB).stdout,
            "address": "10.1.0.99/24" in run_in("h1", "ip", "-brief", "address", "show", "eth0")}


CHANGES = ("cost", "r3:eth1 down", "rate", "h3 stopped", "address")
ALL_BROKEN, NONE_BROKEN = dict.fromkeys(CHANGES, True), dict.fromkeys(CHANGES, False)


def test_a_restore_changes_only_what_differs_and_undo_brings_the_changes_back(ring: Path) -> None:
    kept = vtopo("checkpoint", LAB, "good")
    assert kept.returncode == 0, kept.stderr
    assert kept.stdout == f"kept checkpoint good of lab {LAB} in {ring}: 5 running node(s), 0 stopped, 0 link(s) down\n"
    assert [checkpoint.name for checkpoint in io.load(ring).checkpoints] == ["good"]
    break_the_lab()
    assert is_broken() == ALL_BROKEN
    untouched = {router: daemons(router) for router in ("r2", "r3")}
    r1 = daemons("r1")

    explained = vtopo("checkpoint", LAB, "--restore", "good", "--explain")
    assert explained.returncode == 0, explained.stderr
    for line in ("h3: would start", "r1 would take the checkpoint's state, restarting its daemons with it:",
                 f"-   {COST}", "h1 would take the checkpoint's state, changing only what differs:",
                 "-eth0: 10.1.0.10/24, 10.1.0.99/24", "link r1:eth2-r3:eth1: would go up",
                 "link r1:eth1-r2:eth1: would have no impairment",
                 f"restoring would change 3 node(s) and 2 link(s) of lab {LAB} to checkpoint good"):
        assert line in explained.stdout.splitlines(), explained.stdout
    assert is_broken() == ALL_BROKEN, "--explain changes nothing"

    restored = vtopo("checkpoint", LAB, "--restore", "good")
    assert restored.returncode == 0, restored.stderr
    said = restored.stdout.splitlines()
    assert f"started h3 in lab {LAB}" in said and f"link r1:eth2-r3:eth1 in lab {LAB} is up" in said
    assert "r1 took the checkpoint's state, restarting its daemons with it:" in said
    assert "h1 took the checkpoint's state, changing only what differs:" in said
    assert not any(line.startswith(("r2 ", "r3 ", "h3 took")) for line in said), "only what differs changes"
    assert "deploy --update: applied only the" in restored.stdout and "deployed again" not in restored.stdout
    assert is_broken() == NONE_BROKEN
    assert {router: daemons(router) for router in ("r2", "r3")} == untouched, "r2's and r3's daemons ran on"
    assert daemons("r1")["ospfd"] != r1["ospfd"], "r1 restarted with the checkpoint's configuration"
    wait_until(reaches_h3, "the restored ring does not route h1 to h3")
    assert [checkpoint.name for checkpoint in io.load(ring).checkpoints] == ["good", UNDO]

    undone = vtopo("checkpoint", LAB, "--undo")
    assert undone.returncode == 0, undone.stderr
    assert f"restored 3 node(s) and 2 link(s) of lab {LAB} to checkpoint {UNDO}" in undone.stdout
    assert is_broken() == ALL_BROKEN, "the undo brings each change back"

    again = vtopo("checkpoint", LAB, "--restore", "good")
    assert again.returncode == 0 and is_broken() == NONE_BROKEN, again.stderr
    same = vtopo("checkpoint", LAB, "--restore", "good")
    assert same.stdout == f"lab {LAB} is as checkpoint good has it: nothing to restore\n", same.stdout


def test_a_stage_that_starts_from_a_checkpoint_restores_it(ring: Path, tmp_path: Path) -> None:
    if not any(checkpoint.name == "good" for checkpoint in io.load(ring).checkpoints):
        assert vtopo("checkpoint", LAB, "good").returncode == 0
    run_in("r1", "vtysh", "-c", "configure terminal", "-c", "interface eth1", "-c", COST)
    moved = vtopo("stage", str(ring), "2", "--force", data=tmp_path)
    assert moved.returncode == 0, moved.stderr
    assert moved.stdout.startswith("stage 2 starts from checkpoint good\n"), moved.stdout
    assert "r1 took the checkpoint's state" in moved.stdout and "stage 2 of 2: Start again" in moved.stdout
    assert COST not in run_in("r1", "vtysh", "-c", "show running-config")


@pytest.mark.parametrize(("args", "error"), [
    (["--restore", "nope"], f"error: lab {LAB} has no checkpoint nope (it has: "),
    (["--delete", "nope"], f"error: lab {LAB} has no checkpoint nope (it has: "),
    (["../etc"], "error: checkpoint '../etc': a checkpoint name may hold only letters, digits"),
    (["--restore", "a b"], "error: checkpoint 'a b': a checkpoint name may hold only letters, digits"),
])
def test_bad_input_is_one_line(ring: Path, args: list[str], error: str) -> None:
    done = vtopo("checkpoint", LAB, *args)
    assert done.returncode == 1 and done.stderr.startswith(error) and done.stderr.count("\n") == 1, done.stderr


def test_a_lab_not_running_is_one_line(ring: Path, tmp_path: Path) -> None:
    topology = io.load(ring)
    topology.name = "checkpoint-not-running"
    topology.checkpoints = [checkpoint for checkpoint in topology.checkpoints if checkpoint.name == "good"]
    path = tmp_path / "not-running.vtopo"
    io.save(topology, path)
    for args in ([str(path), "good"], [str(path), "--restore", "good"], ["checkpoint-not-running", "good"]):
        done = vtopo("checkpoint", *args)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1 and "checkpoint-not-running" in done.stderr, done.stderr
    undo = vtopo("checkpoint", str(path), "--undo")
    assert undo.returncode == 1 and undo.stderr == (f"error: lab checkpoint-not-running has no restore to undo: a "
                                                    f"restore keeps the state it replaces as checkpoint {UNDO}\n")
