"""Labs spread over sites, without deploying: the file format, the problems a bad site gives, each site's plan and
its tunnels, and what an agent and the client allow."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from spread_labs import LabBuilder, here, vlans_over_two_sites
from vtopo import protocol as p
from vtopo.ssh import ssh_argv
from vtopo.cli.main import main
from vtopo.lab_terms import Trust
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model import io
from vtopo.model.placement import site_parts
from vtopo.model.sites import TUNNEL_MTU, Site
from vtopo.ops import (ConfigureLink, CreateBridge, CreateNamespace, CreateVxlan, OvsAddPort, OvsVlanMode,
                       SetBridgeVlans)
from vtopo.server.policy import Policy, PolicyError, TunnelRefused
from vtopo.sites.spread import not_allowed

REMOTE = Site("b", "root@198.18.0.2", identity="/keys/b", known_hosts="/keys/b.known")


def two_sites() -> LabBuilder:
    lab = LabBuilder("two", [here(), REMOTE])
    lab.node("c1", "container")
    lab.node("c2", "container", site="b")
    lab.link("c1", "c2", "10.0.0.1/24", "10.0.0.2/24")
    return lab


def test_sites_and_places_survive_saving_and_loading():
    topology = two_sites().topology
    loaded = io.loads(io.dumps(topology))
    assert loaded.sites == topology.sites
    assert loaded.nodes["c2"].site == "b" and loaded.nodes["c1"].site == ""


@pytest.mark.parametrize("change, field, words", [
    ({"destination": "-oProxyCommand=sh"}, "destination", "user@host"),
    ({"identity": "keys/b"}, "identity", "absolute file path"),
    ({"port": 0}, "port", "outside 1..65535"),
    ({"address": "not-an-ip"}, "address", "not an IPv4 or IPv6 address"),
    ({"name": "B!"}, "name", "site name"),
])
def test_a_bad_site_field_is_one_problem_naming_the_site_and_field(change, field, words):
    lab = LabBuilder("bad", [here(), Site(**{**vars(REMOTE), **change})])
    lab.node("c1", "container")
    errors = [problem for problem in resolve(lab.topology, registry()).problems if problem.severity.value == "error"]
    assert len(errors) == 1, errors
    assert errors[0].path == f"$.lab.sites[1].{field}" and words in errors[0].message


def test_a_node_on_an_unknown_site_is_named_with_its_field():
    lab = two_sites()
    lab.topology.nodes["c2"].site = "mars"
    [error] = [problem for problem in resolve(lab.topology, registry()).problems if problem.severity.value == "error"]
    assert error.subject == "node c2" and error.path == "$.nodes[1].site" and "'mars'" in error.message


def test_a_wrongly_typed_site_in_a_file_is_a_problem_not_a_traceback(tmp_path: Path, capsys):
    document = io.to_document(two_sites().topology)
    document["lab"]["sites"][1]["port"] = "twenty-two"
    path = tmp_path / "lab.vtopo"
    path.write_text(__import__("json").dumps(document))
    assert main(["validate", "--offline", str(path)]) == 2
    err = capsys.readouterr().err
    assert "$.lab.sites[1].port" in err and "Traceback" not in err


def test_a_link_to_a_vm_on_another_site_is_refused_by_name():
    lab = LabBuilder("vm", [here(), REMOTE])
    lab.node("br0", "bridge")
    lab.node("vm1", "vm", site="b")
    lab.link("br0", "vm1")
    messages = [str(problem) for problem in resolve(lab.topology, registry()).problems if problem.severity.value == "error"]
    assert messages == ["error: link br0:p1-vm1:nic0: a link between two sites must join containers, routers or "
                        "switches; put a switch next to the vm on its site"]


def test_each_site_plans_its_own_nodes_and_its_end_of_the_tunnel():
    topology = two_sites().topology
    local, remote = (compile_plan(resolve(topology, registry(), trust=Trust(site=site, tunnel_vnis=(5000, 5999)))) for site in ("", "b"))
    for plan, node, peer in ((local, "c1", "198.18.0.2"), (remote, "c2", "198.18.0.1")):
        assert [op.name for op in plan.ops if isinstance(op, CreateNamespace)] == [f"{plan.prefix}-{node}"]
        [tunnel] = [op for op in plan.ops if isinstance(op, CreateVxlan)]
        assert (tunnel.name, tunnel.netns, tunnel.remote, tunnel.mtu) == ("eth0", f"{plan.prefix}-{node}", peer,
                                                                          TUNNEL_MTU)
        assert 5000 <= tunnel.vni <= 5999
        assert any(isinstance(op, ConfigureLink) and op.mtu == TUNNEL_MTU for op in plan.ops)
    assert {op.vni for plan in (local, remote) for op in plan.ops if isinstance(op, CreateVxlan)} == {
        site_parts(topology, (5000, 5999))["b"].tunnels[0].vni}  # both ends compute the same VNI


def test_a_bridge_spanning_sites_gets_the_tunnel_mtu_on_every_interface_of_its_segment():
    lab = LabBuilder("span", [here(), REMOTE])
    lab.node("br0", "bridge")
    lab.node("c1", "container")
    lab.node("c2", "container", site="b")
    lab.link("c1", "br0", "10.0.0.1/24")
    lab.link("c2", "br0", "10.0.0.2/24")
    plan = compile_plan(resolve(lab.topology, registry()))
    mtus = {op.name: op.mtu for op in plan.ops if isinstance(op, ConfigureLink) and op.name != f"{plan.prefix}-br0"}
    assert set(mtus.values()) == {TUNNEL_MTU} and len(mtus) == 3  # c1's eth0, its bridge port, the tunnel port
    [tunnel] = [op for op in plan.ops if isinstance(op, CreateVxlan)]
    assert (tunnel.name, tunnel.netns, tunnel.mtu) == (f"{plan.prefix}-br0-p2", None, TUNNEL_MTU)


def test_explain_shows_each_sites_script_and_says_why_the_mtu_is_lower(tmp_path: Path, capsys):
    path = tmp_path / "two.vtopo"
    io.save(two_sites().topology, path)
    assert main(["plan", "--offline", "--explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert "# ======== site local (this machine)" in out and "# ======== site b (root@198.18.0.2)" in out
    assert out.count("type vxlan id") == 2
    assert "# MTU 1450: the underlay's 1500 less 50 bytes of VXLAN headers" in out


def test_the_agent_refuses_vnis_outside_its_range(tmp_path: Path):
    config = tmp_path / "agent.toml"
    config.write_text('tunnel_vnis = [100, 199]\ntunnel_peers = ["198.18.0.3"]\n')
    policy = Policy.read(config)
    with pytest.raises(TunnelRefused, match="outside this host's tunnel_vnis, 100-199"):
        policy.vnis_within([150, 200])
    assert policy.vnis_within([120, 130]) == (120, 130) and policy.vnis_within([]) == (100, 199)
    assert policy.tunnel_peers == {"198.18.0.3"}
    config.write_text("tunnel_vnis = [300, 200]\n")
    with pytest.raises(PolicyError, match="tunnel_vnis must be"):
        Policy.read(config)


def test_a_members_lab_tunnels_only_to_the_peers_the_administrator_listed():
    topology = two_sites().topology
    [error] = [problem for problem in resolve(topology, registry(), trust=Trust(site="b", tunnel_peers=frozenset())).problems
               if problem.severity.value == "error"]
    assert error.subject == "link c1:eth0-c2:eth0" and "only root may tunnel a lab to 198.18.0.1" in error.message
    assert not [problem for problem in resolve(topology, registry(), trust=Trust(site="b",
                                                                         tunnel_peers=frozenset({"198.18.0.1"}))).problems
                if problem.severity.value == "error"]


def test_a_tunnel_back_to_the_host_itself_is_refused_even_to_a_listed_peer():
    """Site b's agent, whose host has the address the lab gives the local site too."""
    trust = Trust(site="b", tunnel_peers=frozenset({"198.18.0.1"}),
                  host_addresses=frozenset({"198.18.0.1", "198.18.0.2"}))
    [error] = [problem for problem in resolve(two_sites().topology, registry(), trust=trust).problems
               if problem.severity.value == "error"]
    assert error.subject == "link c1:eth0-c2:eth0" and error.message.startswith(
        "its tunnel would lead back to this host: the lab's sites give 198.18.0.1, an address of this host's own")


