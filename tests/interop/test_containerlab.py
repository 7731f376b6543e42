"""containerlab topologies in and out: what each kind and link becomes, how properties resolve, what is said about
what does not come over, and what is refused (naming the node, link and field), without a traceback."""
from __future__ import annotations

import ipaddress
import os
import shutil
from pathlib import Path

import pytest
import yaml

from interop.ospf01 import OSPF01, without_log_path
from vtopo.cli.main import main
from vtopo.interop import frr
from vtopo.interop.export import to_containerlab
from vtopo.interop.importing import import_lab
from vtopo.interop.building import Imported
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.model import io
from vtopo.model.problems import LabError
from vtopo.model.topology import Topology
from vtopo.ops import StartProcess
from vtopo.resources import TOPOLOGIES

HERE = Path(__file__).parent
FRR01 = HERE / "containerlab" / "frr01" / "frr01.clab.yml"
OSPF_LAB = HERE / "containerlab" / "ospf-lab" / "ospf-lab.clab.yml"
SMOKE = HERE / "containerlab" / "smoke"


def imported(path: Path, allowed: frozenset[Path] = frozenset()) -> Imported:
    return import_lab(path, registry(), allowed)


def topology_of(tmp_path: Path, text: str, name: str = "t.clab.yml") -> Topology:
    path = tmp_path / name
    path.write_text(text)
    return imported(path).topology


def ends(topology: Topology) -> set[frozenset[str]]:
    """Each link as the set of its two ends, node:interface (the interface's own name, or its port)."""
    def end(e):  # type: ignore[no-untyped-def]
        return f"{topology.nodes[e.node].name}:{e.interface.name or e.port}"
    return {frozenset(end(e) for e in link.ends) for link in topology.links.values()}


def addresses(topology: Topology) -> dict[str, list[str]]:
    return {f"{topology.nodes[e.node].name}:{e.interface.name or e.port}": e.interface.addresses
            for link in topology.links.values() for e in link.ends if e.interface.addresses}


def test_frr01_routers_keep_their_configuration_and_hosts_get_their_addresses() -> None:
    result = imported(FRR01)
    topology = result.topology
    kinds = {node.name: node.kind for node in topology.nodes.values()}
    assert kinds == {"router1": "router", "router2": "router", "router3": "router", "PC1": "container",
                     "PC2": "container", "PC3": "container"}
    assert ends(topology) == {frozenset({"router1:eth1", "router2:eth1"}), frozenset({"router1:eth2", "router3:eth1"}),
                              frozenset({"router2:eth2", "router3:eth2"}), frozenset({"PC1:eth1", "router1:eth3"}),
                              frozenset({"PC2:eth1", "router2:eth3"}), frozenset({"PC3:eth1", "router3:eth3"})}
    router1 = topology.node_named("router1")
    assert router1 is not None
    assert router1.settings["config"] == (FRR01.parent / "router1" / "frr.conf").read_text()
    assert router1.settings["daemons"] == ["zebra", "ospfd"]  # its daemons file; ldpd is no vtopo router's
    found = addresses(topology)
    assert found["PC1:eth1"] == ["192.168.11.2/24"] and found["router1:eth3"] == ["192.168.11.1/24"]
    pc1 = topology.node_named("PC1")
    assert pc1 is not None and pc1.startup_commands == ["ip route add 192.168.0.0/16 via 192.168.11.1 dev eth1",
                                                        "ip route add 10.10.10.0/24 via 192.168.11.1 dev eth1"]
    lines = [str(notice) for notice in result.notices]
    assert "node router1: its daemons file router1/daemons turns on ldpd, which a vtopo router does not run: the " \
           "lines of its configuration for them are skipped" in lines
    assert any(line.startswith("node PC1: ") and "--allow-commands PC1" in line for line in lines)


