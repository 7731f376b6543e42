"""Topology -> Plan, in named stages. Each stage collects every problem, then the compiler stops at its end."""
from __future__ import annotations

import ipaddress
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

from vtopo.compile.analysis import broadcast_domains, emptied_after, interface_networks, switching_loops
from vtopo.compile.addresses import address_clashes
from vtopo.compile.containers import container_ops, hosts_text, missing_image
from vtopo.compile.broadcast_domains import broadcast_domains_of, domain_problems
from vtopo.compile.vlan_rules import stranded_by_vlans, vlan_problems
from vtopo.compile.links import configure_ends, create_medium, impairment_problem, medium_for
from vtopo.compile.plan import Plan, Step
from vtopo.compile.startup import startup_ops, startup_problems
from vtopo.compile.subinterfaces import named_problems, subinterface_ops, subinterface_problems
from vtopo.compile.tunnels import TUNNEL, TUNNEL_ROLES, lower_tunnel_mtus, split_switches, tunnel_end
from vtopo.kinds.contract import (SWITCH_PORT, EndContext, LabContext, NodeContext, ProtectsLoops, Role, image_of,
                                  resources_of)
from vtopo.lab_terms import MAX_INTERFACE_NAME, VM_BACKENDS, HostFacts, LabNames, Trust, default_prefix
from vtopo.kinds.registry import Registry
from vtopo.kinds.trust import host_address_problem
from vtopo.model.placement import crossing, site_of, site_parts, site_problems
from vtopo.model.problems import LabError, Problem, Severity, errors_in
from vtopo.model.rules import (INTERFACE_NAME, MAC_ADDRESS, NODE_NAME_RULE, is_valid_node_name, link_refusal,
                               subinterface_name)
from vtopo.model.sites import LOCAL, SitePart
from vtopo.model.topology import Topology
from vtopo.ops import (HOST, AddAddress, AddRoute, ConfigureLink, ContainForwarding, MakeDirectory, Op, RunCommand,
                       MoveLink, SetBridgeVlans, SetImpairment, SetMaster, SetSysctl, SetTxChecksum)

PREFIX = re.compile(r"[a-z][a-z0-9]{1,6}")
CONFIGURING = (MoveLink, ConfigureLink, SetMaster, SetBridgeVlans, AddAddress, AddRoute, SetSysctl, SetImpairment,
               SetTxChecksum)


class StageFailed(LabError):
    def __init__(self, stage: str, problems: list[Problem]):
        self.stage = stage
        super().__init__(problems)


