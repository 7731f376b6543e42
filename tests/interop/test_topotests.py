"""FRR's own topotests, deployed as vtopo labs: each router's JSON (routes, neighbours) matches the topotest's expected
files the way the topotest compares them (json_cmp: the expected keys must match)."""
from __future__ import annotations

import json
import subprocess
import time

import pytest

from residue import snapshot
from tests.interop.topotests import TOPOTESTS, Topotest, json_cmp
from vtopo.deployed import DeployedLab
from vtopo.host.deployer import Deployer
from vtopo.lab import open_lab
from vtopo.model import io

CONVERGE_SECONDS = 120  # the topotests wait up to 120 s (240 tries, 0.5 s apart)


def test_the_labs_are_the_topotests_translated() -> None:
    """The .vtopo files are what topotests.py makes of the topotests' files: nothing typed by hand."""
    for topotest in TOPOTESTS:
        assert io.dumps(open_lab(topotest.path).topology) == io.dumps(topotest.lab()), topotest.name
        for router in topotest.routers:
            assert open_lab(topotest.path).topology.node_named(router).settings["config"] == topotest.config(router)


def test_json_cmp_holds_only_what_is_expected() -> None:
    output = {"10.0.0.0/24": [{"protocol": "ospf", "metric": 20, "nexthops": [{"ip": "10.0.1.2"}, {"ip": "10.0.2.2"}]}],
              "10.9.0.0/16": [{"protocol": "bgp"}]}
    assert json_cmp(output, {"10.0.0.0/24": [{"protocol": "ospf", "nexthops": [{"ip": "10.0.2.2"}]}]}) == []
    assert json_cmp(output, {"10.1.0.0/24": None}) == []
    assert json_cmp(output, {"10.9.0.0/16": None}) == ["$.10.9.0.0/16: present, expected absent"]
    assert json_cmp(output, {"10.0.0.0/24": [{"metric": 10}]}) == \
        ['$.10.0.0.0/24[0]: no element matches {"metric": 10}']


def _matches(lab: DeployedLab, topotest: Topotest) -> list[str]:
    """What still differs from the topotest's expected files, router by router."""
    differences = []
    for router in topotest.routers:
        for file, command in topotest.expected.items():
            expected = topotest.expected_json(router, file)
            if expected is None:
                continue
            shown = subprocess.run(lab.command_in(router, ["vtysh", "-c", command]), capture_output=True, text=True)
            output = json.loads(shown.stdout or "{}")
            differences += [f"{router} `{command}` {difference}" for difference in json_cmp(output, expected)]
    return differences


@pytest.mark.privileged
@pytest.mark.parametrize("topotest", TOPOTESTS, ids=[t.name for t in TOPOTESTS])
def test_a_topotest_converges_as_frr_expects(topotest: Topotest) -> None:
    before = snapshot()
    deployer = Deployer()
    topology = open_lab(topotest.path).topology
    deployer.deploy(topology)
    try:
        lab = DeployedLab.find(topology.name)
        deadline = time.monotonic() + CONVERGE_SECONDS
        while differences := _matches(lab, topotest):
            assert time.monotonic() < deadline, "\n".join(differences[:20])
            time.sleep(1)
    finally:
        deployer.destroy(topology.name)
    assert snapshot() - before == {}