def test_properties_resolve_node_then_group_then_kind_then_defaults(tmp_path: Path) -> None:
    topology = topology_of(tmp_path, """
name: resolve
topology:
  defaults: {kind: linux, image: alpine, exec: ["echo defaults"]}
  kinds:
    linux: {image: debian, exec: ["echo kind"]}
    frr: {startup-config: "hostname kindwide\\n"}
  groups:
    routers: {kind: frr, exec: ["echo group"]}
  nodes:
    a: {}
    b: {group: routers}
    c: {group: routers, startup-config: "hostname own\\n", exec: ["echo node"]}
""")
    a, b, c = (topology.node_named(name) for name in "abc")
    assert a is not None and b is not None and c is not None
    assert (a.kind, b.kind, c.kind) == ("container", "router", "router")
    assert a.startup_commands == ["echo defaults", "echo kind"]
    assert b.settings["config"] == "hostname kindwide\n" and c.settings["config"] == "hostname own\n"
    assert c.startup_commands == ["echo defaults", "echo group", "echo node"]


def test_each_kind_vtopo_cannot_run_is_left_out_in_one_line_with_its_links(tmp_path: Path) -> None:
    path = tmp_path / "mixed.clab.yml"
    path.write_text("""
name: mixed
topology:
  nodes:
    srl: {kind: nokia_srlinux, image: ghcr.io/nokia/srlinux}
    ceos: {kind: arista_ceos, image: ceos:4.32}
    vm1: {kind: generic_vm, image: debian}
    vr: {kind: vr-sros, image: vrnetlab/sros}
    h1: {kind: linux, image: alpine}
  links:
    - endpoints: ["srl:e1-1", "h1:eth1"]
    - endpoints: ["ceos:eth1", "srl:e1-2"]
""")
    result = imported(path)
    assert sorted(node.kind for node in result.topology.nodes.values()) == ["container", "vm", "vm"]
    assert not result.topology.links
    lines = [str(notice) for notice in result.notices]
    assert sum("node srl: left out: kind nokia_srlinux, ghcr.io/nokia/srlinux" in line for line in lines) == 1
    assert sum(line.startswith("node ceos: left out") for line in lines) == 1
    assert any(line.startswith("node vm1: a VM on vtopo's built-in guest, not debian") for line in lines)


def test_containerlab_smoke_topology_keeps_mtu_macs_and_host_links() -> None:
    result = imported(SMOKE / "01-linux-nodes.clab.yml")
    topology = result.topology
    assert ends(topology) == {frozenset({"l1:eth1", "l2:some1"}), frozenset({"l1:eth2", "l2:eth2"}),
                              frozenset({"l1:eth3", "l2:eth3"}), frozenset({"l2:eth4", "host:eth4"})}
    by_ends = {frozenset(f"{topology.nodes[e.node].name}:{e.interface.name or e.port}" for e in link.ends): link
               for link in topology.links.values()}
    assert {e.interface.mtu for e in by_ends[frozenset({"l1:eth1", "l2:some1"})].ends} == {2000}
    assert {e.interface.mac for e in by_ends[frozenset({"l1:eth3", "l2:eth3"})].ends} == {"02:00:00:00:00:00",
                                                                                         "02:00:00:00:00:01"}
    lines = [str(notice) for notice in result.notices]
    assert "link 4: left out: a mgmt-net link has no vtopo counterpart" in lines
    assert "link 5: left out: a dummy link has no vtopo counterpart" in lines


