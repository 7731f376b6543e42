"""As lenient as FRR: FRR's topotest ospf_topo1 (tests/topotests/ospf_topo1 at FRR's tag frr-8.4.4, the FRR this host
runs; the daemon files and expected outputs copied unchanged into tests/interop/ospf_topo1/) holds 24 lines FRR 8.4
skips with a warning (`int rX-ethY` after `router ospf6` is taken as that router's deprecated `interface ... area`, left
incomplete, and the interface lines under it are then unknown). vtopo validates it with a warning naming each line,
deploys it verbatim, and its routers converge to the routes the topotest expects."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time

import pytest

from residue import snapshot
from tests.interop.topotests import HERE, OSPF_TOPO1
from vtopo.deployed import DeployedLab
from vtopo.host.deployer import Deployer
from vtopo.lab import open_lab
from vtopo.model import io

CONVERGE_SECONDS = 120  # the topotests wait up to 120 s
SKIPPED = re.compile(r"warning: node (r\d) at \$\.nodes\[\d\]\.settings\.config: FRR skips line (\d+) of its "
                     r"configuration \('([^']*)'\): % (?:Command incomplete|Unknown command); it loads the rest")
IPV6_ROUTE = re.compile(r"\*N (\S+)\s+(\S+)\s+\S+\s+(\S+)")  # a selected route of `show ipv6 ospf6 route`


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR is not installed: validate leaves FRR's parser out")
def test_validate_names_each_line_frr_skips_and_passes() -> None:
    result = subprocess.run([sys.executable, "-m", "vtopo", "validate", str(OSPF_TOPO1.path)], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    skipped = SKIPPED.findall(result.stderr)
    assert len(skipped) == 24 and len(result.stderr.splitlines()) == 24, result.stderr
    for router, number, text in skipped:
        line = OSPF_TOPO1.config(router).splitlines()[int(number) - 1]
        assert line.strip() == text and (re.fullmatch(r"int r\d-eth\d", text) or text.startswith("ipv6 ospf6")), line


def test_the_lab_is_the_topotest_translated() -> None:
    assert io.dumps(open_lab(OSPF_TOPO1.path).topology) == io.dumps(OSPF_TOPO1.lab())


def _network_routes(text: str) -> list[str]:
    """The OSPF network routing table of `show ip ospf route`, a line per route with its next hops, spaces
    squeezed."""
    table = text.split("============ OSPF router routing table")[0]
    return [" ".join(line.split()) for line in table.splitlines()[1:] if line.strip()]


def _selected_ipv6(text: str) -> set[tuple[str, str, str]]:
    """(type, prefix, interface) of each selected route of `show ipv6 ospf6 route`: next hops are link-local
    addresses, which differ from run to run."""
    return {(match.group(1), match.group(2), match.group(3)) for match in map(IPV6_ROUTE.match, text.splitlines())
            if match}


def _differences(lab: DeployedLab) -> list[str]:
    differences = []
    for router in OSPF_TOPO1.routers:
        for command, file, shape in (("show ip ospf route", "ospfroute.txt", _network_routes),
                                     ("show ipv6 ospf6 route", "ospf6route.txt", _selected_ipv6)):
            shown = subprocess.run(lab.command_in(router, ["vtysh", "-c", command]), capture_output=True, text=True)
            got, expected = shape(shown.stdout), shape((HERE / "ospf_topo1" / router / file).read_text())
            if got != expected:
                differences.append(f"{router} `{command}`: {got} is not {expected}")
    return differences


@pytest.mark.privileged
def test_the_topotest_deploys_verbatim_and_converges_as_frr_expects() -> None:
    before = snapshot()
    deployer = Deployer()
    topology = open_lab(OSPF_TOPO1.path).topology
    report = deployer.deploy(topology)
    try:
        skipped = [notice for notice in report.notices if "FRR skipped" in notice]
        assert len(skipped) == 4, report.notices
        assert "FRR skipped 9 line(s) of its configuration and loaded the rest (line 44, 45, 46, 48, 49, 50, 52, 53, " \
               "54; `vtopo validate` names them)" in " ".join(skipped), skipped
        lab = DeployedLab.find(topology.name)
        shown = subprocess.run(lab.command_in("r3", ["vtysh", "-c", "show running-config"]), capture_output=True,
                               text=True).stdout
        # what FRR 8.4 made of `interface r3-eth2 area 0.0.0.1` under `router ospf6`: the interface's own line
        assert "interface r3-eth2\n ip address 172.16.0.2/24\n" in shown and " ipv6 ospf6 area 0.0.0.1\n" in shown, shown
        deadline = time.monotonic() + CONVERGE_SECONDS
        while differences := _differences(lab):
            assert time.monotonic() < deadline, "\n".join(differences)
            time.sleep(1)
    finally:
        deployer.destroy(topology.name)
    assert snapshot() - before == {}

