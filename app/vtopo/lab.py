"""Opening a lab file and compiling it: the steps every front end (CLI, GUI) shares.

Validating a lab resolves it and lowers it only where lowering tells more (a segment's lower device): the compiler's
lowering, with every op's class, loads with the first plan (tests/test_cli_startup.py checks it)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from vtopo.checks.spec import typed_checks
from vtopo.compile.resolve import resolve
from vtopo.experiment.spec import experiment_problems
from vtopo.kinds.contract import Role
from vtopo.lab_terms import HostFacts, Trust
from vtopo.kinds.registry import Registry
from vtopo.kinds.registry import installed_kinds as registry
from vtopo.model import io
from vtopo.model.placement import sites_used
from vtopo.model.problems import LabError, Problem, errors_in
from vtopo.model.topology import Topology

if TYPE_CHECKING:
    from vtopo.compile.plan import Plan


@dataclass
class OpenedLab:
    """A lab file, loaded and checked."""

    path: Path
    topology: Topology


def open_lab(path: Path) -> OpenedLab:
    """Load a file and check its kinds and settings. Raises LabError with every problem."""
    return OpenedLab(Path(path), _checked(io.load(path)))


def read_lab(text: str, default_name: str = "lab") -> Topology:
    """A lab document received as text (the agent's input), loaded and checked as `open_lab` checks a file."""
    return _checked(io.loads(text, default_name))


def _checked(topology: Topology) -> Topology:
    _, problems = registry().check_nodes(topology)
    problems += expectation_problems(topology, registry())
    if errors_in(problems):
        raise LabError(problems)
    return topology


def expectation_problems(topology: Topology, kinds: Registry) -> list[Problem]:
    """What is wrong with the lab's checks and experiment, each problem naming the check or test and the field."""
    return typed_checks(topology, kinds)[1] + experiment_problems(topology)


def validated(topology: Topology, facts: HostFacts | None = None, trust: Trust | None = None) -> list[Problem]:
    """Every problem of the lab at once, as `vtopo validate` says them: the compiler's and, given this host's facts,
    what the host lacks and what its programs refuse in the configurations of the nodes the compile got to (FRR's dry
    run), whichever stage stopped the compile. A node with an error of its own is not given to the program: its text
    may be what the error is about (a line that has vtysh write a file)."""
    resolved = resolve(topology, registry(), facts, trust)
    problems = list(resolved.problems)
    if facts is None:
        return problems
    import socket

    from vtopo.host.lab_needs import missing_on_host

    host_links = {name for _, name in socket.if_nameindex()}
    refused = frozenset(problem.subject_id for problem in errors_in(problems))
    if resolved.failed_stage:
        return problems + missing_on_host(None, resolved.lab, host_links, refused)
    plan = None
    if any(node.kind.role is Role.SEGMENT for node in resolved.this_site.nodes.values()):  # a lower device to find
        from vtopo.compile.compiler import compile_plan

        plan = compile_plan(resolved)
    return problems + missing_on_host(plan, resolved.this_site, host_links, refused)


def site_plans(topology: Topology, facts: HostFacts | None = None, trust: Trust = Trust()) -> dict[str, Plan]:
    """The plan of each site's part of a lab spread over sites, this machine's first: one compile per site."""
    from vtopo.compile.compiler import compile_plan

    return {site: compile_plan(resolve(topology, registry(), facts, replace(trust, site=site)))
            for site in sites_used(topology)}


def explain_sites(topology: Topology, plans: dict[str, Plan], owners: set[str] | None = None) -> str:
    """Each site's script in turn (of `owners` only, when given), under a line naming the site and its machine."""
    def machine(site: str) -> str:
        return topology.sites[site].destination if site else "this machine"

    return "\n".join(f"# ======== site {site or 'local'} ({machine(site)})\n{plan.explain(owners)}"
                     for site, plan in plans.items())