def test_a_site_whose_address_in_the_lab_is_not_its_own_is_refused():
    """Site b's agent, whose host does not have the address the lab gives site b: its tunnels' outer source."""
    trust = Trust(site="b", host_addresses=frozenset({"198.18.0.9"}))
    [error] = [problem for problem in resolve(two_sites().topology, registry(), trust=trust).problems
               if problem.severity.value == "error"]
    assert error.message.startswith("the lab gives 198.18.0.2 as this site's address, which this host does not have")
    assert not [problem for problem in resolve(two_sites().topology, registry(), trust=Trust(
        site="b", host_addresses=frozenset({"198.18.0.2"}))).problems if problem.severity.value == "error"]


def test_a_deploy_request_carries_the_site_and_its_vni_range():
    consent = p.Consent(site="b", tunnel_vnis=[5000, 5999])
    request = p.decode(p.encode(p.DeployRequest("{}", consent)).rstrip(b"\n"), p.REQUESTS)
    assert isinstance(request, p.DeployRequest) and (request.consent.site, request.consent.tunnel_vnis) == (
        "b", [5000, 5999])


def test_ssh_gets_the_destination_after_the_options_and_the_labs_key_only_when_allowed():
    argv = ssh_argv(REMOTE)
    assert argv[-3:] == ["--", "root@198.18.0.2", "vtopo agent --stdio"]
    assert "BatchMode=yes" in argv and argv[argv.index("-i") + 1] == "/keys/b"
    assert "UserKnownHostsFile=/keys/b.known" in argv
    [refusal] = not_allowed(two_sites().topology, frozenset())
    assert "--allow-site b" in refusal and "identity /keys/b" in refusal
    assert not_allowed(two_sites().topology, frozenset({"b"})) == []


