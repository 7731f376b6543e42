"""The designer's Deployer (gui.host_api.Deployer) through the agent, for labs on this machine and labs spread over
sites alike: a spread lab is deployed and destroyed on every site at once (vtopo.sites.spread, all or nothing), and its
state is each site's own part of it, as if it ran here: followed through every site's agent, which tells of each change
to its part (vtopo.sites.spread_following). What a lab on this machine alone asks, and every other verb (cancel,
labs), is the agent's client's own (SitesOperator is one). The host layer loads with this module, when Deploy is first
needed."""
from __future__ import annotations

import time

from vtopo.lab_terms import Trust
from vtopo.model import io
from vtopo.model.placement import spread_over_sites
from vtopo.model.sites import LOCAL
from vtopo.model.topology import Topology
from vtopo.reports import DeployReport, LabStatus, ProgressCallback
from vtopo.sites import spread
from vtopo.sites.spread import site_label
from vtopo.sites.spread_following import SpreadFollowing
from vtopo.sites.spread_operations import SitesOperator


class SitesDeployer(SitesOperator):
    """The agent's client as the designer's Deployer, which hands a lab spread over sites (as drawn, or as it runs) to
    vtopo.sites.spread."""

    def update(self, topology: Topology, progress: ProgressCallback, consent: Trust = Trust()) -> DeployReport:
        """Deploy the lab, or bring its running copy in line with it (`vtopo deploy --update`)."""
        running = spread.deployed_topology(topology.name, self.local)
        if not spread_over_sites(topology) and (running is None or not spread_over_sites(running)):
            return self.deploy(io.dumps(topology), consent, progress, update=True)
        if running is not None and spread.same_deploy(running, topology):
            return DeployReport(topology.name, "", len(topology.nodes), len(topology.links), 0, 0.0,
                                ["the running lab already matches; nothing to apply"])
        started = time.monotonic()
        updated = spread.update(running, topology, consent, self.local, progress)
        reports = updated.parts
        return DeployReport(topology.name, reports[0][1].prefix, len(topology.nodes), len(topology.links),
                            sum(report.ops for _site, report in reports) + sum(updated.dropped.values()),
                            time.monotonic() - started,
                            [f"[{site_label(site)}] {notice}" for site, report in reports for notice in report.notices]
                            + [f"site {site_label(site)}: {report.ops} operations in {report.seconds:.1f} s"
                               for site, report in reports]
                            + [f"site {site_label(site)}: its part was destroyed ({count} operations): the lab no "
                               "longer uses it" for site, count in updated.dropped.items()])

    def destroy(self, lab: str, progress: ProgressCallback | None = None, every_step: bool = True) -> int:
        topology = spread.deployed_topology(lab, self.local)
        if topology is None or not spread_over_sites(topology):
            return super().destroy(lab, progress, every_step)
        return sum(spread.destroy(topology, self.local, progress or (lambda _: None)).values())

    def follow(self, lab: str) -> SpreadFollowing:
        return SpreadFollowing(self.local, lab)

    def status(self, lab: str | None = None) -> list[LabStatus]:
        return [self._with_other_sites(summary) for summary in super().status(lab)]

    def _with_other_sites(self, summary: LabStatus) -> LabStatus:
        if not summary.document:  # another user's lab, shown without it
            return summary
        topology = io.from_document(summary.document, summary.lab)
        if not spread_over_sites(topology):
            return summary
        others = [site for site in spread.status(topology, self.local) if site.site != LOCAL]
        return spread.merged(topology, summary, others)
