"""Nothing a member runs is root's: a startup command on the host node of a member's lab is refused when the lab is
compiled, in one line, and the applier refuses outright any such command it is handed (a journal replayed, say)
instead of running it as root."""
from __future__ import annotations

from pathlib import Path

import pytest

from vtopo import ops as o
from vtopo.host.applier import Applier, OpFailed
from vtopo.lab_terms import LabOwner, Trust
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model.problems import LabError
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

MEMBER = LabOwner.member(uid=4242, gid=100)


def lab_with_a_host_node() -> Topology:
    topology = Topology(name="hostcmd")
    topology.add_node(Node(id="h1", name="h1", kind="host", startup_commands=["id > /tmp/vtopo-owned"]))
    topology.add_node(Node(id="c1", name="c1", kind="container", startup_commands=["id -u"]))
    topology.add_link(Link(id="l1", a=Endpoint("h1", "eth0", Interface(addresses=["10.77.0.1/24"])),
                           b=Endpoint("c1", "eth0", Interface(addresses=["10.77.0.2/24"]))))
    return topology


def test_a_members_startup_command_on_the_host_node_is_refused_naming_it() -> None:
    with pytest.raises(LabError) as refused:
        compile_plan(resolve(lab_with_a_host_node(), registry(), trust=Trust(startup_commands=frozenset({"h1", "c1"}), owner=MEMBER)))
    messages = [str(problem) for problem in refused.value.problems]
    assert len(messages) == 1 and "only root may run startup commands on h1" in messages[0], messages


def test_a_members_container_commands_run_as_root_of_the_labs_user_namespace() -> None:
    topology = lab_with_a_host_node()
    topology.node_named("h1").startup_commands = []
    plan = compile_plan(resolve(topology, registry(), trust=Trust(startup_commands=frozenset({"c1"}), owner=MEMBER)))
    [command] = [op for op in plan.ops if isinstance(op, o.RunCommand)]
    assert command.place is o.Place.NODE
    assert command.argv[:2] == ("nsenter", f"--user=/run/vtopo/ns/{plan.prefix}/user")
    [user_namespace] = [op for op in plan.ops if isinstance(op, o.CreateUserNamespace)]
    assert (user_namespace.uid, user_namespace.gid) == (MEMBER.uid, MEMBER.gid)
    assert all(op.userns == user_namespace.path for op in plan.ops if isinstance(op, o.CreateNamespace))


@pytest.mark.privileged
def test_the_applier_refuses_a_members_command_on_the_host(tmp_path: Path) -> None:
    target = tmp_path / "owned"
    applier = Applier("vsec0", owner=MEMBER.uid)
    try:
        with pytest.raises(OpFailed, match="only root may run commands on the host itself"):
            applier.apply(o.RunCommand(owner="node h1", node="h1", command=f"touch {target}",
                                       argv=("touch", str(target)), place=o.Place.HOST))
        with pytest.raises(OpFailed, match="must be made inside its user namespace"):
            applier.apply(o.CreateNamespace(owner="node c1", name="vsec0-c1"))
    finally:
        applier.close()
    assert not target.exists()
    assert not Path("/run/netns/vsec0-c1").exists()
