"""A router's configuration as FRR's own text: the daemons a router runs, an empty router, what a text may not do,
the lines FRR skips in validate, and what `vtopo save` keeps of a running lab."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from vtopo import ops as o
from vtopo.kinds.running import SavedState
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model import io
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology
from vtopo.resources import TOPOLOGIES
from vtopo.saving import apply_state
from vtopo_kinds.frr_config import file_commands, kept_running_config

BGP_AND_STATIC = """hostname r1
interface eth0
 ip address 10.0.0.1/24
!
router bgp 65001
 neighbor 10.0.0.2 remote-as 65002
 neighbor 10.0.0.2 bfd
!
ip route 10.9.0.0/16 10.0.0.2
ipv6 route 2001:db8:9::/48 2001:db8::2
"""


def two_routers(config: str = "", ipv6: bool = False) -> Topology:
    topology = Topology(name="pair", prefix="vpr")
    topology.add_node(Node(id="r1", name="r1", kind="router", settings={"config": config} if config else {}))
    topology.add_node(Node(id="r2", name="r2", kind="router"))
    a = ["10.0.0.1/30"] + (["2001:db8::1/64"] if ipv6 else [])
    b = ["10.0.0.2/30"] + (["2001:db8::2/64"] if ipv6 else [])
    topology.add_link(Link(id="l1", a=Endpoint("r1", "eth0", Interface(addresses=a)),
                           b=Endpoint("r2", "eth0", Interface(addresses=b))))
    return topology


def started(topology: Topology, router: str) -> list[str]:
    return [op.name.split("@")[0] for op in compile_plan(resolve(topology, registry())).ops
            if isinstance(op, o.StartProcess) and op.owner == f"node {router}"]


ALL_DAEMONS = ["zebra", "ospfd", "ospf6d", "bgpd", "ripd", "ripngd", "isisd", "staticd", "bfdd"]


def test_a_router_runs_every_daemon_unless_its_settings_name_fewer() -> None:
    """Every course daemon, whatever the text says (what a student types into vtysh is taken); the `daemons` setting
    names fewer, and zebra and staticd always run."""
    assert started(two_routers(BGP_AND_STATIC), "r1") == ALL_DAEMONS
    assert started(two_routers(), "r1") == ALL_DAEMONS
    assert started(two_routers("hostname r1\n"), "r1") == ALL_DAEMONS
    fewer = two_routers(BGP_AND_STATIC)
    fewer.nodes["r1"].settings["daemons"] = ["bgpd", "bfdd"]
    assert started(fewer, "r1") == ["zebra", "bgpd", "staticd", "bfdd"]
    fewer.nodes["r1"].settings["daemons"] = ["staticd"]
    assert started(fewer, "r1") == ["zebra", "staticd"]


def test_an_ospf_instance_runs_ospfd_as_that_instance_for_a_configuration_that_names_it() -> None:
    """FRR's ospfd_instances: ospfd -n 1 takes `router ospf 1` (a plain ospfd skips it); its pid file and vty socket
    are ospfd-1's. vtopo's own OSPF names no instance, so a router that generates it may not set one."""
    lab = two_routers("router ospf 1\n ospf router-id 10.0.0.1\n")
    lab.nodes["r1"].settings["ospf_instance"] = 1
    ospfd = next(op for op in compile_plan(resolve(lab, registry())).ops if isinstance(op, o.StartProcess) and op.name == "ospfd-1@r1")
    assert ospfd.argv[1:3] == ("-n", "1") and ospfd.ready_path.endswith("/ospfd-1.vty")
    assert "process:ospfd-1@r1" in next(op for op in compile_plan(resolve(lab, registry())).ops
                                        if isinstance(op, o.LoadConfig) and op.owner == "node r1").after
    lab.nodes["r2"].settings["ospf_instance"] = 2
    assert [str(p) for p in resolve(lab, registry()).problems] == ["error: node r2: OSPF instance 2 needs a configuration of the "
                                                  "router's own that names it (`router ospf 2`); the OSPF vtopo writes "
                                                  "names none"]


def test_an_empty_router_is_a_valid_start() -> None:
    """Generate OSPF off and no text: the router's frr.conf is empty, its daemons all run, and the lab is valid (no
    OSPF design check speaks of a router that runs no OSPF)."""
    topology = two_routers()
    topology.nodes["r1"].settings["generate_ospf"] = False
    config = next(op.content for op in compile_plan(resolve(topology, registry())).ops
                  if isinstance(op, o.WriteFile) and op.path.endswith("r1/frr.conf"))
    assert config == ""
    assert started(topology, "r1") == ALL_DAEMONS
    assert [str(p) for p in resolve(topology, registry()).problems] == []


def test_generated_configuration_speaks_ospfv3_where_the_router_has_ipv6() -> None:
    config = next(op.content for op in compile_plan(resolve(two_routers(ipv6=True), registry())).ops
                  if isinstance(op, o.WriteFile) and op.path.endswith("r1/frr.conf"))
    assert "router ospf6\n ospf6 router-id 10.0.0.1" in config
    assert " ipv6 ospf6 area 0.0.0.0\n" in config and " ipv6 ospf6 network point-to-point\n" in config


def test_a_configuration_may_not_write_files_elsewhere() -> None:
    text = ("log file /etc/frr/frr.conf\nlog file ospfd.log\ndump bgp all /tmp/x\ncop /etc/shadow running\n"
            "log ext x\n destination file /root/.bashrc create\n")
    assert file_commands(text) == [(1, "log file /etc/frr/frr.conf"), (3, "dump bgp all /tmp/x"),
                                   (4, "cop /etc/shadow running"), (5, "log ext x")]
    problems = [p.message for p in resolve(two_routers(text), registry()).problems]
    assert any("line 1 of its configuration, 'log file /etc/frr/frr.conf', would have FRR write or read a file" in p
               for p in problems), problems
    assert not any("line 2" in p for p in problems)


def test_running_configuration_is_kept_without_vtyshs_header() -> None:
    shown = "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nhostname r1\n!\nend\n"
    assert kept_running_config(shown) == "!\nfrr version 8.4.4\nhostname r1\n!\n"


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR is not installed: validate leaves FRR's parser out")
def test_validate_names_each_line_frr_skips_as_a_warning(tmp_path: Path) -> None:
    """FRR's `vtysh -b` skips a line it does not take and loads the rest: validate names the line, and passes."""
    lab = tmp_path / "pair.vtopo"
    io.save(two_routers("hostname r1\nrouter ospf\n network 10.0.0.0/30 area 0\n netwrk 10.1.0.0/24 area 0\n"), lab)
    result = subprocess.run([sys.executable, "-m", "vtopo", "validate", str(lab)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert ("warning: node r1 at $.nodes[0].settings.config: FRR skips line 4 of its configuration "
            "('netwrk 10.1.0.0/24 area 0'): % Unknown command; it loads the rest") in result.stderr, result.stderr


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR is not installed: validate leaves FRR's parser out")
def test_lines_that_open_files_stay_refused(tmp_path: Path) -> None:
    """A line that would have FRR or vtysh write or read a file of the text's choosing is an error, skipped or not."""
    lab = tmp_path / "pair.vtopo"
    io.save(two_routers("hostname r1\nexit\ncopy /etc/shadow running-config\nou fi /etc/nologin\n"), lab)
    result = subprocess.run([sys.executable, "-m", "vtopo", "validate", str(lab)], capture_output=True, text=True)
    assert result.returncode == 2
    for number, line in ((3, "copy /etc/shadow running-config"), (4, "ou fi /etc/nologin")):
        assert f"error: node r1: line {number} of its configuration, {line!r}, would have FRR write or read a file" \
            in result.stderr, result.stderr


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR is not installed: validate leaves FRR's parser out")
def test_validate_says_every_router_s_problems_at_once_but_gives_frr_no_text_the_routers_own_check_refused() -> None:
    """r1's `output file` is an error of its own check, and vtysh's dry run, which would run it, never sees r1's text
    (nobody could write the canary in a folder open to all); r2's `srlg`, newer than this host's FRR 8.4, is still
    said by the same validate, though r1's error stopped the compile."""
    folder = Path(tempfile.mkdtemp(prefix="vtopo-canary-"))
    try:
        folder.chmod(0o777)
        lab = two_routers(f"hostname r1\nexit\noutput file {folder}/canary\n")
        lab.nodes["r2"].settings["config"] = "interface eth0\n link-params\n  enable\n  srlg 100\n"
        io.save(lab, folder / "pair.vtopo")
        result = subprocess.run([sys.executable, "-m", "vtopo", "validate", str(folder / "pair.vtopo")],
                                capture_output=True, text=True)
        assert result.returncode == 2
        assert f"error: node r1: line 3 of its configuration, 'output file {folder}/canary', would have FRR write " \
               "or read a file" in result.stderr, result.stderr
        assert "warning: node r2 at $.nodes[1].settings.config: FRR skips line 4 of its configuration ('srlg 100'): " \
               "% Unknown command; it loads the rest" in result.stderr, result.stderr
        assert not (folder / "canary").exists()
    finally:
        shutil.rmtree(folder)


def test_saving_writes_each_nodes_state_and_says_what_changed() -> None:
    topology = two_routers()
    topology.add_node(Node(id="h1", name="h1", kind="container", settings={"default_route": "10.1.0.1"}))
    topology.add_link(Link(id="l2", a=Endpoint("h1", "eth0", Interface(addresses=["10.1.0.10/24"])),
                           b=Endpoint("r1", "eth1", Interface(addresses=["10.1.0.1/24"]))))
    changes = apply_state(topology, {
        "r1": SavedState({"config": "hostname r1\nrouter ospf\n network 10.0.0.0/8 area 0\n"}),
        "r2": SavedState({}),
        "h1": SavedState({"default_route": "", "routes": ["10.9.0.0/16 via 10.1.0.1"]},
                         {"eth0": ["10.1.0.10/24", "10.1.0.20/24"]})})
    assert [change.node for change in changes] == ["h1", "r1"]  # r2 runs as the lab says
    assert topology.nodes["h1"].settings == {"routes": ["10.9.0.0/16 via 10.1.0.1"]}  # no default route any more
    assert topology.links["l2"].a.interface.addresses == ["10.1.0.10/24", "10.1.0.20/24"]
    diff = changes[0].diff()
    assert '-default_route: "10.1.0.1"' in diff and "+eth0: 10.1.0.10/24, 10.1.0.20/24" in diff
    assert "+   network 10.0.0.0/8 area 0" in changes[1].diff()
    assert resolve(topology, registry()).problems == () or all(p.severity.value == "warning" for p in resolve(topology, registry()).problems)


def running_config(router: str, router_id: str, lan: str, cost: str = "") -> str:
    """`show running-config` of an l2-vs-l3 router running the OSPF configuration vtopo generated, as FRR 8.4
    prints it (its own order, its header and `exit` lines), with `cost` typed on eth1."""
    return f"""Building configuration...

Current configuration:
!
frr version 8.4.4
frr defaults traditional
hostname {router}
username root nopassword
!
interface eth0
 ip ospf dead-interval 4
 ip ospf hello-interval 1
 ip ospf passive
exit
!
interface eth1
{cost} ip ospf dead-interval 4
 ip ospf hello-interval 1
 ip ospf network point-to-point
exit
!
router ospf
 ospf router-id {router_id}
 timers lsa min-arrival 0
 network 10.0.12.0/30 area 0.0.0.0
 network {lan} area 0.0.0.0
exit
!
end
"""


def test_saving_shows_only_the_routers_that_changed_as_a_diff_against_what_was_deployed() -> None:
    topology = io.load(TOPOLOGIES / "l2-vs-l3.vtopo")
    changes = apply_state(topology, {
        "r1": SavedState({"config": kept_running_config(running_config("r1", "10.1.0.1", "10.1.0.0/24",
                                                                       " ip ospf cost 50\n"))}),
        "r2": SavedState({"config": kept_running_config(running_config("r2", "10.2.0.1", "10.2.0.0/24"))})})
    assert [change.node for change in changes] == ["r1"]  # r2 runs the configuration vtopo generated for it
    added = [line for line in changes[0].diff().splitlines() if line.startswith(("+", "-"))]
    assert added == ["--- r1 in the lab", "+++ r1 running", "+   ip ospf cost 50"], changes[0].diff()
    assert len(changes[0].diff().splitlines()) < 12
    assert "ip ospf cost 50" in topology.node_named("r1").settings["config"]  # type: ignore[union-attr]
    assert "config" not in topology.node_named("r2").settings  # type: ignore[union-attr]
