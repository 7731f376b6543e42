"""Following a lab spread over sites: this machine's agent tells of the lab, and each other site's agent, followed over
that site's ssh channel, of its own part; the follower hears one lab, merged as `vtopo.sites.spread.merged` shows it.

Nothing polls: each site's agent sends what its kernel, processes and libvirt tell it, and its ssh connection carries
it here as it comes. The sites are learnt from this machine's record of the lab (the document of its state), so a
follower reaches only the sites its deploy was allowed to, each as the ssh user the lab names there, whose agent lets
them follow only their own labs. A site that cannot be reached, or whose connection ends, is said once, in the lab's
state and its parts' (as `vtopo status` says it), and followed again, silently, every RETRY_S seconds until it
answers. Closing the following closes every site's.
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Iterator

from vtopo import protocol as p
from vtopo.client.agent_client import AgentClient, Stream
from vtopo.model import io
from vtopo.model.placement import spread_over_sites
from vtopo.model.sites import LOCAL
from vtopo.model.topology import Topology
from vtopo.reports import LabStatus, PartState
from vtopo.sites.spread import FAILURES, SiteStatus, clients, merged

RETRY_S = 5.0
"""How long after a site stopped answering it is followed again."""

Told = tuple["_SiteFollower", p.Message | Exception | None]
"""(the follower that told it, a message, what failed there, or None once its following ended)"""


class SpreadFollowing:
    """The lab as this machine's agent and each other site's tell of it: a LabsListed and a LabState at once, then
    each LabsListed (this machine's), LabState or PartsChanged, as vtopo.client.agent_client.Following gives them, for
    the lab as a whole. A lab on this machine alone is this machine's agent's messages as they come."""

    def __init__(self, local: AgentClient, lab: str) -> None:
        self._local_client = local
        self._lab = lab
        self._told: queue.SimpleQueue[Told] = queue.SimpleQueue()
        self._guard = threading.Lock()
        self._closed = False
        self._local = _SiteFollower(LOCAL, local, lab, self._told)
        self._sites: dict[str, _SiteFollower] = {}  # each other site's follower, the one it is told by
        self._retries: dict[str, threading.Timer] = {}

    def __iter__(self) -> Iterator[p.Message]:
        """Until this machine's agent ends the following, or `close`; AgentError when it refuses, AgentUnavailable
        when there is none."""
        topology: Topology | None = None
        here: LabStatus | None = None  # this machine's agent's status of the lab
        parts: dict[str, SiteStatus] = {}  # each other site's, once it told it (or failed)
        shown: LabStatus | None = None
        try:
            while True:
                follower, told = self._told.get()
                if follower is self._local:
                    if told is None:
                        return
                    if isinstance(told, Exception):
                        raise told
                    if isinstance(told, p.LabsListed):
                        yield told
                        continue
                    if isinstance(told, p.LabState):
                        here, topology = told.status, _spread(told.status)
                        self._follow_sites(topology)
                        parts = {site: part for site, part in parts.items() if site in self._sites}
                        shown = _merged(topology, here, parts)
                        yield p.LabState(shown)
                        continue
                    if isinstance(told, p.PartsChanged) and here is not None:
                        here = here.changed(told.state, told.nodes, told.links)
                elif follower is self._sites.get(follower.name):
                    if (part := self._heard_from(follower, told, parts.get(follower.name))) is None:
                        continue
                    parts[follower.name] = part
                if shown is not None and here is not None:
                    now = _merged(topology, here, parts)
                    if changes := _changes(shown, now):
                        yield changes
                    shown = now
        finally:
            self.close()

    def _follow_sites(self, topology: Topology | None) -> None:
        """Follow every other site the lab runs on, as this machine's record reaches it (none when the lab runs here
        alone), and no other."""
        agents = {site: agent for site, agent in clients(topology, self._local_client).items() if site != LOCAL} \
            if topology is not None else {}
        with self._guard:
            for site in [site for site, follower in self._sites.items()
                         if site not in agents or follower.site != agents[site].path]:
                self._sites.pop(site).close()
                if (timer := self._retries.pop(site, None)) is not None:
                    timer.cancel()
            for site, agent in agents.items():
                if site not in self._sites and not self._closed:
                    self._sites[site] = _SiteFollower(site, agent, self._lab, self._told)

    def _heard_from(self, follower: _SiteFollower, told: p.Message | Exception | None,
                    before: SiteStatus | None) -> SiteStatus | None:
        """Another site's part of the lab after what its agent told (or failed to), None while it has told nothing of
        it: a site whose following ended is followed again after RETRY_S, and said to be unreachable once (not again
        at each retry that fails)."""
        site = follower.name
        if isinstance(told, p.LabState):
            return SiteStatus(site, [told.status] if told.status is not None else [])
        if isinstance(told, p.PartsChanged):
            if before is None or not before.labs:
                return before
            return SiteStatus(site, [before.labs[0].changed(told.state, told.nodes, told.links)])
        if isinstance(told, p.Message):  # the list of that site's labs: this machine's is the one told
            return before
        if told is None:
            self._retry(follower)
        if before is not None and before.error:
            return before
        return SiteStatus(site, [], str(told) if told is not None else "its agent closed the connection")

    def _retry(self, ended: _SiteFollower) -> None:
        def again() -> None:
            with self._guard:
                self._retries.pop(ended.name, None)
                if not self._closed and self._sites.get(ended.name) is ended:
                    self._sites[ended.name] = _SiteFollower(ended.name, AgentClient(ended.site), self._lab,
                                                            self._told)

        with self._guard:
            if self._closed or self._sites.get(ended.name) is not ended:
                return
            timer = self._retries[ended.name] = threading.Timer(RETRY_S, again)
            timer.daemon = True
            timer.start()

    def close(self) -> None:
        """From any thread: stop following the lab here and on every site."""
        with self._guard:
            self._closed = True
            for timer in self._retries.values():
                timer.cancel()
            self._retries.clear()
            followers = [self._local, *self._sites.values()]
            self._sites.clear()
        for follower in followers:
            follower.close()


class _SiteFollower:
    """One site's agent followed on a thread of its own, which puts each message in `told` (then None, once the
    following ended); `close` from any thread, even before the agent was reached."""

    def __init__(self, name: str, agent: AgentClient, lab: str, told: queue.SimpleQueue[Told]) -> None:
        self.name = name
        self.site = agent.path
        self._guard = threading.Lock()
        self._following: Stream[p.Message] | None = None
        self._closed = False
        threading.Thread(target=self._relay, args=(agent, lab, told), name=f"following lab {lab} on site "
                         f"{name or 'local'}", daemon=True).start()

    def _relay(self, agent: AgentClient, lab: str, told: queue.SimpleQueue[Told]) -> None:
        try:
            following = agent.follow(lab)
            with self._guard:
                self._following = following
                closed = self._closed
            if closed:
                following.close()
            for message in following:
                told.put((self, message))
        except FAILURES as error:
            told.put((self, error))
        told.put((self, None))

    def close(self) -> None:
        with self._guard:
            self._closed = True
            following = self._following
        if following is not None:
            following.close()


def _spread(status: LabStatus | None) -> Topology | None:
    """The lab as this machine's record has it, when it places nodes on other sites."""
    if status is None or not status.document:  # none, or another user's (shown without it)
        return None
    topology = io.from_document(status.document, status.lab)
    return topology if spread_over_sites(topology) else None


def _merged(topology: Topology | None, here: LabStatus | None, parts: dict[str, SiteStatus]) -> LabStatus | None:
    if topology is None or here is None:
        return here
    return merged(topology, here, list(parts.values()))


def _changes(shown: LabStatus | None, now: LabStatus | None) -> p.Message | None:
    """What changed from `shown` to `now`: the parts whose state or detail differ, or the whole lab when it came or
    went."""
    if shown is None or now is None:
        return p.LabState(now) if shown is not now else None
    nodes, links = _differing(shown.nodes, now.nodes), _differing(shown.links, now.links)
    return p.PartsChanged(now.lab, now.state, nodes, links) if nodes or links or now.state != shown.state else None


def _differing(before: list[PartState], after: list[PartState]) -> list[PartState]:
    was = {part.name: part for part in before}
    return [part for part in after if was.get(part.name) != part]
