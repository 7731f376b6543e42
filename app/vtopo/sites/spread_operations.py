"""Operating a running lab spread over sites, each part through the agent of the site it runs on: a node there,
a link there, both sites of a link between two (each cuts or shapes its own end of the tunnel), every site's running
state to save, and every site's link rates. A lab on this machine alone is the local agent's, as before.

The sites are learnt from the lab's record on this machine (vtopo.sites.spread.deployed_topology), so a lab file
cannot name a machine to operate on that its deploy was not allowed to reach.
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar

from vtopo import protocol as p
from vtopo.client.agent_client import AgentClient, Stream
from vtopo.model import io
from vtopo.model.placement import site_of, spread_over_sites
from vtopo.model.sites import LOCAL
from vtopo.model.topology import Link, Topology
from vtopo.reports import LinkRate, ProgressCallback
from vtopo.sites.spread import FAILURES, SitesFailed, clients, deployed_topology, site_label

if TYPE_CHECKING:  # the designer operates through this module: the host side of saving loads only when it saves
    from vtopo.saving import RunningState

A = TypeVar("A")
T = TypeVar("T")


class SitesOperator(AgentClient):
    """The client's verbs (vtopo.client.agent_client.AgentClient's own, none written again) on a lab that may run on
    several sites: a change to its nodes or links (a `PartRequest`) is done by the agent of every site it concerns,
    and its running state and link rates are read from every site. Any other request is this machine's agent's
    (`local`)."""

    def __init__(self, local: AgentClient | None = None) -> None:
        self.local = local or AgentClient()
        super().__init__(self.local.path)

    def ask(self, request: p.Request[A], progress: ProgressCallback | None = None, fds: Sequence[int] = ()) -> A:
        if not isinstance(request, p.PartRequest):
            return self.local.ask(request, progress, fds)
        said = self._on_sites_of(request.lab, request.parts, lambda agent: agent.ask(request, progress, fds).said)
        return request.answer(said)

    def read_running(self, lab: str) -> RunningState:
        """Every site's nodes' running state (each site's agent reads its own, and its record keeps it), written
        into the lab as this machine's record has it."""
        from vtopo.saving import RunningState, apply_state

        running = self.local.read_running(lab)
        topology = self._spread(lab)
        if topology is None:
            return running
        states = dict(running.states)
        for site, agent in clients(topology, self.local).items():
            if site != LOCAL:
                states |= self._at(site, lambda: agent.read_running(lab)).states
        whole = io.from_document(running.document, lab)
        apply_state(whole, states)
        return RunningState(states, io.to_document(whole), running.source, running.stopped, running.down)

    def explain_save(self, lab: str) -> str:
        """What reading every site's running state runs, each site's script after a line naming it."""
        topology = self._spread(lab)
        if topology is None:
            return self.local.explain_save(lab)
        return "".join(f"# [{site_label(site)}]\n{self._at(site, lambda: agent.explain_save(lab))}"
                       for site, agent in clients(topology, self.local).items())

    def link_rates(self, lab: str, every_s: float = 1.0) -> Stream[dict[str, LinkRate]]:
        """The links' rates as they change, each as read by the site of its ends (see SpreadRates), until `close`;
        what fails on any site ends them."""
        topology = self._spread(lab)
        if topology is None:
            return self.local.link_rates(lab, every_s)
        return SpreadRates(topology, {site: agent.link_rates(lab, every_s)
                                      for site, agent in clients(topology, self.local).items()})

    def _spread(self, lab: str) -> Topology | None:
        """The lab as deployed, when it places nodes on other sites than this machine."""
        topology = deployed_topology(lab, self.local)
        return topology if topology is not None and spread_over_sites(topology) else None

    def _on_sites_of(self, lab: str, nodes: list[str], work: Callable[[AgentClient], str]) -> str:
        """`work` by the agent of each site the nodes (names, or NODE:PORT) run on, in turn: what each said, a line
        labelled with its site when there are two. SitesFailed says what failed where, and what the other did."""
        topology = self._spread(lab)
        if topology is None:
            return work(self.local)
        named = [topology.node_named(name.partition(":")[0]) for name in nodes]
        sites = list(dict.fromkeys(site_of(topology, node) if node else LOCAL for node in named))
        agents = clients(topology, self.local)
        if len(sites) == 1:
            return self._at(sites[0], lambda: work(agents[sites[0]]))
        said: list[str] = []
        for site in sites:
            try:
                said.append(f"[{site_label(site)}] {work(agents[site])}")
            except FAILURES as error:
                raise SitesFailed("\n".join([*said, f"[{site_label(site)}] failed: {error}"])) from None
        return "\n".join(said)

    @staticmethod
    def _at(site: str, work: Callable[[], T]) -> T:
        """`work` on one site; what fails there names the site."""
        try:
            return work()
        except FAILURES as error:
            if site == LOCAL:
                raise
            raise SitesFailed(f"site {site_label(site)}: {error}") from None


def reader_of(topology: Topology, link: Link) -> str:
    """The site whose counters give a link's rate: its ends' site; this machine for a link between this machine and
    another site; its first end's for a link between two other sites."""
    sites = [site_of(topology, topology.nodes[end.node]) for end in (link.a, link.b)]
    return LOCAL if LOCAL in sites else sites[0]


class SpreadRates:
    """The link rates of a lab spread over sites, merged as each site's agent sends them (one thread per site): a
    link's from the site that reads it (`reader_of`), until `close`; what fails on a site ends them, naming it."""

    def __init__(self, topology: Topology, streams: dict[str, Stream[dict[str, LinkRate]]]) -> None:
        self._readers = {link.id: reader_of(topology, link) for link in topology.links.values()}
        self._streams = streams
        self._told: queue.SimpleQueue[tuple[str, dict[str, LinkRate]] | Exception | None] = queue.SimpleQueue()
        for site, stream in streams.items():
            threading.Thread(target=self._follow, args=(site, stream), name=f"link rates of site {site_label(site)}",
                             daemon=True).start()

    def _follow(self, site: str, stream: Stream[dict[str, LinkRate]]) -> None:
        try:
            for changes in stream:
                self._told.put((site, changes))
        except FAILURES as error:
            self._told.put(error if site == LOCAL else SitesFailed(f"site {site_label(site)}: {error}"))
        self._told.put(None)

    def __iter__(self) -> Iterator[dict[str, LinkRate]]:
        """Until every site's stream ended, or one failed."""
        running = len(self._streams)
        try:
            while running:
                told = self._told.get()
                if told is None:
                    running -= 1
                elif isinstance(told, Exception):
                    raise told
                elif changes := {link: rate for link, rate in told[1].items() if self._readers.get(link) == told[0]}:
                    yield changes
        finally:
            self.close()

    def close(self) -> None:
        for stream in self._streams.values():
            stream.close()
