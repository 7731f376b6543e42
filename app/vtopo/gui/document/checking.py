"""Checking and compiling a lab for the designer, without Qt: its problems, and when it has no errors its broadcast
domains and the Explain dock's script. The designer runs this in a child process of its own (check_process), so
that none of the work holds the GUI thread's interpreter lock."""
from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Callable

from vtopo.compile.broadcast_domains import Domain, broadcast_domains_of
from vtopo.compile.compiler import compile_plan
from vtopo.compile.plan import Plan
from vtopo.compile.resolve import resolve
from vtopo.gui.document.line_diff import LineChange
from vtopo.lab_terms import HostFacts, Trust
from vtopo.lab import explain_sites, registry
from vtopo.model.placement import sites_used, spread_over_sites
from vtopo.model.problems import LabError, Problem, errors_in
from vtopo.model.topology import Topology


@dataclass(frozen=True)
class Analysis:
    """What the designer shows of one check of the lab: the edit it followed is `generation`."""

    generation: int
    problems: list[Problem] = field(default_factory=list)
    compiled: bool = False
    domains: list[Domain] = field(default_factory=list)
    explanation: str = ""
    """The whole plan explained (the Explain dock's script): of a lab spread over sites, each site's in turn."""
    changed_from: int = 0
    changes: list[LineChange] | None = None
    """The lines that turn the explanation of the analysis numbered `changed_from` into this one's (None: unknown)."""

    @property
    def errors(self) -> list[Problem]:
        return errors_in(self.problems)


@dataclass(frozen=True)
class Checked:
    """An analysis with the plans it explains, which stay where the check ran: the Explain dock asks for the part of
    some nodes and links (`explain`)."""

    analysis: Analysis
    topology: Topology
    plans: dict[str, Plan] = field(default_factory=dict)
    """This machine's plan under "", or, of a lab spread over sites, each site's."""

    def explain(self, owners: set[str]) -> str:
        """The script of `owners` (nodes and links, as plans name them) alone."""
        if spread_over_sites(self.topology):
            return explain_sites(self.topology, self.plans, owners)
        return self.plans[""].explain(owners) if self.plans else ""


class Stale(Exception):
    """A newer edit made this check pointless."""


def analyse(generation: int, topology: Topology, wanted: Callable[[], bool] = lambda: True) -> Checked:
    """Check and compile the lab once: its problems, and when it has no errors its plan and broadcast domains.
    Raises Stale between steps once `wanted` says the result is no longer wanted."""
    def step() -> None:
        if not wanted():
            raise Stale()

    try:
        resolved = resolve(topology, registry(), HostFacts())
        problems = list(resolved.problems)
        if resolved.failed_stage:
            return Checked(Analysis(generation, problems), topology)
        step()
        domains = broadcast_domains_of(resolved.lab)  # of the whole lab: lowering builds this site's part only
        step()
        plan = compile_plan(resolved)
        step()
        if not spread_over_sites(topology):
            return Checked(Analysis(generation, problems, True, domains, plan.explain()), topology, {"": plan})
        from vtopo.sites.spread import tunnel_vnis  # the VNIs a deploy from here would use

        vnis = tunnel_vnis()
        plans = {site: compile_plan(resolve(topology, registry(), HostFacts(), Trust(site=site, tunnel_vnis=vnis)))
                 for site in sites_used(topology)}
        step()
        explanation = explain_sites(topology, plans)
        return Checked(Analysis(generation, problems, True, domains, explanation), topology, plans)
    except Stale:
        raise
    except LabError as error:
        return Checked(Analysis(generation, error.problems), topology)
    except Exception as error:  # a plugin's check may fail in any way: show it as a problem, with where it broke
        where = traceback.extract_tb(error.__traceback__)[-1]
        return Checked(Analysis(generation, [Problem(f"internal error while checking the lab: {error!r} "
                                                     f"({where.filename}:{where.lineno}); please report it")]),
                       topology)