def test_ospf01_says_each_field_it_does_not_carry_in_one_line_naming_the_node() -> None:
    result = imported(OSPF01)
    lines = [str(notice) for notice in result.notices]
    instead = {"network-mode container:router1": "the node gets a network namespace of its own, with only its own links",
               "startup-delay 50": "vtopo brings nodes up in its own order, without waiting",
               "stages create": "vtopo brings nodes up in its own order (links, then daemons, then startup commands), "
                                "waiting for no other node"}
    for field, what in instead.items():
        assert f"node ospf-watcher: {field} is not carried: {what}" in lines
    assert any(line.startswith("node ospf-watcher: env WATCHER_LOGFILE=/home/watcher/watcher/logs/watcher.log") and
               line.endswith("set a variable in a startup command (`export NAME=...`)") for line in lines)
    assert any(line.startswith("node ospf-watcher: binds watcher/logs/watcher1.ospf.log:") for line in lines)
    assert any(line.startswith("mgmt network=ospf01-mgmt") and "vtopo makes no management network" in line
               for line in lines)
    for number in range(1, 7):
        node = f"node router{number}"
        assert f"{node}: ports 6500{number}:2604 is not carried: nothing is published on the host's ports; `vtopo " \
               "exec LAB NODE -- CMD` or a terminal reaches the node" in lines
        assert f'{node}: env-files ../../.env (set at $.topology.defaults["env-files"]) is not carried: the node\'s ' \
               "commands run with vtopo's environment, and vtopo reads no file the topology names for it" in lines
        assert f"{node}: zebra_options, ospfd_options, ospf6d_options, staticd_options in its daemons file " \
               f"router{number}/daemons are not carried: vtopo starts each daemon with its own options (its vty on a " \
               "socket inside the router only, no TCP port)" in lines
        router = result.topology.node_named(f"router{number}")
        assert router is not None and router.settings["ospf_instance"] == 1  # ospfd_instances=1: `router ospf 1`
        assert router.settings["daemons"] == ["zebra", "ospfd", "ospf6d"]  # staticd=no, and runs anyway, as in FRR
    assert not any("ospfd_instances" in line for line in lines)  # carried, so nothing to say
    plan = compile_plan(resolve(without_log_path(result.topology), registry()))
    started = {op.name for op in plan.ops if isinstance(op, StartProcess)}
    assert {"zebra@router3", "staticd@router3", "ospfd-1@router3", "ospf6d@router3"} <= started


def test_any_field_the_import_does_not_read_is_said_with_its_node_or_link(tmp_path: Path) -> None:
    path = tmp_path / "unread.clab.yml"
    path.write_text("""
name: unread
prefix: lab
topology:
  colour: blue
  defaults: {kind: linux, sysctls: {net.ipv4.ip_forward: 1}, dns: {servers: [192.0.2.53]}}
  nodes:
    h1: {labels: {graph-posX: "10", graph-posY: "10", graph-icon: host}, network-mode: none, shiny: yes}
    h2: {labels: {graph-posX: "20", graph-posY: "10"}, memory: 1GB}
  links:
    - endpoints: [{node: h1, interface: eth1, vars: {x: 1}}, "h2:eth1"]
      vars: {cost: 10}
""")
    lines = [str(notice) for notice in imported(path).notices]
    assert [line for line in lines if "not carried" in line] == [
        "prefix lab is not carried: vtopo names its devices after the lab's own prefix",
        "topology.colour blue is not carried: vtopo does not read this field, and the lab goes without it",
        "link 0: vars cost=10 is not carried: vtopo does not read this field, and the lab goes without it",
        "link 0: h1:eth1 vars x=1 is not carried: vtopo does not read this field, and the lab goes without it",
        "node h1: shiny True is not carried: vtopo does not read this field, and the lab goes without it",
        "node h1: dns servers (set at $.topology.defaults.dns) is not carried: the node uses the host's resolver",
        "node h1: label graph-icon host is not carried: vtopo does not read this field, and the lab goes without it",
        "node h2: memory 1GB is not carried: vtopo sets no memory limit on a namespace node",
        "node h2: dns servers (set at $.topology.defaults.dns) is not carried: the node uses the host's resolver"]
    topology = imported(path).topology
    assert [node.settings["sysctls"] for node in topology.nodes.values()] == [{"net.ipv4.ip_forward": "1"}] * 2


def test_import_says_every_problem_at_once_with_frr_s_dry_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                              ) -> None:
    """router1's log file is vtopo's error, router2's `srlg` a line this host's FRR (8.4) does not know: both are said
    by the one import, and validate says the same, though the first error stops the compile."""
    target = tmp_path / "ospf01.vtopo"
    assert main(["import", str(OSPF01), "-o", str(target)]) == 2
    said = capsys.readouterr().err
    assert "error: node router1: line 4 of its configuration, 'log file /var/log/frr/ospfd.log', would have FRR " \
           "write or read a file outside the router's own directory" in said
    assert "warning: node router2 at $.nodes[3].settings.config: FRR skips line 22 of its configuration " \
           "('srlg 100'): % Unknown command; it loads the rest" in said
    assert f"{target} needs 1 fix(es) before it deploys, and 1 warning(s) say what will differ" in said
    assert main(["validate", str(target)]) == 2
    validated = capsys.readouterr().err
    assert "'log file /var/log/frr/ospfd.log'" in validated and "('srlg 100')" in validated


