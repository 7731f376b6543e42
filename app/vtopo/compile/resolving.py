"""The lab as `resolve` builds it, stage by stage, and the steps that build it: each node and link end in context,
the ends named, the lab's broadcast domains found. Only `resolve` holds a Resolving; what it hands out is frozen."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

from vtopo.compile.analysis import emptied_after, ends_by_domain, l2_graph
from vtopo.compile.broadcast_domains import Domain, domains_in
from vtopo.compile.media import medium_for
from vtopo.compile.tunnels import TUNNEL, TUNNEL_ROLES, lower_tunnel_mtus
from vtopo.kinds.contract import SWITCH_PORT, EndContext, LabContext, NodeContext, Role
from vtopo.kinds.registry import Registry
from vtopo.model.placement import crossing, site_of, site_parts, site_problems
from vtopo.model.problems import Problem, Severity
from vtopo.model.rules import NODE_NAME_RULE, is_valid_node_name, link_refusal
from vtopo.model.sites import LOCAL, SitePart
from vtopo.model.topology import Topology


@dataclass
class Resolving:
    """The lab in context so far, with what the stages learnt of its sites."""

    lab: LabContext
    kinds: Registry
    settings: dict[str, Any] = field(default_factory=dict)  # each node's settings, parsed, by node id
    part: SitePart = field(default_factory=SitePart)  # this site's part of a lab spread over sites, once right
    crossing: frozenset[str] = frozenset()  # the links between sites
    deployed_media: Mapping[str, str] = field(default_factory=dict)  # of a deployed lab: each link's, as deployed
    domains: list[Domain] = field(default_factory=list)  # the lab's broadcast domains, once found

    @property
    def topology(self) -> Topology:
        return self.lab.topology

    def here(self, node_id: str) -> bool:
        """Whether a node runs on the site this lab is resolved for."""
        node = self.topology.nodes.get(node_id)
        return node is not None and site_of(self.topology, node) == self.part.site

    def anew(self) -> Resolving:
        """A fresh start on the same topology (which splitting switches over sites has changed)."""
        return Resolving(LabContext(self.topology, self.lab.names, self.lab.facts, self.lab.trust), self.kinds,
                         deployed_media=self.deployed_media)


Step = Callable[[Resolving], Iterable[Problem]]
"""A step of a stage: a rule, which says what is wrong with the lab so far, or a step that builds the next part of
it in context and says what kept it from building a part."""


def error(message: str, subject: str = "", subject_id: str = "", path: str = "") -> Problem:
    return Problem(message, subject, path, subject_id)


def warning(message: str, subject: str = "", subject_id: str = "") -> Problem:
    return Problem(message, subject, "", subject_id, Severity.WARNING)


def parse_settings(state: Resolving) -> Iterator[Problem]:
    state.settings, problems = state.kinds.check_nodes(state.topology)
    yield from problems


def place_sites(state: Resolving) -> Iterator[Problem]:
    """Which links cross between sites, and what this site deploys of the lab: its nodes and its tunnel ends."""
    problems = site_problems(state.topology)
    yield from problems
    if problems:
        return
    topology, trust = state.topology, state.lab.trust
    state.crossing = frozenset(link.id for link in topology.links.values() if crossing(topology, link))
    if trust.site != LOCAL and trust.site not in topology.sites:
        yield error(f"this host was asked to deploy the part of site {trust.site!r}, which the lab does not name",
                    "lab", path="$.lab.sites")
        return
    try:
        state.part = site_parts(topology, trust.tunnel_vnis).get(trust.site, SitePart(trust.site))
    except ValueError as failure:
        yield error(str(failure), "lab", path="$.lab.sites")
        return
    own = state.part.address
    if own and state.part.tunnels and trust.host_addresses and own not in trust.host_addresses:
        yield error(f"the lab gives {own} as this site's address, which this host does not have: its tunnels would "
                    "leave from an address not its own", "lab", path="$.lab.sites")
    for tunnel in state.part.tunnels:
        link = topology.links[tunnel.link]
        subject = f"link {topology.describe_link(link)}"
        if tunnel.remote in trust.host_addresses:
            yield error(f"its tunnel would lead back to this host: the lab's sites give {tunnel.remote}, an address of "
                        "this host's own, as another site's address", subject, link.id)
        elif trust.tunnel_peers is not None and tunnel.remote not in trust.tunnel_peers:
            yield error(f"only root may tunnel a lab to {tunnel.remote}; ask an administrator to list it in the "
                        f'agent\'s configuration: tunnel_peers = ["{tunnel.remote}"]', subject, link.id)


def place_nodes(state: Resolving) -> Iterator[Problem]:
    """Each node of a known kind whose settings parsed, in context; a node's name must be one vtopo can use."""
    for node in state.topology.nodes.values():
        if not is_valid_node_name(node.name):
            yield error(NODE_NAME_RULE, f"node {node.name}", node.id)
        kind = state.kinds.get(node.kind)
        if kind is not None and node.id in state.settings:
            state.lab.nodes[node.id] = NodeContext(node, kind, state.settings[node.id], state.lab)


