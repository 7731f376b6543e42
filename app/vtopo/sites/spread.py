"""Deploy, update, destroy and ask the status of a lab spread over sites, each part through the owning site's agent.

A deploy is all or nothing: the sites deploy their parts at once, and when one fails, every site that deployed its
part destroys it again (the failed one has rolled its own back). An update is too: the sites the edited lab uses
update their parts at once (each applies only what its part gains and loses), and when one fails, every site is put
back as it ran. The local site always deploys its part, if empty: its record keeps the lab's document, from which
destroy and status learn the sites again.
"""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TypeVar

from vtopo.client.agent_client import AgentClient, AgentError, AgentRefused, AgentUnavailable
from vtopo.lab_terms import Trust
from vtopo.model import io
from vtopo.model.placement import site_of, sites_used
from vtopo.model.sites import LOCAL, DEFAULT_VNIS, Site
from vtopo.model.expectations import Experiment
from vtopo.model.topology import Position, Topology
from vtopo.reports import DeployReport, LabStatus, PartState, Progress, ProgressCallback
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


def not_allowed(topology: Topology, allowed: frozenset[str], allow: str = "with --allow-site {name}",
                running: Topology | None = None) -> list[str]:
    """The sites the lab's file names that the user has not allowed vtopo to connect to, each with what it would use
    and how to allow it (`allow`, where {name} is the site's). A site the `running` lab is spread over, reached as the
    edit reaches it, was allowed when the lab was deployed; one the edit reaches otherwise is refused."""
    ran = {name: connection_of(running.sites[name]) for name in sites_used(running)[1:]} if running else {}
    refused = [f"site {name}: lab {topology.name} runs there through {ran[name]}, which the edit changes to "
               f"{connection_of(topology.sites[name])}; destroy the lab and deploy it again"
               for name in sites_used(topology)[1:] if name in ran and name not in reached_as_before(running, topology)]
    return refused + [f"site {name}: the lab would have vtopo connect to {connection_of(topology.sites[name])}; "
                      f"allow it {allow.format(name=name)}" for name in sites_used(topology)[1:]
                      if name not in allowed and name not in ran]


def reached_as_before(running: Topology | None, edited: Topology) -> set[str]:
    """The sites of the edited lab that the running lab is spread over and reaches as the edit does: the user allowed
    them when it was deployed."""
    if running is None:
        return set()
    return {name for name in sites_used(running)[1:] if name in edited.sites
            and connection_of(edited.sites[name]) == connection_of(running.sites[name])}


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


@dataclass(frozen=True)
class Updated:
    parts: list[tuple[str, DeployReport]]  # the update of each site the edited lab uses (a deploy, on a new one)
    dropped: dict[str, int]  # the sites the edited lab no longer uses: the operations undone on each


def update(running: Topology | None, edited: Topology, consent: Trust, local: AgentClient,
           progress: ProgressCallback, source: str = "") -> Updated:
    """Bring the `running` lab (None: it is not deployed) in line with the `edited` one: every site the edited lab
    uses updates its part at once, through its own agent, and applies only what its part gains and loses (a site it
    newly uses deploys its part); then every site it no longer uses destroys its part. When one site fails, every
    site is put back as it ran, and SitesFailed says which sites changed and which did not."""
    if running is None:
        return Updated(deploy(edited, consent, local, progress, source), {})
    vnis = tunnel_vnis()
    agents, before = clients(edited, local), clients(running, local)

    def update_to(lab: Topology) -> Callable[[str, AgentClient], DeployReport]:
        document = io.dumps(lab)
        return lambda site, agent: agent.deploy(document, replace(consent, site=site, tunnel_vnis=vnis),
                                                _labelled(progress, site), update=True, source=source,
                                                every_step=False)

    results = _on_each(agents, update_to(edited))
    failed = {site: result for site, result in results.items() if isinstance(result, Exception)}
    if failed:
        # every site that updated, and every failed one that ran a part (which it may have lost), goes back
        touched = {site: agent for site, agent in agents.items() if site not in failed or site in before}
        progress(Progress("rollback", 0, len(touched), f"putting back {', '.join(map(site_label, touched))}"))

        def put_back(site: str, agent: AgentClient) -> DeployReport | int:
            return update_to(running)(site, agent) if site in before else agent.destroy(edited.name)

        undone = _on_each(touched, put_back)  # the local site's at least: it keeps the record
        raise SitesFailed(_update_failed(results, undone, set(before)),
                          not any(isinstance(result, Exception) for result in undone.values()))
    parts = [(site, result) for site, result in results.items() if isinstance(result, DeployReport)]
    dropped = {site: agent for site, agent in before.items() if site not in agents}
    gone = _on_each(dropped, _destroy_part(running.name, progress)) if dropped else {}
    if kept := [f"site {site_label(site)}: {result}" for site, result in gone.items() if isinstance(result, Exception)]:
        raise SitesFailed("\n".join(kept + [f"every other site runs the edited lab; the sites above keep the part the "
                                             "edit took away from them: run `vtopo cleanup` there once they answer"]))
    return Updated(parts, _counts(gone))