def test_positions_come_from_graph_labels_or_the_auto_layout() -> None:
    placed = imported(OSPF_LAB).topology
    r1 = placed.node_named("r1")
    assert r1 is not None and (r1.position.x, r1.position.y) == (300, 100)
    laid_out = imported(SMOKE / "03-linux-nodes-to-bridge-and-host.clab.yml").topology
    rows = {node.name: node.position.y for node in laid_out.nodes.values()}
    assert rows["br"] < rows["l1"] == rows["host"]  # switches above hosts
    assert len({(node.position.x, node.position.y) for node in laid_out.nodes.values()}) == 3


@pytest.mark.parametrize("text, expected", [
    ("name: x\ntopology:\n  nodes:\n    h1: {kind: linux, exec: echo}\n  links: []",
     "node h1 at $.topology.nodes.h1.exec: exec must be a list"),
    ("name: x\ntopology:\n  nodes:\n    h1: {group: nope, kind: linux}",
     "node h1 at $.topology.nodes.h1.group: group 'nope' is not defined"),
    ("name: x\ntopology:\n  nodes:\n    h1: {kind: linux}\n  links:\n    - endpoints: [\"h1:eth1\", \"h9:eth1\"]",
     "link 0 at $.topology.links[0].endpoints: endpoint h9:eth1 names node 'h9'"),
    ("name: x\ntopology:\n  nodes:\n    h1: {kind: linux}\n  links:\n    - endpoints: [\"h1-eth1\", \"h1:eth2\"]",
     "endpoint 'h1-eth1' must be written node:interface"),
    ("name: x\ntopology:\n  nodes:\n    r1: {kind: frr, startup-config: missing.conf}",
     "node r1 at $.topology.nodes.r1[\"startup-config\"]: startup-config 'missing.conf' does not exist"),
    ("name: x\ntopology:\n  nodes:\n    r1: {kind: frr, extras: {frr: {daemons: ospfd}}}",
     "extras.frr.daemons must be a list of FRR daemon names"),
    ("- just\n- a list", "not a containerlab topology"),
    ("name: x\ntopology: {nodes: {a: {kind: linux}}}\nname: y", "the key 'name' is written more than once"),
])
def test_a_bad_field_gets_one_message_naming_node_link_and_field(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.clab.yml"
    path.write_text(text)
    with pytest.raises(LabError) as error:
        imported(path)
    messages = [str(problem) for problem in error.value.problems]
    assert any(expected in message for message in messages), messages


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.conf"
    secret.write_text("hostname stolen\n")
    (tmp_path / "lab").mkdir()
    return secret


@pytest.mark.parametrize("reference", ["../outside/secret.conf", "{secret}", "link.conf", "linked/secret.conf"])
def test_a_file_outside_the_topology_folder_is_read_only_with_the_users_consent(secret: Path, reference: str) -> None:
    lab = secret.parent.parent / "lab"
    os.symlink(secret, lab / "link.conf")
    os.symlink(secret.parent, lab / "linked")
    path = lab / "r.clab.yml"
    path.write_text(f"name: r\ntopology:\n  nodes:\n    r1: {{kind: frr, startup-config: {reference.format(secret=secret)}}}\n")
    with pytest.raises(LabError) as error:
        imported(path)
    (problem,) = error.value.problems
    assert problem.subject == "node r1" and problem.path.endswith('["startup-config"]')
    assert problem.consent is not None and problem.consent.name == str(secret)
    assert "--allow-outside" in problem.message
    router = imported(path, frozenset({secret})).topology.node_named("r1")
    assert router is not None and router.settings["config"] == "hostname stolen\n"


def test_a_fifo_or_a_huge_file_in_the_folder_is_refused_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.conf")
    (tmp_path / "huge.conf").write_bytes(b"!" * (2 * 1024 * 1024))
    path = tmp_path / "r.clab.yml"
    path.write_text("name: r\ntopology:\n  nodes:\n    r1: {kind: frr, startup-config: fifo.conf}\n"
                    "    r2: {kind: frr, startup-config: huge.conf}\n")
    with pytest.raises(LabError) as error:
        imported(path)
    assert [p.message for p in error.value.problems] == ["startup-config 'fifo.conf' is not a regular file",
                                                         "startup-config 'huge.conf' is larger than 1024 kB; no "
                                                         "configuration is that big"]


def test_round_trip_through_containerlab_keeps_nodes_links_interfaces_addresses_and_router_configuration(
        tmp_path: Path) -> None:
    original = open_lab(TOPOLOGIES / "l2-vs-l3.vtopo").topology
    exported = to_containerlab(original, registry())
    exported.write(tmp_path)
    result = imported(tmp_path / exported.topology_file)
    again = result.topology
    assert not [str(notice) for notice in result.notices if "not carried" in notice.message]
    assert {(n.name, n.kind) for n in again.nodes.values()} == {(n.name, n.kind) for n in original.nodes.values()}
    assert ends(again) == ends(original)
    assert addresses(again) == addresses(original)
    for node in original.nodes.values():
        copy = again.node_named(node.name)
        assert copy is not None
        assert copy.settings.get("default_route", "") == node.settings.get("default_route", "")
        assert (copy.position.x, copy.position.y) == (node.position.x, node.position.y)
        if node.kind == "router":
            kind = registry().get("router")
            assert kind is not None
            lab = resolve(original, registry()).valid().lab
            generated = kind.generated_settings(lab.nodes[node.id])["config"]
            assert copy.settings["config"] == generated and "daemons" not in copy.settings


def test_export_says_each_check_note_and_stage_it_cannot_carry_so_a_round_trip_loses_nothing_unsaid(
        tmp_path: Path) -> None:
    for name in ("ospf-assignment.vtopo", "static-routing.vtopo"):
        lab = open_lab(TOPOLOGIES / name).topology
        exported = to_containerlab(lab, registry())
        lines = [str(notice) for notice in exported.notices]
        for check in lab.checks:
            assert f"check {check.name}: the {check.type} check is not carried: containerlab has no place for it; the " \
                   ".vtopo file keeps it (`vtopo check LAB` runs it on the lab vtopo deploys)" in lines
        for stage in lab.stages:
            assert f"stage {stage.title}: the exercise's stage is not carried: containerlab has no place for it; the " \
                   ".vtopo file keeps it" in lines
        for annotation in lab.annotations.values():
            assert sum(line.startswith(f"annotation {annotation.id}: the canvas's ") for line in lines) == 1
        assert sum(line.startswith("the lab's notes (") and line.endswith("the .vtopo file keeps it")
                   for line in lines) == 1
        exported.write(tmp_path / name)
        header = (tmp_path / name / exported.topology_file).read_text()
        assert all(f"# {line}" in header for line in lines)


def test_a_router_s_ospf_instance_goes_out_in_its_daemons_file_and_comes_back(tmp_path: Path) -> None:
    lab = without_log_path(imported(OSPF01).topology)
    exported = to_containerlab(lab, registry())
    assert "ospfd_instances=1" in exported.files["router3/daemons"].splitlines()
    exported.write(tmp_path)
    again = imported(tmp_path / exported.topology_file).topology
    router3 = again.node_named("router3")
    assert router3 is not None and router3.settings["ospf_instance"] == 1


def test_export_says_node_by_node_what_containerlab_cannot_carry(tmp_path: Path) -> None:
    lab = open_lab(TOPOLOGIES / "vm-tap-vs-macvtap.vtopo").topology
    exported = to_containerlab(lab, registry())
    lines = [str(notice) for notice in exported.notices]
    vms = [node.name for node in lab.nodes.values() if node.kind == "vm"]
    segments = [node.name for node in lab.nodes.values() if node.kind == "macvtap"]
    for name in vms + segments:
        assert sum(line.startswith(f"node {name}: left out") for line in lines) == 1, (name, lines)
    impaired = open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology
    link = next(iter(impaired.links.values()))
    impaired.update_link(link.id, impairment=type(link.impairment)(delay_ms=20, loss_pct=1))
    notes = [str(n) for n in to_containerlab(impaired, registry()).notices]
    assert any("containerlab tools netem set -n clab-bridge-veth-" in n and "--delay 20ms --loss 1" in n
               for n in notes), notes


def test_cli_imports_then_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "ospf.vtopo"
    code = main(["import", str(SMOKE / "03-linux-nodes-to-bridge-and-host.clab.yml"), "-o", str(target)])
    out = capsys.readouterr().out
    assert code == 0 and target.is_file()
    assert "note: node br: named 'br-01-03-clab' in the source" in out
    assert main(["import", str(SMOKE / "03-linux-nodes-to-bridge-and-host.clab.yml"), "-o", str(target)]) == 2
    assert "exists; choose another with -o, or --force" in capsys.readouterr().err
    assert main(["export", str(target), "--to", "containerlab", "-o", str(tmp_path / "out")]) == 0
    written = (tmp_path / "out" / "03-bridge-and-host.clab.yml").read_text()
    assert "kind: bridge" in written and "host:" in written


def test_export_needs_no_consent_for_startup_commands_and_keeps_them_as_exec(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lab = open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology
    container = next(node for node in lab.nodes.values() if node.kind == "container")
    container.startup_commands = ["sysctl -w net.ipv4.ip_forward=1", "ip route add 10.9.0.0/16 via 10.0.0.254"]
    source = tmp_path / "commands.vtopo"
    io.save(lab, source)
    assert main(["export", str(source), "--to", "containerlab", "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert f"note: node {container.name}: its 2 startup command(s) became `exec` lines" in out
    exported = yaml.safe_load((tmp_path / "out" / f"{lab.name}.clab.yml").read_text())
    assert exported["topology"]["nodes"][container.name]["exec"][-2:] == container.startup_commands


def test_export_says_in_one_line_each_which_switch_field_containerlab_cannot_carry_with_its_commands() -> None:
    lab = import_lab(Path(__file__).parent / "gns3" / "vlans" / "vlans.gns3", registry()).topology
    sw1 = lab.node_named("SW1")
    assert sw1 is not None
    lab.nodes[sw1.id].kind = "bridge"
    lab.nodes[sw1.id].settings["stp"] = True
    lines = [str(notice) for notice in to_containerlab(lab, registry()).notices]
    assert [line.split(" is not carried")[0] for line in lines if "is not carried" in line] == [
        "node SW1: stp = True",
        "node SW1: vlans = {'p1': 'access 10', 'p2': 'access 20', 'p3': 'trunk 10,20,30 native 1'}",
        "node SW2: vlans = {'p1': 'trunk 10,20,30 native 1', 'p2': 'access 10', 'p3': 'access 20', 'p4': 'access 30'}"]
    assert any(line.endswith("ip link set SW1 type bridge vlan_filtering 1 && bridge vlan del dev SW1-p1 vid 1 && "
                             "bridge vlan add dev SW1-p1 vid 10 pvid untagged && bridge vlan del dev SW1-p2 vid 1 && "
                             "bridge vlan add dev SW1-p2 vid 20 pvid untagged && bridge vlan del dev SW1-p3 vid 1 && "
                             "bridge vlan add dev SW1-p3 vid 1 pvid untagged && bridge vlan add dev SW1-p3 vid 10 && "
                             "bridge vlan add dev SW1-p3 vid 20 && bridge vlan add dev SW1-p3 vid 30") for line in lines)
    assert any(line.endswith("ovs-vsctl set port SW2-p1 vlan_mode=native-untagged tag=1 trunks=10,20,30 && "
                             "ovs-vsctl set port SW2-p2 vlan_mode=access tag=10 && ovs-vsctl set port SW2-p3 "
                             "vlan_mode=access tag=20 && ovs-vsctl set port SW2-p4 vlan_mode=access tag=30")
               for line in lines)


def test_export_carries_a_containers_routes_as_exec_lines() -> None:
    lab = open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology
    container = next(node for node in lab.nodes.values() if node.kind == "container")
    address = next(e.interface.addresses[0] for link in lab.links.values() for e in link.ends
                   if e.node == container.id)
    gateway = str(ipaddress.ip_interface(address).network.network_address + 254)
    container.settings["routes"] = [f"10.99.0.0/16 via {gateway}"]
    exported = to_containerlab(lab, registry())
    assert f"ip route add 10.99.0.0/16 via {gateway}" in exported.files[exported.topology_file]


def test_a_daemons_file_says_each_setting_a_vtopo_router_does_not_follow() -> None:
    """ospf01's router1 file, with two OSPF instances and FRR's service settings: the first instance is carried, the
    second said, as is every setting but vtysh's; the options of daemons left off start nothing and are not said."""
    text = (OSPF01.parent / "router1" / "daemons").read_text().replace("ospfd_instances=1", "ospfd_instances=1,2")
    read = frr.read_daemons(text + "MAX_FDS=1024\nfrr_profile=\"datacenter\"\n")
    assert read.on == ["zebra", "ospfd", "ospf6d", "ldpd"] and read.ospf_instance() == 1
    assert read.chosen() == (["zebra", "ospfd", "ospf6d"], ["ldpd"])
    assert read.losses("daemons") == [
        "its daemons file daemons turns on ldpd, which a vtopo router does not run: the lines of its configuration "
        "for them are skipped",
        "ospfd_instances=1,2 in its daemons file daemons is carried in part: ospfd runs as instance 1 alone, and the "
        "lines for instance(s) 2 are skipped",
        "MAX_FDS=1024 in its daemons file daemons is not carried: vtopo starts FRR's daemons itself, without FRR's "
        "service script that reads it",
        "frr_profile=datacenter in its daemons file daemons is not carried: vtopo starts FRR's daemons itself, "
        "without FRR's service script that reads it",
        "zebra_options, ospfd_options, ospf6d_options, staticd_options in its daemons file daemons are not carried: "
        "vtopo starts each daemon with its own options (its vty on a socket inside the router only, no TCP port)"]


def test_a_router_bound_to_a_folder_as_etc_frr_takes_its_frr_conf_and_daemons(tmp_path: Path) -> None:
    """The common `binds: [config/1:/etc/frr]`: frr01's router1 folder as a whole. A bound frr.conf beside a
    startup-config is said: the startup-config is the configuration."""
    shutil.copytree(FRR01.parent / "router1", tmp_path / "config" / "1")
    path = tmp_path / "folder.clab.yml"
    path.write_text("""
name: folder
topology:
  nodes:
    r1: {kind: linux, image: quay.io/frrouting/frr:10.5.1, binds: ["config/1:/etc/frr/"]}
    r2: {kind: frr, startup-config: config/1/frr.conf, binds: ["config/1/frr.conf:/etc/frr/frr.conf"]}
""")
    result = imported(path)
    r1 = result.topology.node_named("r1")
    assert r1 is not None and r1.settings["config"] == (FRR01.parent / "router1" / "frr.conf").read_text()
    assert r1.settings["daemons"] == ["zebra", "ospfd"]
    lines = [str(notice) for notice in result.notices]
    assert "node r2: binds config/1/frr.conf:/etc/frr/frr.conf is not carried: the router's configuration is its " \
           "startup-config" in lines


def test_a_routers_extras_other_than_its_daemons_are_said(tmp_path: Path) -> None:
    path = tmp_path / "extras.clab.yml"
    path.write_text("name: x\ntopology:\n  nodes:\n    r1: {kind: frr, extras: {frr: {daemons: [ospfd], vrfs: [red]}, "
                    "srl-agents: [a.yml]}}\n")
    result = imported(path)
    router = result.topology.node_named("r1")
    assert router is not None and router.settings["daemons"] == ["ospfd"]
    lines = [str(notice) for notice in result.notices]
    assert [line for line in lines if "extras" in line] == [
        "node r1: extras.frr.vrfs red is not carried: vtopo does not read this field, and the lab goes without it",
        "node r1: extras.srl-agents a.yml is not carried: vtopo does not read this field, and the lab goes without it"]
