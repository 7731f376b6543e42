"""Reconvergence after a link goes down, on a deployed ospf-reconvergence: the outage of h1's pings to h3 when the
link they take goes down, the path round by r2 while it is down, the link up again and the pings back on it after
each run; a link off their path is said to be one, and is up again after. The same with eBGP, whose routers carry
their own FRR configuration."""
from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest

from residue import snapshot
from vtopo import lab_operations
from vtopo.deployed import DeployedLab
from vtopo.experiment.runner import ExperimentRun
from vtopo.host.deployer import Deployer
from vtopo.lab import open_lab
from vtopo.model.topology import Topology
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

CONVERGED_WITHIN_S = 40.0


@contextmanager
def _deployed(name: str) -> Iterator[tuple[DeployedLab, Topology]]:
    before = snapshot()
    topology = open_lab(TOPOLOGIES / f"{name}.vtopo").topology
    Deployer().deploy(topology)
    try:
        yield DeployedLab.find(topology.name), topology
    finally:
        Deployer().destroy(topology.name)
    assert snapshot() - before == {}


@pytest.fixture(scope="module")
def ospf_lab() -> Iterator[tuple[DeployedLab, Topology]]:
    with _deployed("ospf-reconvergence") as lab:
        yield lab


def _run(lab: DeployedLab, topology: Topology, repeats: int, **options: object) -> ExperimentRun:
    test = topology.experiment.tests[0]
    experiment = replace(topology.experiment, tests=[replace(test, options={**test.options, **options})])
    run = ExperimentRun(lab, experiment, repeats=repeats, warmup=0, links=lab_operations)
    assert run.wait_until_answering(CONVERGED_WITHIN_S) == []
    return run


def test_the_outage_is_measured_round_the_other_path_and_the_link_is_back_after(ospf_lab):
    lab, topology = ospf_lab
    steps = list(_run(lab, topology, 2).steps())
    cell = steps[-1].cell
    assert cell.complete and len(cell.values) == 2, cell.errors
    assert all(0.0 <= value < 1.0 for value in cell.values), "carrier loss: SPF at once, no dead interval"
    for step in steps:
        record = step.record
        assert record.status == "ok" and record.ttl_after == record.ttl_before - 1, "round by r2: one router more"
        assert record.seconds == record.lost * 0.005
    assert "dev eth1" in _run_in(lab, "r1", "ip", "-4", "route", "show", "10.3.0.0/24"), "over the link again"
    ospf = _run_in(lab, "r1", "vtysh", "-c", "show ip ospf")  # the timers docs/reference-experiments.md gives
    assert "Initial SPF scheduling delay 0 millisec(s)" in ospf and "Minimum hold time between consecutive SPFs 50 " \
        "millisec(s)" in ospf and "Maximum hold time between consecutive SPFs 5000 millisec(s)" in ospf, ospf


def test_a_link_off_the_path_is_said_to_be_one_and_is_up_again_after(ospf_lab):
    lab, topology = ospf_lab
    run = _run(lab, topology, 1, link="r2 r3", timeout_s=2)
    cell = next(step.cell for step in run.steps())
    assert cell.values == [] and cell.errors == [
        "taking link r2–r3 down did not interrupt the pings from h1 to 10.3.0.10 within 2 s: is the link on their "
        "path?"]
    said = lab_operations.set_link_state(topology.name, "r2", "r3", up=False)  # refused ("is down already") were it still down
    assert said == f"link r2:eth1-r3:eth2 in lab {topology.name} is down: r2:eth1 stays up without carrier and " \
                   "r3:eth2 is set down (a veth between two nodes cannot lose carrier at both ends)"
    lab_operations.set_link_state(topology.name, "r2", "r3", up=True)


def test_ebgp_takes_the_path_it_holds_already_when_its_session_ends_with_the_link():
    with _deployed("bgp-reconvergence") as (lab, topology):
        cell = next(step.cell for step in _run(lab, topology, 1).steps())
        assert cell.complete and 0.0 <= cell.values[0] < 1.0, cell.errors
        assert "65002 65003" in _run_in(lab, "r1", "vtysh", "-c", "show ip bgp 10.3.0.0/24"), "the way round, held"


def _run_in(lab: DeployedLab, node: str, *argv: str) -> str:
    return subprocess.run(lab.command_in(node, list(argv)), capture_output=True, text=True, check=True).stdout
