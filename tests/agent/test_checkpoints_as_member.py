"""Checkpoints as a member of the vtopo group, through a real agent: the owner keeps one in their own file, changes
OSPF in vtysh and pulls a link, restores it (only r1 restarts) and undoes the restore; another member may neither
take nor restore a checkpoint of that lab, and nothing is left after."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from members import owned_by
from residue import snapshot
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

LAB = "member-checkpoints"
COST = "ip ospf cost 70"


def test_a_member_keeps_restores_and_undoes_a_checkpoint_of_their_own_lab_only(agent, users, readable_dir):
    a, b = users["a"].pw_name, users["b"].pw_name
    before = snapshot()
    topology = io.load(TOPOLOGIES / "ospf-ring.vtopo")
    topology.name, topology.prefix = LAB, "vmc"
    path = readable_dir / f"{LAB}.vtopo"
    io.save(topology, path)
    owned_by(path, users["a"])
    deployed = agent.vtopo(a, "deploy", str(path))
    assert deployed.returncode == 0, deployed.stderr

    def vtysh(*words: str) -> str:
        shown = agent.vtopo(a, "exec", LAB, "r1", "--", "vtysh", *words)
        assert shown.returncode == 0, shown.stderr
        return shown.stdout

    def link_down() -> bool:
        status = agent.vtopo(a, "status", LAB).stdout
        return "link r1:eth2-r3:eth1          down" in status

    try:
        kept = agent.vtopo(a, "checkpoint", LAB, "start")
        assert kept.returncode == 0, kept.stderr
        assert [checkpoint.name for checkpoint in io.load(path).checkpoints] == ["start"]
        assert path.stat().st_uid == users["a"].pw_uid, "the member's client wrote their own file"
        vtysh("-c", "configure terminal", "-c", "interface eth1", "-c", COST)
        assert agent.vtopo(a, "link", LAB, "r1", "r3", "down").returncode == 0

        for refused in (agent.vtopo(b, "checkpoint", LAB, "mine"), agent.vtopo(b, "checkpoint", LAB, "--restore",
                                                                               "start"),
                        agent.vtopo(b, "checkpoint", str(path), "--restore", "start")):
            assert refused.returncode == 1 and f"belongs to {a}; only {a} or root may" in refused.stderr, \
                refused.stderr
        assert COST in vtysh("-c", "show running-config") and link_down(), "b changed nothing"

        restored = agent.vtopo(a, "checkpoint", LAB, "--restore", "start")
        assert restored.returncode == 0, restored.stderr
        assert "r1 took the checkpoint's state, restarting its daemons with it:" in restored.stdout
        assert f"link r1:eth2-r3:eth1 in lab {LAB} is up" in restored.stdout
        assert not any(line.startswith(("r2 ", "r3 ", "h1 ", "h3 ")) for line in restored.stdout.splitlines())
        assert COST not in vtysh("-c", "show running-config") and not link_down()
        ospfd = Path("/run/vtopo/vmc/r1/ospfd.pid").read_text().strip()
        uid = next(line.split()[1] for line in Path(f"/proc/{ospfd}/status").read_text().splitlines()
                   if line.startswith("Uid:"))
        assert uid == str(users["a"].pw_uid), "r1's restarted ospfd runs as the member, in their user namespace"

        undone = agent.vtopo(a, "checkpoint", LAB, "--undo")
        assert undone.returncode == 0, undone.stderr
        assert COST in vtysh("-c", "show running-config") and link_down()
        assert [checkpoint.name for checkpoint in io.load(path).checkpoints] == ["start", "before-restore"]
    finally:
        destroyed = agent.vtopo(a, "destroy", LAB)
        shutil.rmtree(readable_dir, ignore_errors=True)
    assert destroyed.returncode == 0, destroyed.stderr
    assert snapshot() - before == {}