def join_links(state: Resolving) -> Iterator[Problem]:
    """Each link's two ends in context, over the medium its two kinds (and sites) call for; or why it cannot be."""
    topology, lab = state.topology, state.lab
    for link in topology.links.values():
        subject = f"link {topology.describe_link(link)}"
        if link.a.node == link.b.node:
            yield error("a link must join two different nodes", subject, link.id)
            continue
        a, b = lab.nodes.get(link.a.node), lab.nodes.get(link.b.node)
        if a is None or b is None:
            continue
        if refusal := link_refusal(a.kind, b.kind):
            yield error(refusal, subject, link.id)
            continue
        end_a = EndContext(link, link.a, a, topology.describe_link(link))
        end_b = EndContext(link, link.b, b, end_a.link_name)
        end_a.peer, end_b.peer = end_b, end_a
        medium = medium_for(end_a, end_b, state.deployed_media.get(link.id))
        if link.id in state.crossing:
            if not {a.kind.role, b.kind.role} <= TUNNEL_ROLES:
                away = a.kind.name if a.kind.role not in TUNNEL_ROLES else b.kind.name
                yield error("a link between two sites must join containers, routers or switches; put a switch next "
                            f"to the {away} on its site", subject, link.id)
                continue
            medium = TUNNEL
        if medium is None:
            yield error(f"vtopo has no way to join a {a.kind.name} ({a.kind.role.value}) to a {b.kind.name} "
                        f"({b.kind.role.value})", subject, link.id)
            continue
        end_a.medium = end_b.medium = medium
        a.ends.append(end_a)
        b.ends.append(end_b)
        lab.ends += [end_a, end_b]


def name_ends(state: Resolving) -> Iterable[Problem]:
    """Each end's namespace and device on this site (another site's node has no device here)."""
    for end in state.lab.ends:
        kind, node = end.kind, end.owner
        if kind.role is Role.SEGMENT or not state.here(end.node.id):
            continue  # a macvlan or macvtap child belongs to the other end
        if kind.role is Role.NAMESPACE:
            end.netns = kind.netns(node)
        if end.medium == "tap" and kind.role is not Role.MACHINE:
            end.device = end.other.kind.device_name(end.other.owner, end.other)  # the VM's tap, seen from here
        elif end.medium == SWITCH_PORT and kind.role is Role.SWITCH:
            end.device = ""  # the port is the interface inside the namespace: nothing of the link stays in the host
        else:
            end.device = kind.device_name(node, end)
    return ()


def find_domains(state: Resolving) -> Iterable[Problem]:
    """The ends on each L2 segment, and the lab's broadcast domains for the rules that read them: both from one graph
    of its wires."""
    with emptied_after(l2_graph(state.lab)) as graph:
        state.lab.domains = ends_by_domain(graph)
        state.domains = domains_in(state.lab, graph)
    return ()


def fit_tunnels(state: Resolving) -> Iterable[Problem]:
    """Every interface on a segment a tunnel is part of takes an MTU that the tunnel carries."""
    lower_tunnel_mtus(state.lab, state.crossing)
    return ()
