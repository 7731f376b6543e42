"""Compiling a lab: resolve (vtopo.compile.resolve) → lower → order, each a plain function. Lowering turns this site's
part of the resolved lab into ops; ordering puts them in an order their needs allow, the plan."""
from __future__ import annotations

import ipaddress
from typing import Any, Iterator

from vtopo.compile.addresses import host_namespace_addresses
from vtopo.compile.analysis import emptied_after
from vtopo.compile.containers import container_ops, hosts_text
from vtopo.compile.links import configure_ends, create_medium, made_on_their_bridges, subinterface_ops, tunnel_end
from vtopo.compile.plan import Plan, Step
from vtopo.compile.resolve import ResolvedLab
from vtopo.compile.startup import in_node, place_of
from vtopo.compile.tunnels import TUNNEL
from vtopo.kinds.contract import NodeContext, Role
from vtopo.ops import (AddAddress, AddRoute, ConfigureLink, ContainForwarding, CreateBridge, MakeDirectory, MoveLink, Op,
                       RunCommand, SetBridgeVlans, SetImpairment, SetMaster, SetSysctl, SetTxChecksum, StartDomain,
                       StartProcess)

CONFIGURING = (MoveLink, ConfigureLink, SetMaster, SetBridgeVlans, AddAddress, AddRoute, SetSysctl, SetImpairment,
               SetTxChecksum)


def compile_plan(resolved: ResolvedLab) -> Plan:
    """The plan of this site's part of a resolved lab. Raises StageFailed (a LabError) naming the stage that stopped
    resolving it and listing every problem."""
    return order(lower(resolved.valid()), resolved)


def lower(resolved: ResolvedLab) -> list[Op]:
    """The ops that build this site's part of the lab, in the order they were made (see `order`)."""
    hosts = hosts_text(resolved.lab)  # every site's nodes
    lab, part = resolved.this_site, resolved.part
    ops: list[Op] = list(container_ops(lab, hosts))
    for node in lab.nodes.values():
        ops.extend(node.kind.lower(node))
    done: set[str] = set()
    for end in lab.ends:
        if end.link.id in done:
            continue
        done.add(end.link.id)
        if end.medium == TUNNEL:
            ops.extend(tunnel_end(end, part))
            ops.extend(configure_ends(end, end.other, lab.names))
            ops.extend(end.kind.attach(end.owner, end))
            continue
        ops.extend(create_medium(end, end.other, lab.names))
        ops.extend(configure_ends(end, end.other, lab.names))
        for side in (end, end.other):
            ops.extend(side.kind.attach(side.owner, side))
            if side.kind.role is Role.NAMESPACE:
                ops.extend(subinterface_ops(side, lab.names.tag))
    names = lab.names
    # the lab has devices in the host's namespace, or tunnels, whose sockets are there
    if any(end.device and end.netns is None for end in lab.ends) or part.tunnels:
        host_nodes = sorted({end.device for end in lab.ends
                             if end.kind.role is Role.NAMESPACE and end.netns is None and end.device})
        own = sorted({str(ipaddress.ip_interface(address).ip) for address, _, _ in host_namespace_addresses(lab)})
        ops.insert(0, ContainForwarding(owner="lab", table=names.nft_table, device_prefix=names.device_prefix,
                                        host_node_devices=tuple(host_nodes), host_addresses=tuple(own),
                                        tunnels=tuple((tunnel.vni, tunnel.remote) for tunnel in part.tunnels)))
    if any(f"file:{names.run_dir}" in op.requires() for op in ops):
        ops.insert(0, MakeDirectory(owner="lab", path=names.run_dir))
    for node in lab.nodes.values():
        ops.extend(startup_ops(node))
    return made_on_their_bridges(ops)


def startup_ops(node: NodeContext[Any]) -> Iterator[RunCommand]:
    """The node's startup commands, each run where its kind runs them (vtopo.compile.startup)."""
    for command in node.node.startup_commands:
        yield RunCommand(owner=node.subject, node=node.node.name, command=command, argv=tuple(in_node(node, command)),
                         place=place_of(node))


def order(ops: list[Op], resolved: ResolvedLab) -> Plan:
    """The plan of `ops`: each after the ops that provide what it requires, processes and VMs once the Linux bridges
    are up and tagged (so that their first packets cross them, and a deploy killed once they run leaves no bridge
    `vtopo cleanup` cannot find without the journal), commands once all else is built, and otherwise in build phases (see
    `build_phase`), then as lowered."""
    import networkx as nx  # here, as in vtopo.compile.analysis: importing the compiler does not load it

    providers: dict[str, list[int]] = {}
    for index, op in enumerate(ops):
        for resource in op.provides():
            providers.setdefault(resource, []).append(index)
    graph: nx.DiGraph[int] = nx.DiGraph()
    with emptied_after(graph):
        graph.add_nodes_from(range(len(ops)))
        for index, op in enumerate(ops):
            for resource in op.requires():
                for provider in providers.get(resource, ()):
                    if provider != index:
                        graph.add_edge(provider, index)
        last = [index for index, op in enumerate(ops) if isinstance(op, RunCommand)]  # once all else is built
        for command in last:
            graph.add_edges_from((index, command) for index in range(len(ops)) if index not in last)
        graph.add_edges_from(zip(last, last[1:]))
        bridges = frozenset(op.name for op in ops if isinstance(op, CreateBridge))
        bridges_up = [index for index, op in enumerate(ops) if brings_up_a_bridge(op, bridges)]
        graph.add_edges_from((up, index) for up in bridges_up for index, op in enumerate(ops)
                             if isinstance(op, (StartProcess, StartDomain)))
        ordered = list(nx.lexicographical_topological_sort(
            graph, key=lambda index: (build_phase(ops[index], bridges), index)))
        position = {old: new for new, old in enumerate(ordered, start=1)}
        steps = [Step(position[old], ops[old], tuple(sorted(position[p] for p in graph.predecessors(old))))
                 for old in ordered]
    names = resolved.lab.names
    return Plan(resolved.topology.name, names.prefix, names.run_dir, steps, resolved.warnings,
                resolved.topology.notes)


def build_phase(op: Op, bridges: frozenset[str]) -> int:
    """Where an op goes among those its dependencies leave free to move: first every op that makes something,
    then the configuration inside namespaces, then the host ends attached to their bridges (those no veth made on
    its bridge: vtopo.compile.links.made_on_their_bridges), then the rest of the host's (host ends up), and last the
    Linux `bridges` brought up, once all their ports are attached and up. A switch's port moved into a namespace
    counts as configuration there, so that all the ports go to OVS at once. The kernel creates 400 veth pairs in
    0.3 s when they come first, and in 0.6-0.9 s when each follows the previous link's ports coming up; it attaches
    1,000 ports to a bridge and brings them up in 3.4-4.7 s when each is attached while down, and in 9.4-11 s when
    each comes up first (measured on the deploy benchmark's star). A bridge that is down leaves each port that comes
    up disabled, and enables them all at once when it comes up itself."""
    if not isinstance(op, CONFIGURING):
        return 0
    if isinstance(op, SetMaster):
        return 2
    if brings_up_a_bridge(op, bridges):
        return 4
    return 3 if getattr(op, "netns", None) is None else 1


def brings_up_a_bridge(op: Op, bridges: frozenset[str]) -> bool:
    return isinstance(op, ConfigureLink) and op.netns is None and op.name in bridges