class Compiler:
    def __init__(self, topology: Topology, registry: Registry, facts: HostFacts, trust: Trust | None = None):
        self.topology = topology.copy() if topology.sites else topology  # tunnels lower MTUs on its interfaces
        self.registry = registry
        self.facts = facts
        self.problems: list[Problem] = []
        prefix = topology.prefix or default_prefix(topology.name)
        self.lab = LabContext(self.topology, LabNames(prefix, facts.run_root), facts, trust or Trust())
        self.part = SitePart()  # this site's part of a lab spread over sites, once the sites are known to be right
        self.crossing: set[str] = set()  # the links between sites

    # ------------------------------------------------------------ stage plumbing

    def check(self) -> None:
        """The stages before lowering; raises StageFailed at the end of the first stage that found an error."""
        stages: list[tuple[str, Callable[[], None]]] = [
            ("validate", self.validate), ("split switches over sites", self.split_switches),
            ("name and address", self.name_and_address)]
        for stage, body in stages:
            body()
            if errors_in(self.problems):
                raise StageFailed(stage, self.problems)

    def run(self) -> Plan:
        self.check()
        return self.order(self.lower())

    def error(self, message: str, subject: str = "", subject_id: str = "", path: str = "") -> None:
        self.problems.append(Problem(message, subject, path, subject_id))

    def warn(self, message: str, subject: str = "", subject_id: str = "") -> None:
        self.problems.append(Problem(message, subject, "", subject_id, Severity.WARNING))

    # ------------------------------------------------------------ stage 1: validate

    def validate(self) -> None:
        settings, problems = self.registry.check_nodes(self.topology)
        self.problems.extend(problems)
        self._validate_sites()
        if not PREFIX.fullmatch(self.lab.names.prefix):
            self.error("the prefix must be 2 to 7 lowercase letters or digits, starting with a letter",
                       "lab", path="$.lab.prefix")
        if self.topology.vm_backend not in VM_BACKENDS:
            self.error(f"vm_backend must be one of {', '.join(b for b in VM_BACKENDS if b)}, not "
                       f"{self.topology.vm_backend!r}", "lab", path="$.lab.vm_backend")
        for node in self.topology.nodes.values():
            if not is_valid_node_name(node.name):
                self.error(NODE_NAME_RULE, f"node {node.name}", node.id)
            kind = self.registry.get(node.kind)
            if kind is not None and node.id in settings:
                self.lab.nodes[node.id] = NodeContext(node, kind, settings[node.id], self.lab)
        for link in self.topology.links.values():
            self._validate_link_kinds(link.id)
        for end in self.lab.ends:  # in this stage, so no kind check ever meets an address it cannot parse
            self._check_interface(end)
            self.problems.extend(subinterface_problems(end))

    def split_switches(self) -> None:
        """A switch spanning sites becomes one per site joined by tunnels; the lab so changed is validated again."""
        if self.crossing and split_switches(self.lab):
            self.problems = []
            self.lab = LabContext(self.topology, self.lab.names, self.facts, self.lab.trust)
            self.validate()

    def _validate_sites(self) -> None:
        problems = site_problems(self.topology)
        self.problems.extend(problems)
        if problems:
            return
        self.crossing = {link.id for link in self.topology.links.values() if crossing(self.topology, link)}
        trust = self.lab.trust
        if trust.site != LOCAL and trust.site not in self.topology.sites:
            self.error(f"this host was asked to deploy the part of site {trust.site!r}, which the lab does not name",
                       "lab", path="$.lab.sites")
            return
        try:
            self.part = site_parts(self.topology, trust.tunnel_vnis).get(trust.site, SitePart(trust.site))
        except ValueError as error:
            self.error(str(error), "lab", path="$.lab.sites")
            return
        own = self.part.address
        if own and self.part.tunnels and trust.host_addresses and own not in trust.host_addresses:
            self.error(f"the lab gives {own} as this site's address, which this host does not have: its tunnels would "
                       "leave from an address not its own", "lab", path="$.lab.sites")
        for tunnel in self.part.tunnels:
            link = self.topology.links[tunnel.link]
            subject = f"link {self.topology.describe_link(link)}"
            if tunnel.remote in trust.host_addresses:
                self.error(f"its tunnel would lead back to this host: the lab's sites give {tunnel.remote}, an address "
                           "of this host's own, as another site's address", subject, link.id)
            elif trust.tunnel_peers is not None and tunnel.remote not in trust.tunnel_peers:
                self.error(f"only root may tunnel a lab to {tunnel.remote}; ask an administrator to list it in the "
                           f'agent\'s configuration: tunnel_peers = ["{tunnel.remote}"]', subject, link.id)

    def _here(self, node_id: str) -> bool:
        """Whether a node runs on the site this compile is for."""
        node = self.topology.nodes.get(node_id)
        return node is not None and site_of(self.topology, node) == self.part.site

    def _validate_link_kinds(self, link_id: str) -> None:
        link = self.topology.links[link_id]
        subject = f"link {self.topology.describe_link(link)}"
        if link.a.node == link.b.node:
            self.error("a link must join two different nodes", subject, link.id)
            return
        a, b = self.lab.nodes.get(link.a.node), self.lab.nodes.get(link.b.node)
        if a is None or b is None:
            return
        if refusal := link_refusal(a.kind, b.kind):
            self.error(refusal, subject, link.id)
            return
        end_a = EndContext(link, link.a, a, self.topology.describe_link(link))
        end_b = EndContext(link, link.b, b, end_a.link_name)
        end_a.peer, end_b.peer = end_b, end_a
        medium = medium_for(end_a, end_b)
        if link.id in self.crossing:
            if not {a.kind.role, b.kind.role} <= TUNNEL_ROLES:
                self.error("a link between two sites must join containers, routers or switches; put a switch "
                           f"next to the {a.kind.name if a.kind.role not in TUNNEL_ROLES else b.kind.name} on its site",
                           subject, link.id)
                return
            medium = TUNNEL
        if medium is None:
            self.error(f"vtopo has no way to join a {a.kind.name} ({a.kind.role.value}) to a {b.kind.name} "
                       f"({b.kind.role.value})", subject, link.id)
            return
        end_a.medium = end_b.medium = medium
        a.ends.append(end_a)
        b.ends.append(end_b)
        self.lab.ends += [end_a, end_b]

    # ------------------------------------------------------------ stage 2: name and address

    def name_and_address(self) -> None:
        for end in self.lab.ends:
            self._name_end(end)
        self._check_device_names()
        for end in self.lab.ends:
            self.problems.extend(named_problems(end))
        for link_id in self.topology.links:
            self._check_impairment(link_id)
        self._check_domains()
        lower_tunnel_mtus(self.lab, self.crossing)
        domains = broadcast_domains_of(self.lab)
        self.problems.extend(domain_problems(self.lab, stranded_by_vlans(self.lab, domains)))
        self.problems.extend(vlan_problems(self.lab, domains))
        self.problems.extend(address_clashes(domains))
        self._check_host_namespace_addresses()
        self._check_resources()
        self._check_images()
        for loop in switching_loops(self.lab):
            self._check_loop([self.lab.nodes[n] for n in loop])
        for node in self.lab.nodes.values():
            self.problems.extend(node.kind.check(node))
        for index, node_id in enumerate(self.topology.nodes):
            if node_id in self.lab.nodes:
                self.problems.extend(startup_problems(self.lab.nodes[node_id], f"$.nodes[{index}].startup_commands"))

    def _check_loop(self, loop: list[NodeContext[Any]]) -> None:
        unprotected = [node for node in loop
                       if not (isinstance(node.kind, ProtectsLoops) and node.kind.protects_loops(node))]
        if not unprotected:
            return
        names = ", ".join(node.node.name for node in loop)
        without = [node.node.name for node in unprotected if not isinstance(node.kind, ProtectsLoops)]
        advice = (f"{', '.join(without)} cannot run STP: take a link out of the loop." if without else
                  "Turn STP on for these bridges.")
        self.warn(f"the switches {names} form a loop and not all of them run STP; broadcasts will circle forever. "
                  f"{advice}", f"node {loop[0].node.name}", loop[0].node.id)

    def _name_end(self, end: EndContext) -> None:
        kind, node = end.kind, end.owner
        if kind.role is Role.SEGMENT or not self._here(end.node.id):
            return  # a macvlan or macvtap child belongs to the other end; another site's node has no device here
        if kind.role is Role.NAMESPACE:
            end.netns = kind.netns(node)
        if end.medium == "tap" and kind.role is not Role.MACHINE:
            end.device = end.other.kind.device_name(end.other.owner, end.other)  # the VM's tap, seen from here
        elif end.medium == SWITCH_PORT and kind.role is Role.SWITCH:
            end.device = ""  # the port is the interface inside the namespace: nothing of the link stays in the host
        else:
            end.device = kind.device_name(node, end)

    def _check_device_names(self) -> None:
        by_place: Counter[tuple[str, str]] = Counter()
        for end in self.lab.ends:
            if not end.device or (end.medium == "tap" and end.kind.role is not Role.MACHINE):
                continue
            place = end.netns or HOST
            by_place[(place, end.device)] += 1
            subject = f"node {end.node.name}"
            if len(end.device) > MAX_INTERFACE_NAME:
                where = "in the host namespace" if end.netns is None else f"in namespace {end.netns}"
                self.error(f"port {end.end.port} needs an interface named {end.device!r} {where}, which is "
                           f"{len(end.device)} characters; the kernel allows {MAX_INTERFACE_NAME}. Use a shorter node "
                           "name" + (" or interface name." if end.netns else " or a shorter lab prefix."),
                           subject, end.node.id)
            elif not INTERFACE_NAME.fullmatch(end.device):
                self.error(f"interface name {end.device!r} may hold only letters, digits, '.', '-' and '_'",
                           subject, end.node.id)
        for (place, device), count in sorted(by_place.items()):
            if count > 1:
                self.error(f"{count} links want an interface named {device!r} in the same namespace",
                           f"namespace {place}" if place else "the host's namespace")
        for node in self.lab.nodes.values():
            own = node.kind.role is Role.SWITCH and node.names.node_device(node.node.name)
            if own and len(own) > MAX_INTERFACE_NAME:
                self.error(f"the bridge device would be named {own!r} ({len(own)} characters; the kernel allows "
                           f"{MAX_INTERFACE_NAME}). Use a shorter node name.", f"node {node.node.name}", node.node.id)

    def _check_impairment(self, link_id: str) -> None:
        link = self.topology.links[link_id]
        problem = impairment_problem(link.impairment, self.facts)
        if problem is not None:
            self.error(problem, f"link {self.topology.describe_link(link)}", link.id)

    def _check_interface(self, end: EndContext) -> None:
        interface = end.end.interface
        subject = f"link {end.link_name}"
        side = f"{end.node.name}:{end.end.port}"
        if interface.mac and not MAC_ADDRESS.fullmatch(interface.mac):
            self.error(f"{side}: MAC {interface.mac!r} is not of the form 02:00:00:00:00:01", subject, end.link.id)
        if interface.mtu and not 68 <= interface.mtu <= 65535:
            self.error(f"{side}: MTU {interface.mtu} is outside 68..65535", subject, end.link.id)
        if interface.addresses and not end.kind.ports_take_addresses:
            self.error(f"{side}: a {end.kind.name} port takes no address; give the address to the node at the other "
                       "end" + (f", or {end.kind.address_hint}" if end.kind.address_hint else ""),
                       subject, end.link.id)
        if interface.dhcp and not end.kind.dhcp_client:
            self.error(f"{side}: a {end.kind.name} runs no DHCP client; set dhcp on a container's or a router's port",
                       subject, end.link.id)
        self._check_addresses(side, interface.addresses, end)
        for sub in interface.subinterfaces:
            self._check_addresses(subinterface_name(side, sub.vlan), sub.addresses, end)

    def _check_addresses(self, side: str, addresses: list[str], end: EndContext) -> None:
        subject = f"link {end.link_name}"
        for address in addresses:
            if "/" not in address:
                self.error(f"{side}: address {address!r} needs a prefix length, e.g. {address}/24", subject, end.link.id)
                continue
            try:
                interface_address = ipaddress.ip_interface(address)
            except ValueError:
                self.error(f"{side}: {address!r} is not an IPv4 or IPv6 address with prefix", subject, end.link.id)
                continue
            if _is_broadcast(interface_address):
                network = interface_address.network
                self.error(f"{side}: {address} is the broadcast address of {network}, which no host can hold: the "
                           "kernel refuses it as a route's gateway ('Nexthop has invalid gateway') and sends packets "
                           f"for it to every host on the wire. Use one of {network.network_address + 1}.."
                           f"{network.broadcast_address - 1}", subject, end.link.id)

    def _check_host_namespace_addresses(self) -> None:
        for address, subject, subject_id in host_namespace_addresses(self.lab):
            try:
                problem = host_address_problem(address, self.lab.trust.host_networks)
            except ValueError:
                continue  # not an address at all: the node's own check says so
            if problem:
                self.error(problem, subject, subject_id)

    def _check_resources(self) -> None:
        """The VMs' memory must fit in the host's (this site's, of a lab spread over sites), or the lab is refused
        before anything starts."""
        taken = [resources_of(node) for node_id, node in self.lab.nodes.items() if self._here(node_id)]
        memory, cpus = sum(m for m, _ in taken), sum(c for _, c in taken)
        if self.facts.memory_mb and memory > self.facts.memory_mb:
            self.error(f"the lab's VMs need {memory:,} MiB of memory together and this host has "
                       f"{self.facts.memory_mb:,} MiB; give them less memory or run fewer VMs", "lab")
        elif self.facts.memory_mb and memory > self.facts.memory_mb * 3 // 4:
            self.warn(f"the lab's VMs take {memory:,} of the host's {self.facts.memory_mb:,} MiB of memory", "lab")
        if self.facts.cpus and cpus > self.facts.cpus:
            self.warn(f"the lab's VMs have {cpus} vCPUs together and this host has {self.facts.cpus} CPUs; they "
                      "will share them and run slower", "lab")

    def _check_images(self) -> None:
        """Each image a node of this site names must be here for the lab's owner, where the host was probed (a node on
        another site runs what that site has)."""
        if not self.facts.probed:
            return
        for node_id, node in self.lab.nodes.items():
            image = image_of(node) if self._here(node_id) else None
            if image is not None and self.facts.oci_image(image.reference) is None:
                self.error(missing_image(node, image.reference), node.subject, node_id)

    def _check_domains(self) -> None:
        self.lab.domains = broadcast_domains(self.lab)
        for domain in self.lab.domains:
            owners: dict[str, str] = {}
            for end in domain:
                try:
                    addresses = interface_networks(end)
                except ValueError:
                    continue
                for address in addresses:
                    key = str(address.ip)
                    here = f"{end.node.name}:{end.end.port}"
                    if key in owners:
                        self.error(f"address {key} is used twice on one segment ({owners[key]} and {here})",
                                   f"link {end.link_name}", end.link.id)
                    owners[key] = here

    # ------------------------------------------------------------ stage 3: lower

    def keep_this_site(self) -> None:
        """Leave in the lab in context only the nodes and ends this site deploys; the rest of the lab has been
        checked as a whole."""
        self.lab.nodes = {node_id: node for node_id, node in self.lab.nodes.items() if self._here(node_id)}
        self.lab.ends = [end for end in self.lab.ends if end.node.id in self.lab.nodes]

    def lower(self) -> list[Op]:
        hosts = hosts_text(self.lab)  # every site's nodes
        self.keep_this_site()
        ops: list[Op] = list(container_ops(self.lab, hosts))
        for node in self.lab.nodes.values():
            ops.extend(node.kind.lower(node))
        done: set[str] = set()
        for end in self.lab.ends:
            if end.link.id in done:
                continue
            done.add(end.link.id)
            if end.medium == TUNNEL:
                ops.extend(tunnel_end(end, self.part))
                ops.extend(configure_ends(end, end.other, self.lab.names))
                ops.extend(end.kind.attach(end.owner, end))
                continue
            ops.extend(create_medium(end, end.other, self.lab.names))
            ops.extend(configure_ends(end, end.other, self.lab.names))
            for side in (end, end.other):
                ops.extend(side.kind.attach(side.owner, side))
                if side.kind.role is Role.NAMESPACE:
                    ops.extend(subinterface_ops(side, self.lab.names.tag))
        names = self.lab.names
        # the lab has devices in the host's namespace, or tunnels, whose sockets are there
        if any(end.device and end.netns is None for end in self.lab.ends) or self.part.tunnels:
            host_nodes = sorted({end.device for end in self.lab.ends
                                 if end.kind.role is Role.NAMESPACE and end.netns is None and end.device})
            own = sorted({str(ipaddress.ip_interface(address).ip)
                          for address, _, _ in host_namespace_addresses(self.lab)})
            ops.insert(0, ContainForwarding(owner="lab", table=names.nft_table, device_prefix=names.device_prefix,
                                            host_node_devices=tuple(host_nodes), host_addresses=tuple(own),
                                            tunnels=tuple((tunnel.vni, tunnel.remote) for tunnel in self.part.tunnels)))
        if any(f"file:{self.lab.names.run_dir}" in op.requires() for op in ops):
            ops.insert(0, MakeDirectory(owner="lab", path=self.lab.names.run_dir))
        for node in self.lab.nodes.values():
            ops.extend(startup_ops(node))
        return ops

    # ------------------------------------------------------------ stage 4: order

    def order(self, ops: list[Op]) -> Plan:
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
            order = list(nx.lexicographical_topological_sort(graph,
                                                             key=lambda index: (build_phase(ops[index]), index)))
            position = {old: new for new, old in enumerate(order, start=1)}
            steps = [Step(position[old], ops[old], tuple(sorted(position[p] for p in graph.predecessors(old))))
                     for old in order]
        warnings = [p for p in self.problems if p.severity is Severity.WARNING]
        return Plan(self.topology.name, self.lab.names.prefix, self.lab.names.run_dir, steps, warnings,
                    self.topology.notes)


