"""A lab resolved: each node and link end in context (kind, settings, medium, namespace, device), its broadcast domains,
and every problem its rules found. `resolve` makes it in named stages, collecting every problem of a stage and stopping
at the end of the first that found an error, as netlab's transform does. It reads its inputs only, and what it hands
out is a value the rest of vtopo reads: deploy, operate, measure, capture, checks and the designer. Compiling it into
a plan is `vtopo.compile.compiler.compile_plan`."""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Callable, Mapping

from vtopo.compile.lab_rules import (device_name_rule, domain_rule, host_address_rule, image_rule, impairment_rule,
                                     interface_rule, kind_rule, loop_rule, named_rule, prefix_rule, resource_rule,
                                     segment_address_rule, startup_rule, vm_backend_rule)
from vtopo.compile.resolving import (Resolving, Step, find_domains, fit_tunnels, join_links, name_ends, parse_settings,
                                     place_nodes, place_sites)
from vtopo.compile.tunnels import split_switches
from vtopo.kinds.contract import EndContext, LabContext
from vtopo.kinds.registry import Registry
from vtopo.lab_terms import HostFacts, LabNames, Trust, default_prefix
from vtopo.model.placement import site_of
from vtopo.model.problems import LabError, Problem, Severity, errors_in
from vtopo.model.sites import SitePart
from vtopo.model.topology import Impairment, Link, Topology

VALIDATE: tuple[Step, ...] = (parse_settings, place_sites, prefix_rule, vm_backend_rule, place_nodes, join_links,
                              interface_rule)
NAME_AND_ADDRESS: tuple[Step, ...] = (
    name_ends, device_name_rule, named_rule, impairment_rule, find_domains, segment_address_rule, fit_tunnels,
    domain_rule, host_address_rule, resource_rule, image_rule, loop_rule, kind_rule, startup_rule)


class StageFailed(LabError):
    def __init__(self, stage: str, problems: list[Problem]):
        self.stage = stage
        super().__init__(problems)


@dataclass(frozen=True, eq=False)
class ResolvedLab:
    """A lab in context, as far as its stages got: `failed_stage` names the one whose errors stopped it ("" when none
    did)."""

    topology: Topology  # as resolved: of a lab spread over sites, a copy with its switches split between them
    lab: LabContext  # the whole lab in context, every site's nodes
    problems: tuple[Problem, ...]
    failed_stage: str
    part: SitePart  # this site's part of a lab spread over sites
    crossing: frozenset[str]  # the links between sites

    @property
    def warnings(self) -> list[Problem]:
        return [problem for problem in self.problems if problem.severity is Severity.WARNING]

    def valid(self) -> ResolvedLab:
        """This lab, which no error stopped; StageFailed (a LabError) naming the stage and listing every problem."""
        if self.failed_stage:
            raise StageFailed(self.failed_stage, list(self.problems))
        return self

    def runs_here(self, node_id: str) -> bool:
        """Whether a node runs on the site this lab was resolved for."""
        node = self.topology.nodes.get(node_id)
        return node is not None and site_of(self.topology, node) == self.part.site

    @cached_property
    def this_site(self) -> LabContext:
        """The lab in context with only the nodes and ends this site deploys (all of them, for a lab on one site):
        what lowering builds and a deploy checks the host against. The rest of the lab was checked as a whole."""
        if all(self.runs_here(node_id) for node_id in self.lab.nodes):
            return self.lab
        return _part_of(self.lab, self.runs_here)


def resolve(topology: Topology, kinds: Registry, facts: HostFacts | None = None, trust: Trust | None = None,
            deployed_media: Mapping[str, str] | None = None) -> ResolvedLab:
    """The lab in context on a host with `facts` (none probed: the designer's), for a deploy with `trust` (the
    user's consent, and which site's part), and every problem found; never raises for a problem of the lab's. A
    deployed lab is resolved with `deployed_media`, each link's medium as its deploy made it (its record keeps them)."""
    facts, trust = facts or HostFacts(), trust or Trust()
    resolved = topology.copy() if topology.sites else topology  # splitting switches and tunnels' MTUs change it
    names = LabNames(resolved.prefix or default_prefix(resolved.name), facts.run_root)
    state = Resolving(LabContext(resolved, names, facts, trust), kinds, deployed_media=deployed_media or {})
    problems = _run(state, VALIDATE)
    failed = "validate" if errors_in(problems) else ""
    if not failed and state.crossing and split_switches(state.lab):  # validated again, split
        state = state.anew()
        problems = _run(state, VALIDATE)
        failed = "split switches over sites" if errors_in(problems) else ""
    if not failed:
        problems += _run(state, NAME_AND_ADDRESS)
        failed = "name and address" if errors_in(problems) else ""
    return ResolvedLab(state.topology, _frozen(state.lab), tuple(problems), failed, state.part, state.crossing)


def _run(state: Resolving, steps: tuple[Step, ...]) -> list[Problem]:
    return [problem for step in steps for problem in step(state)]


def with_impairment(resolved: ResolvedLab, link_id: str, impairment: Impairment) -> ResolvedLab:
    """The lab resolved as `resolved` is, one link's impairment changed live (`vtopo link ... set`): the link keeps the
    medium and devices its deploy made, on a copy of the lab in context, and `resolved` is left as it was."""
    links = {**resolved.topology.links, link_id: replace(resolved.topology.links[link_id], impairment=impairment)}
    topology = replace(resolved.topology, links=links)
    copied = _copy_of(replace(resolved.lab, topology=topology), lambda _: True, links)
    return replace(resolved, topology=topology, lab=copied)


def _part_of(lab: LabContext, here: Callable[[str], bool]) -> LabContext:
    """A copy of the lab in context whose nodes and ends are those `here` keeps (see `_copy_of`)."""
    return _copy_of(lab, here, lab.topology.links)


def _copy_of(lab: LabContext, here: Callable[[str], bool], links: dict[str, Link]) -> LabContext:
    """A copy of the lab in context whose nodes and ends are those `here` keeps, each end of the link of its id in
    `links`; every node's and end's context is copied, so that each points to the copy (an end's peer on another site
    too), and `lab` is left as it was."""
    whole = replace(lab, nodes={}, ends=[], domains=[])
    part = replace(lab, whole=lab.whole if all(here(node_id) for node_id in lab.nodes) else whole)
    whole.nodes = {node_id: replace(node, lab=part, ends=[]) for node_id, node in lab.nodes.items()}
    ends: dict[int, EndContext] = {id(end): replace(end, owner=whole.nodes[end.node.id], peer=None,
                                                    link=links[end.link.id]) for end in lab.ends}
    for end in lab.ends:
        copy = ends[id(end)]
        copy.peer = ends[id(end.peer)] if end.peer is not None else None
        copy.owner.ends.append(copy)
    whole.ends = list(ends.values())
    part.nodes = {node_id: node for node_id, node in whole.nodes.items() if here(node_id)}
    part.ends = [end for end in whole.ends if here(end.node.id)]
    part.domains = [[ends[id(end)] for end in domain] for domain in lab.domains]
    _frozen(whole)
    return _frozen(part)


def _frozen(lab: LabContext) -> LabContext:
    """The lab in context, its nodes and its ends frozen: what `resolve` hands out cannot be changed."""
    for node in lab.nodes.values():
        node.freeze()
    for end in lab.ends:
        end.freeze()
    lab.freeze()
    return lab