def test_an_update_asks_only_for_a_new_site_and_refuses_a_running_site_reached_otherwise():
    from dataclasses import replace

    running = two_sites().topology
    edited = two_sites()
    edited.topology.sites["c"] = Site("c", "root@198.18.0.3")
    edited.node("c3", "container", site="c")
    [refusal] = not_allowed(edited.topology, frozenset(), running=running)  # b runs the lab already: allowed then
    assert refusal.startswith("site c: the lab would have vtopo connect to root@198.18.0.3 port 22")
    assert not_allowed(edited.topology, frozenset({"c"}), running=running) == []
    edited.topology.sites["b"] = replace(REMOTE, port=2222)
    [moved] = not_allowed(edited.topology, frozenset({"b", "c"}), running=running)
    assert moved == ("site b: lab two runs there through root@198.18.0.2 port 22 (identity /keys/b, known hosts "
                     "/keys/b.known), which the edit changes to root@198.18.0.2 port 2222 (identity /keys/b, known "
                     "hosts /keys/b.known); destroy the lab and deploy it again")


def test_deploy_without_allow_site_connects_nowhere(tmp_path: Path, capsys):
    path = tmp_path / "two.vtopo"
    io.save(two_sites().topology, path)
    assert main(["deploy", str(path)]) == 1
    assert "allow it with --allow-site b" in capsys.readouterr().err


def test_place_splits_two_lans_at_their_one_link_with_the_vms_memory_balanced(tmp_path: Path, capsys):
    lab = LabBuilder("lans", [here(), REMOTE])
    for lan, memory in (("a", 1024), ("b", 1024)):
        lab.node(f"sw{lan}", "bridge")
        lab.node(f"vm{lan}", "vm", memory_mb=memory)
        lab.link(f"sw{lan}", f"vm{lan}")
        for index in range(3):
            lab.node(f"c{lan}{index}", "container")
            lab.link(f"c{lan}{index}", f"sw{lan}")
    lab.link("swa", "swb")
    path = tmp_path / "lans.vtopo"
    io.save(lab.topology, path)
    assert main(["place", str(path), "--sites", "here,b", "--write"]) == 0
    out = capsys.readouterr().out
    assert "1 link(s) between the sites; VM memory here 1,024 MiB, b 1,024 MiB" in out
    placed = io.load(path)
    sides = {node.name: node.site for node in placed.nodes.values()}
    assert len({sides["swa"], sides["vma"], sides["ca0"], sides["ca1"], sides["ca2"]}) == 1
    assert sides["swa"] != sides["swb"]


def test_place_names_the_sites_it_does_not_know(tmp_path: Path, capsys):
    path = tmp_path / "two.vtopo"
    io.save(two_sites().topology, path)
    assert main(["place", str(path), "--sites", "here,mars"]) == 2
    assert "it has no mars" in capsys.readouterr().err


def test_a_bridge_with_two_nodes_on_another_site_gets_a_copy_there_joined_by_one_tunnel():
    lab = LabBuilder("split", [here(), REMOTE])
    lab.node("br0", "bridge")
    for index, site in enumerate(("", "b", "b"), start=1):
        lab.node(f"c{index}", "container", site=site)
        lab.link(f"c{index}", "br0", f"10.0.1.{index}/24")
    local, remote = (compile_plan(resolve(lab.topology, registry(), trust=Trust(site=site))) for site in ("", "b"))
    for plan in (local, remote):
        [tunnel] = [op for op in plan.ops if isinstance(op, CreateVxlan)]
        assert tunnel.netns is None and tunnel.owner.startswith("link br0:")  # the trunk between the two bridges
    assert [op.name for op in remote.ops if isinstance(op, CreateBridge)] == [f"{remote.prefix}-br0"]
    assert sorted(op.name for op in remote.ops if isinstance(op, CreateNamespace)) == [f"{remote.prefix}-c2",
                                                                                      f"{remote.prefix}-c3"]