def build_phase(op: Op) -> int:
    """Where an op goes among those its dependencies leave free to move: first every op that makes something,
    then the configuration inside namespaces, then the host's (host ends up, and attached to their bridges). A
    switch's port moved into a namespace counts as configuration there, so that all the ports go to OVS at once.
    The kernel creates 400 veth pairs in 0.3 s when they come first, and in 0.6-0.9 s when each follows the
    previous link's ports coming up (measured on the deploy benchmark's star)."""
    if not isinstance(op, CONFIGURING):
        return 0
    return 2 if getattr(op, "netns", None) is None else 1


def compile_lab(topology: Topology, registry: Registry, facts: HostFacts | None = None, trust: Trust | None = None
                ) -> Plan:
    """Compile a lab. Raises StageFailed (a LabError) naming the stage and listing every problem."""
    return compile_in_context(topology, registry, facts, trust)[0]


def host_namespace_addresses(lab: LabContext) -> list[tuple[str, str, str]]:
    """Addresses the lab gives the host's own namespace (the host node, numbered bridges), each with the subject and
    id of what gives it."""
    placed: list[tuple[str, str, str]] = [(address, node.subject, node.node.id) for node in lab.nodes.values()
                                          for address in node.kind.host_addresses(node)]
    placed += [(address, f"link {end.link_name}", end.link.id) for end in lab.ends
               if end.kind.role is Role.NAMESPACE and end.netns is None for address in end.end.interface.addresses]
    return placed