def _update_failed(results: dict[str, DeployReport | Exception], undone: dict[str, DeployReport | int | Exception],
                   ran: set[str]) -> str:
    """What a failed update did on each site: why it failed, whether the site's part changed and is back as it ran
    (`ran`: the sites the lab ran on)."""
    lines = []
    for site, result in results.items():
        said = f"site {site_label(site)}: "
        back = undone.get(site)
        if isinstance(back, Exception):
            lines.append(f"{said}{result if isinstance(result, Exception) else 'updated'}; putting its part back "
                         f"as it ran failed too, so it may run part of the edited lab: {back}")
        elif isinstance(result, Exception):
            lines.append(f"{said}{result}" + ("; its part runs as it did" if back is not None else ""))
        else:
            lines.append(said + ("unchanged" if result.ops == 0 else "updated, then put back as it ran" if site in ran
                                 else "deployed its new part, then destroyed it again"))
    lines += [f"site {site_label(site)}: unchanged (the edit would take its part away)" for site in sorted(ran)
              if site not in results]
    if any(isinstance(back, Exception) for back in undone.values()):
        return "\n".join(lines + ["run `vtopo deploy --update` again once the sites above answer, or destroy the lab"])
    return "\n".join(lines + ["every site runs its part as it did before the update"])


def deployed_topology(lab: str, local: AgentClient) -> Topology | None:
    """The lab as the local site's record keeps it, when the caller may read it; None when there is none. Read from
    the record alone (its sites, its nodes' places), not from the lab's status."""
    try:
        return io.from_document(local.deployment(lab)["topology"], lab)
    except AgentError:
        return None


def destroy(topology: Topology, local: AgentClient, progress: ProgressCallback) -> dict[str, int]:
    """Destroy every site's part, whatever fails on the others; the operations undone on each site (0 where its part
    was gone already)."""
    results = _on_each(clients(topology, local), _destroy_part(topology.name, progress))
    failed = [f"site {site_label(site)}: {result}" for site, result in results.items() if isinstance(result, Exception)]
    if failed:
        raise SitesFailed("\n".join(failed + ["the sites above may keep their parts: run `vtopo cleanup` there once "
                                               "they answer"]))
    return _counts(results)


def _destroy_part(lab: str, progress: ProgressCallback) -> Callable[[str, AgentClient], int]:
    def destroy_part(site: str, agent: AgentClient) -> int:
        try:
            return agent.destroy(lab, _labelled(progress, site))
        except AgentError:
            if site != LOCAL and lab not in {entry.lab for entry in agent.labs()}:
                return 0  # that site's part is gone already: `vtopo cleanup` there, say
            raise
    return destroy_part


def _counts(results: dict[str, int | Exception]) -> dict[str, int]:
    return {site: result for site, result in results.items() if isinstance(result, int)}


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


def merged(topology: Topology, local: LabStatus, others: list[SiteStatus]) -> LabStatus:
    """The lab's state as every site has its own part: a node's state is its site's, a link's the worse of its two
    ends' sites'; a site that cannot be reached, or has lost its part, is named in the lab's state and its parts'."""
    by_site = {site.site: site for site in others}

    def state(here: PartState, sites: list[str], node: bool) -> PartState:
        seen = [here if site == LOCAL else _part_on(by_site[site], here.name, node)
                for site in dict.fromkeys(sites) if site == LOCAL or site in by_site]
        return next((part for part in seen if part.state != "running"), here)

    ends = {topology.describe_link(link): [site_of(topology, topology.nodes[end.node]) for end in link.ends]
            for link in topology.links.values()}
    nodes = [state(part, [site_of(topology, node) if (node := topology.node_named(part.name)) else LOCAL], True)
             for part in local.nodes]
    links = [state(part, ends.get(part.name, [LOCAL]), False) for part in local.links]
    troubles = [f"site {site.site}: {site.error or (site.labs[0].state if site.labs else 'its part is not deployed')}"
                for site in others if site.error or not site.labs or not site.labs[0].up]
    lab_state = local.state if not local.up or not troubles else "; ".join(troubles)
    return LabStatus(local.lab, local.prefix, local.source, local.owner, lab_state, nodes, links, local.document)


def _part_on(site: SiteStatus, name: str, node: bool) -> PartState:
    """A node's or a link's state as another site has its part of it."""
    if site.error:
        return PartState(name, "unreachable", f"; site {site.site} cannot be reached: {site.error}")
    if not site.labs:
        return PartState(name, "degraded", f"; site {site.site} has no part of the lab")
    parts = site.labs[0].nodes if node else site.labs[0].links
    return next((part for part in parts if part.name == name), PartState(name, "running"))
