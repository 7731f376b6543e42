"""Bad files and bad labs give one clear message each, naming the place, and exit code 2. No tracebacks."""
from __future__ import annotations

import pytest

from golden import GOLDEN, assert_golden
from vtopo.cli.main import main

INVALID = sorted((GOLDEN / "invalid").glob("*.vtopo"))


@pytest.mark.parametrize("lab_file", INVALID, ids=[p.stem for p in INVALID])
def test_validate_reports_problems(lab_file, capsys):
    code = main(["validate", "--offline", str(lab_file)])
    captured = capsys.readouterr()
    output = captured.err.replace(str(lab_file), lab_file.name)
    assert "Traceback" not in output
    assert_golden(lab_file.with_suffix(".txt"), output)
    has_errors = "error:" in output
    assert code == (2 if has_errors else 0)


def test_missing_file_is_a_clear_error(capsys, tmp_path):
    assert main(["validate", str(tmp_path / "nope.vtopo")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_plan_of_invalid_lab_exits_2(capsys):
    assert main(["plan", "--offline", str(GOLDEN / "invalid" / "passthru-two-children.vtopo")]) == 2
    assert "passthru" in capsys.readouterr().err


def test_delay_without_netem_names_the_link():
    from vtopo.lab_terms import HostFacts
    from vtopo.compile.resolve import resolve
    from vtopo.lab import open_lab, registry
    from vtopo.model.topology import Impairment
    from vtopo.resources import TOPOLOGIES

    topology = open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology
    link = next(iter(topology.links.values()))
    topology.update_link(link.id, impairment=Impairment(delay_ms=40))
    problems = resolve(topology, registry(), HostFacts(netem=False, probed=True)).problems
    assert [str(p) for p in problems] == ["error: link c1:eth0-br0:p1: delay, jitter and loss need the kernel's netem "
                                          "qdisc (sch_netem), which this kernel does not have; only a rate limit "
                                          "(tbf) can be applied here"]
    assert resolve(topology, registry(), HostFacts(netem=True)).problems == ()


def test_problems_name_settings_by_their_form_labels_not_their_file_keys():
    from vtopo.lab_terms import HostFacts
    from vtopo.compile.resolve import resolve
    from vtopo.lab import open_lab, registry
    from vtopo.resources import TOPOLOGIES

    topology = open_lab(TOPOLOGIES / "l2-vs-l3.vtopo").topology
    topology.node_named("r1").settings["router_id"] = "not-an-ip"
    topology.node_named("h1").settings["default_route"] = "nonsense"
    topology.node_named("h2").settings["default_route"] = "192.0.2.1"
    texts = [str(p) for p in resolve(topology, registry(), HostFacts()).problems]
    assert "error: node r1: Router ID 'not-an-ip' must be an IPv4 address" in texts
    assert "error: node h1: Default gateway 'nonsense' is not an IP address" in texts
    assert any(text.startswith("error: node h2: Default gateway 192.0.2.1 is not on any") for text in texts), texts
    assert not any("router_id" in text or "default_route" in text for text in texts), texts


def test_offline_validation_claims_nothing_about_a_host_it_did_not_probe(capsys):
    from vtopo.lab_terms import HostFacts
    from vtopo.compile.resolve import resolve
    from vtopo.lab import open_lab, registry
    from vtopo.model.topology import Impairment
    from vtopo.resources import TOPOLOGIES

    lab_file = TOPOLOGIES / "vhost-on-off.vtopo"
    assert main(["validate", "--offline", str(lab_file)]) == 0
    assert capsys.readouterr().out == f"{lab_file}: valid (4 nodes, 2 links)\n"
    topology = open_lab(lab_file).topology
    probed = [str(p) for p in resolve(topology, registry(), HostFacts(probed=True)).problems]
    assert "warning: node von: KVM is not usable here, so this VM runs under TCG emulation (slower)" in probed
    assert "warning: node von: vhost-net is requested but this host's kernel has no vhost-net; the VM runs with " \
           "vhost=off" in probed
    link = next(iter(topology.links.values()))
    topology.update_link(link.id, impairment=Impairment(delay_ms=40))
    assert resolve(topology, registry(), HostFacts()).problems == ()  # netem is not known to be missing either
