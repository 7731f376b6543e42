"""Two vtopo processes at once: shared host services (Open vSwitch) start once, stay up while any lab needs them,
and stop after the last lab, whatever the interleaving."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from residue import snapshot
from vtopo.host.ovs import OvsService, vsctl
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

ROUNDS = 10


def vtopo(*args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "vtopo", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def all_succeed(*processes: subprocess.Popen[str]) -> None:
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, f"{process.args[3:]} exited {process.returncode}: {err.strip()}"
        assert "Traceback" not in err


@pytest.fixture
def two_ovs_labs(tmp_path: Path) -> tuple[Path, Path]:
    document = json.loads((TOPOLOGIES / "ovs-openflow.vtopo").read_text())
    copies = []
    for name in ("ovs-a", "ovs-b"):
        document["lab"].update(id=f"lab-{name}", name=name)
        copies.append(tmp_path / f"{name}.vtopo")
        copies[-1].write_text(json.dumps(document))
    return copies[0], copies[1]


def test_concurrent_deploys_start_ovs_once_and_the_last_destroy_stops_it(two_ovs_labs, ovs_stopped):
    a, b = two_ovs_labs
    before = snapshot()
    for round_ in range(ROUNDS):
        all_succeed(vtopo("deploy", a), vtopo("deploy", b))
        assert len(vsctl([["list-br"]]).split()) == 2, f"round {round_}"
        all_succeed(vtopo("destroy", "ovs-a"), vtopo("destroy", "ovs-b"))
        assert not OvsService().running(), f"round {round_}: vtopo started OVS, so the last destroy stops it"
        assert snapshot() - before == {}, f"round {round_}"


def test_a_lab_deployed_while_the_last_other_lab_is_destroyed_keeps_its_ovs(two_ovs_labs, ovs_stopped):
    a, b = two_ovs_labs
    before = snapshot()
    for round_ in range(ROUNDS // 2):
        all_succeed(vtopo("deploy", a))
        all_succeed(vtopo("destroy", "ovs-a"), vtopo("deploy", b))
        assert OvsService().running() and len(vsctl([["list-br"]]).split()) == 1, f"round {round_}"
        all_succeed(vtopo("destroy", "ovs-b"))
        assert not OvsService().running() and snapshot() - before == {}, f"round {round_}"