def test_a_command_for_another_site_is_one_quoted_line_for_its_shell():
    argv = ssh_argv(REMOTE, ["vtopo", "exec", "two", "c2", "--", "sh", "-c", "echo $HOME; touch /tmp/x"], terminal=True)
    assert argv[1] == "-tt" and argv[-2:] == ["root@198.18.0.2",
                                              "vtopo exec two c2 -- sh -c 'echo $HOME; touch /tmp/x'"]


def test_a_capture_on_another_sites_end_runs_there_and_on_a_local_end_here(monkeypatch):
    """Root runs tcpdump in a local end's namespace itself; a user's capture there is run by the agent, which the
    relay (vtopo.client.pcap) asks. Either's capture on another site runs there."""
    from vtopo.capture import resolve as capture_target
    from vtopo.capture.engine import tcpdump_argv
    from vtopo.lab_terms import HostFacts
    from vtopo.kinds.registry import installed_kinds

    context = resolve(two_sites().topology, installed_kinds(), HostFacts(), Trust()).valid().lab
    there, here_ = capture_target(context, "c2:eth0"), capture_target(context, "c1:eth0")
    assert there.site == REMOTE and here_.site is None
    for euid, local in ((0, ["ip", "netns", "exec", here_.netns, "tcpdump"]),
                        (1000, [sys.executable, "-m", "vtopo.client.pcap", "two", "c1:eth0"])):
        monkeypatch.setattr(os, "geteuid", lambda euid=euid: euid)
        assert tcpdump_argv(there, "icmp", 5)[-1] == "vtopo capture two c2:eth0 --pcap -f icmp -c 5"
        assert tcpdump_argv(here_)[:len(local)] == local


def test_a_node_is_remote_only_from_another_sites_point_of_view():
    from vtopo.model.placement import Unreachable, remote_site

    topology = two_sites().topology
    assert remote_site(topology, "c2") == REMOTE and remote_site(topology, "c1") is None
    assert remote_site(topology, "c2", here="b") is None  # on b, its own node: never ssh to itself again
    with pytest.raises(Unreachable, match="c1 runs on the machine lab two was deployed from"):
        remote_site(topology, "c1", here="b")


def test_the_trunk_joining_a_bridges_parts_on_two_sites_carries_every_vlan_of_the_bridge():
    topology = vlans_over_two_sites([here(), REMOTE], "b", "bridge").topology
    for site in ("", "b"):
        plan = compile_plan(resolve(topology, registry(), trust=Trust(site=site, tunnel_vnis=(5000, 5999))))
        [tunnel] = [op for op in plan.ops if isinstance(op, CreateVxlan)]
        vlans = {op.name: (op.untagged, op.tagged) for op in plan.ops if isinstance(op, SetBridgeVlans)}
        assert vlans[tunnel.name] == (1, (10, 20)) and sorted(vlans.values()) == [(1, (10, 20)), (10, ()), (20, ())]


def test_the_trunk_joining_a_switchs_parts_on_two_sites_carries_every_vlan_of_the_switch():
    topology = vlans_over_two_sites([here(), REMOTE], "b").topology
    ports = {}
    for site in ("", "b"):
        plan = compile_plan(resolve(topology, registry(), trust=Trust(site=site, tunnel_vnis=(5000, 5999))))
        # each part's VLANs name only its own ports; its hosts share one subnet on purpose (only the VLANs keep them
        # apart), which validation rightly names
        assert [w.subject for w in plan.warnings] == ["subnet 10.70.0.0/24"], plan.warnings
        [tunnel] = [op for op in plan.ops if isinstance(op, CreateVxlan)]
        ports[site] = {op.name: (op.vlan_mode, op.tag, op.trunks) for op in plan.ops if isinstance(op, OvsAddPort)}
        assert ports[site][tunnel.name] == (OvsVlanMode.NATIVE_UNTAGGED, 1, (10, 20)), "a trunk, VLAN 1 native"
    assert sorted(ports[""].values())[:2] == sorted(ports["b"].values())[:2] == [
        (OvsVlanMode.ACCESS, 10, ()), (OvsVlanMode.ACCESS, 20, ())]
