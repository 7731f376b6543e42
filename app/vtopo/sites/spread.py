"""Deploy, destroy and ask the status of a lab spread over sites, each part through the owning site's agent.

A deploy is all or nothing: the sites deploy their parts at once, and when one fails, every site that deployed its
part destroys it again (the failed one has rolled its own back). The local site always deploys its part, if empty:
its record keeps the lab's document, from which destroy and status learn the sites again.
"""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TypeVar

from vtopo.client.agent import AgentClient, AgentError, AgentRefused, AgentUnavailable
from vtopo.kinds.environment import Trust
from vtopo.model import io
from vtopo.model.placement import sites_used
from vtopo.model.sites import LOCAL, DEFAULT_VNIS, Site
from vtopo.model.expectations import Experiment
from vtopo.model.topology import Position, Topology
from vtopo.reports import DeployReport, LabStatus, Progress, ProgressCallback
from vtopo.server.policy import Policy, PolicyError

FAILURES = (AgentError, AgentRefused, AgentUnavailable)
T = TypeVar("T")


class SitesFailed(Exception):
    """What failed on which site; the message has a line per site."""

    def __init__(self, message: str, rolled_back: bool = False) -> None:
        super().__init__(message)
        self.rolled_back = rolled_back  # a deploy's: every site's part is gone again


def site_label(site: str) -> str:
    return site or "local"


def connection_of(site: Site) -> str:
    """What vtopo uses to connect to a site: ssh's destination and port, and the identity and known hosts files."""
    uses = ", ".join(f"{what} {value}" for what, value in (("identity", site.identity),
                                                            ("known hosts", site.known_hosts)) if value)
    return f"{site.destination} port {site.port}{f' ({uses})' if uses else ''}"


def not_allowed(topology: Topology, allowed: frozenset[str], allow: str = "with --allow-site {name}") -> list[str]:
    """The sites the lab's file names that the user has not allowed vtopo to connect to, each with what it would use
    and how to allow it (`allow`, where {name} is the site's)."""
    return [f"site {name}: the lab would have vtopo connect to {connection_of(topology.sites[name])}; allow it "
            f"{allow.format(name=name)}" for name in sites_used(topology)[1:] if name not in allowed]


def unchangeable(lab: str) -> str:
    """Why a running lab spread over sites (or about to be) is not changed in place."""
    return (f"lab {lab} is spread over sites, and a running lab spread over sites cannot be changed in place yet: "
            "destroy it and deploy it again")


def same_deploy(running: Topology, edited: Topology) -> bool:
    """Whether an edit leaves what the sites build as it runs: only the drawing (where nodes and notes are), the
    lab's notes, its checks or its experiment changed."""
    return _what_deploys(running) == _what_deploys(edited)


def _what_deploys(topology: Topology) -> str:
    bare = topology.copy()
    for node in bare.nodes.values():
        node.position = Position()
    bare.notes, bare.annotations, bare.checks, bare.experiment = "", {}, [], Experiment()
    return io.dumps(bare)


def clients(topology: Topology, local: AgentClient) -> dict[str, AgentClient]:
    """The agent of each site with nodes, the local one first."""
    return {site: local if site == LOCAL else AgentClient(topology.sites[site]) for site in sites_used(topology)}


def tunnel_vnis() -> tuple[int, int]:
    """The VNI range of this host's agent configuration; the other sites' agents check it against theirs."""
    try:
        return Policy.read().tunnel_vnis
    except (PolicyError, PermissionError):
        return DEFAULT_VNIS


def _on_each(agents: dict[str, AgentClient], work: Callable[[str, AgentClient], T]) -> dict[str, T | Exception]:
    """`work` on every site at once; each site's result, or what failed there."""
    def attempt(site: str) -> T | Exception:
        try:
            return work(site, agents[site])
        except FAILURES as error:
            return error

    with ThreadPoolExecutor(max_workers=len(agents)) as pool:
        return dict(zip(agents, pool.map(attempt, agents)))


def _labelled(progress: ProgressCallback, site: str) -> ProgressCallback:
    return lambda event: progress(replace(event, message=f"[{site_label(site)}] {event.message}"))


def deploy(topology: Topology, consent: Trust, local: AgentClient, progress: ProgressCallback,
           source: str = "") -> list[tuple[str, DeployReport]]:
    """Deploy every site's part; on any failure, destroy what the others deployed and raise SitesFailed."""
    document, vnis = io.dumps(topology), tunnel_vnis()
    agents = clients(topology, local)

    def deploy_part(site: str, agent: AgentClient) -> DeployReport:
        return agent.deploy(document, replace(consent, site=site, tunnel_vnis=vnis), _labelled(progress, site),
                            source=source, every_step=False)

    results = _on_each(agents, deploy_part)
    failed = {site: result for site, result in results.items() if isinstance(result, Exception)}
    if not failed:
        return [(site, result) for site, result in results.items() if isinstance(result, DeployReport)]
    deployed = {site: agents[site] for site in results if site not in failed}
    progress(Progress("rollback", 0, len(deployed), f"destroying the parts of {', '.join(map(site_label, deployed))}"))
    undone = _on_each(deployed, lambda site, agent: agent.destroy(topology.name)) if deployed else {}
    lines = [f"site {site_label(site)}: {error}" for site, error in failed.items()]
    lines += [f"site {site_label(site)}: rolling back failed too: {result}" for site, result in undone.items()
              if isinstance(result, Exception)]
    rolled_back = len(lines) == len(failed)
    raise SitesFailed("\n".join(lines + ["every site's part was rolled back" if rolled_back else
                                         "the sites above keep parts of the lab: run `vtopo cleanup` there"]),
                      rolled_back)


def deployed_topology(lab: str, local: AgentClient) -> Topology | None:
    """The lab as the local site's record keeps it, when the caller may read it; None when there is none."""
    try:
        document = local.deployment(lab).get("topology")
    except AgentError:
        return None
    return io.from_document(document, lab) if document else None


def destroy(topology: Topology, local: AgentClient, progress: ProgressCallback) -> dict[str, int]:
    """Destroy every site's part, whatever fails on the others; the operations undone on each site (0 where its part
    was gone already)."""
    agents = clients(topology, local)

    def destroy_part(site: str, agent: AgentClient) -> int:
        try:
            return agent.destroy(topology.name, _labelled(progress, site))
        except AgentError:
            if site != LOCAL and topology.name not in {entry.lab for entry in agent.labs()}:
                return 0  # that site's part is gone already: `vtopo cleanup` there, say
            raise

    results = _on_each(agents, destroy_part)
    failed = [f"site {site_label(site)}: {result}" for site, result in results.items() if isinstance(result, Exception)]
    if failed:
        raise SitesFailed("\n".join(failed + ["the sites above may keep their parts: run `vtopo cleanup` there once "
                                               "they answer"]))
    return {site: int(result) for site, result in results.items() if isinstance(result, int)}


@dataclass(frozen=True)
class SiteStatus:
    site: str
    labs: list[LabStatus]
    error: str = ""


def status(topology: Topology, local: AgentClient) -> list[SiteStatus]:
    """Each site's view of its part of the lab."""
    results = _on_each(clients(topology, local), lambda site, agent: agent.status(topology.name))
    return [SiteStatus(site, [], str(result)) if isinstance(result, Exception) else SiteStatus(site, result)
            for site, result in results.items()]
