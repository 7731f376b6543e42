"""What `vtopo deploy`, `destroy`, `status` and `plan --explain` do for a lab spread over sites. Each returns None
for a lab on this machine alone, which the command then handles as before."""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from vtopo.agent.client import AgentClient, AgentUnavailable
from vtopo.compile.compiler import compile_lab
from vtopo.compile.plan import Plan
from vtopo.kinds.environment import HostFacts, Trust
from vtopo.kinds.registry import installed_kinds
from vtopo.model import io
from vtopo.model.placement import site_parts, sites_used
from vtopo.model.topology import Topology
from vtopo.reports import ProgressCallback, user_name
from vtopo.sites import spread as s

EXIT_OK, EXIT_FAILED = 0, 1


def _spread_lab(path: Path) -> Topology | None:
    if path.suffix != ".vtopo" or not path.exists():
        return None
    topology = io.load(path)
    return topology if s.spread(topology) else None


def _needs_agent(agent: AgentClient | None) -> AgentClient:
    if agent is None:
        raise AgentUnavailable("a lab spread over sites is deployed through the agents of its sites; start this "
                               "machine's with `sudo vtopo agent --daemon` (or `make run`)")
    return agent


def deploy(args: argparse.Namespace, agent: AgentClient | None, consent: Trust, progress: ProgressCallback
           ) -> int | None:
    topology = _spread_lab(args.file)
    if topology is None:
        return None
    refused = s.not_allowed(topology, frozenset(args.allow_site))
    if refused:
        print("\n".join(f"error: {line}" for line in refused), file=sys.stderr)
        return EXIT_FAILED
    try:
        reports = s.deploy(topology, consent, _needs_agent(agent), progress, str(args.file.resolve()))
    except s.SitesFailed as error:
        print(f"error: the deploy of lab {topology.name} failed:\n{error}", file=sys.stderr)
        return EXIT_FAILED
    for site, report in reports:
        for notice in report.notices:
            print(f"note: [{s.site_label(site)}] {notice}")
        print(f"deployed site {s.site_label(site)}'s part of lab {report.lab} (prefix {report.prefix}): "
              f"{report.ops} operations in {report.seconds:.2f} s")
    return EXIT_OK


def destroy(lab: str, agent: AgentClient | None, progress: ProgressCallback) -> int | None:
    if agent is None or (topology := s.deployed_topology(lab, agent)) is None or not s.spread(topology):
        return None
    try:
        steps = s.destroy(topology, agent, progress)
    except s.SitesFailed as error:
        print(f"error: the destroy of lab {lab} failed:\n{error}", file=sys.stderr)
        return EXIT_FAILED
    for site, count in steps.items():
        print(f"destroyed site {s.site_label(site)}'s part of lab {lab}: {count} operations")
    return EXIT_OK


def status(lab: str, agent: AgentClient | None) -> int | None:
    if agent is None or (topology := s.deployed_topology(lab, agent)) is None or not s.spread(topology):
        return None
    up = True
    for site in s.status(topology, agent):
        label = s.site_label(site.site)
        if site.error or not site.labs:
            print(f"site {label}: {site.error or 'its part is not deployed'}")
            up = False
        for summary in site.labs:
            print(f"site {label}: lab {summary.lab}, owner {user_name(summary.owner)}: {summary.state}")
            for kind, parts in (("node", summary.nodes), ("link", summary.links)):
                for part in parts:
                    print(f"  {kind} {part.name:<24} {part.state}{part.detail}")
            up = up and summary.up
    return EXIT_OK if up else EXIT_FAILED


def explain(topology: Topology, facts: HostFacts | None, consent: Trust,
            owners: set[str] | None) -> str | None:
    """The script of each site's part, one after the other."""
    if not s.spread(topology):
        return None
    parts = site_parts(topology, s.tunnel_vnis())
    texts = []
    for site in sites_used(topology):
        plan: Plan = compile_lab(topology, installed_kinds(), facts, replace(consent, site=parts[site]))
        where = topology.sites[site].destination if site else "this machine"
        texts.append(f"# ======== site {s.site_label(site)} ({where})\n{plan.explain(owners)}")
    return "\n".join(texts)