def compile_in_context(topology: Topology, registry: Registry, facts: HostFacts | None = None,
                       trust: Trust | None = None) -> tuple[Plan, LabContext]:
    """The plan and the lab in context it was compiled in, from one pass (deploy checks the host against both)."""
    compiler = Compiler(topology, registry, facts or HostFacts(), trust)
    return compiler.run(), compiler.lab


def lab_context(topology: Topology, registry: Registry, facts: HostFacts | None = None, trust: Trust | None = None
                ) -> LabContext:
    """The lab in context (namespaces, devices, broadcast domains) without lowering it: for exec, ping, iperf."""
    compiler = Compiler(topology, registry, facts or HostFacts(), trust)
    compiler.check()
    return compiler.lab


@dataclass(frozen=True)
class CheckedLab:
    """A lab checked and, unless an error stopped it, compiled, in one pass: what `vtopo validate` reports on."""

    problems: list[Problem]
    plan: Plan | None  # None when an error stopped the compile
    lab: LabContext


def checked_lab(topology: Topology, registry: Registry, facts: HostFacts | None = None, trust: Trust | None = None
                ) -> CheckedLab:
    compiler = Compiler(topology, registry, facts or HostFacts(), trust)
    try:
        plan: Plan | None = compiler.run()
    except StageFailed:
        plan = None
    return CheckedLab(compiler.problems, plan, compiler.lab)


def check_lab(topology: Topology, registry: Registry, facts: HostFacts | None = None, trust: Trust | None = None
              ) -> list[Problem]:
    """Every problem and warning, without raising: what `vtopo validate` and the GUI's problems panel show."""
    return checked_lab(topology, registry, facts, trust).problems


def _is_broadcast(interface: ipaddress.IPv4Interface | ipaddress.IPv6Interface) -> bool:
    """An IPv4 subnet's broadcast address given as an interface's own (/31 and /32 have none: RFC 3021)."""
    network = interface.network
    return network.version == 4 and network.prefixlen < 31 and interface.ip == network.broadcast_address
