"""Two vtopo processes working on two Open vSwitch labs: rounds that check OVS starts once, stays up while any lab
needs it and stops after the last lab. The suite runs one round of each (tests/labs/test_concurrency.py); the soak
benchmark repeats them (tests/benchmarks/test_concurrency_bench.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from residue import Residue, snapshot
from vtopo.host.ovs import OvsService, vsctl
from vtopo.resources import TOPOLOGIES


def vtopo(*args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "vtopo", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def all_succeed(*commands: tuple[str | Path, ...], at_once: bool) -> None:
    """Run the vtopo commands all at once, or one after another."""
    started: list[subprocess.Popen[str]] = []
    for command in commands:
        started.append(vtopo(*command))
        if not at_once:
            _succeeded(started[-1])
    for process in started:
        _succeeded(process)


def _succeeded(process: subprocess.Popen[str]) -> None:
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, f"{process.args[3:]} exited {process.returncode}: {err.strip()}"
    assert "Traceback" not in err


def two_ovs_labs(directory: Path) -> tuple[Path, Path]:
    """Two copies of ovs-openflow, ovs-a and ovs-b."""
    document = json.loads((TOPOLOGIES / "ovs-openflow.vtopo").read_text())
    copies = []
    for name in ("ovs-a", "ovs-b"):
        document["lab"].update(id=f"lab-{name}", name=name)
        copies.append(directory / f"{name}.vtopo")
        copies[-1].write_text(json.dumps(document))
    return copies[0], copies[1]


def deploy_both_then_destroy_both(labs: tuple[Path, Path], before: Residue, round_: int, at_once: bool) -> None:
    """Both labs deployed (at once: both want OVS started), then both destroyed (at once: each may be the last)."""
    a, b = labs
    all_succeed(("deploy", a), ("deploy", b), at_once=at_once)
    assert len(vsctl([["list-br"]]).split()) == 2, f"round {round_}"
    all_succeed(("destroy", "ovs-a"), ("destroy", "ovs-b"), at_once=at_once)
    assert not OvsService().running(), f"round {round_}: vtopo started OVS, so the last destroy stops it"
    assert snapshot() - before == {}, f"round {round_}"


def deploy_one_while_the_other_goes(labs: tuple[Path, Path], before: Residue, round_: int, at_once: bool) -> None:
    """ovs-a deployed, then destroyed while ovs-b is deployed (at once: b must keep the OVS a's destroy would stop)."""
    a, b = labs
    all_succeed(("deploy", a), at_once=at_once)
    all_succeed(("destroy", "ovs-a"), ("deploy", b), at_once=at_once)
    assert OvsService().running() and len(vsctl([["list-br"]]).split()) == 1, f"round {round_}"
    all_succeed(("destroy", "ovs-b"), at_once=at_once)
    assert not OvsService().running() and snapshot() - before == {}, f"round {round_}"
