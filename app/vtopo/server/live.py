"""The agent's record of each deployed lab's state, kept up by what it hears, and sent to the clients that follow it.

A lab's record is made when the agent first needs it: from a probe of the host (the agent may have started after the
lab was deployed, or something may have changed while none ran), or, after a deploy of its own, from the plan it has
just applied. From then on the host's events change it (vtopo.host.watch: an interface down or gone, a namespace
gone, a process ended), and so do the agent's own requests (a deploy, a node stopped, a link taken down). A status
is a read of the record; `vtopo status --verify` probes the host again and says where it differs.

Each change goes at once to every client that follows the lab (`vtopo status --watch`, the designer) and may read
it: its owner, and root. Every member hears of the list of running labs, as `vtopo status` shows it to them.
"""
from __future__ import annotations

import os
import selectors
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from vtopo import protocol as p
from vtopo.host.state import LabRecord, StateStore
from vtopo.reports import LabEntry, LabStatus
from vtopo.server.jobs import new_deployer
from vtopo.server.long_lived import thaw

if TYPE_CHECKING:  # a lab's parts (the ops, the compiler) load with the first lab the record holds: root's `vtopo
    # status` with no agent listening runs this in the command's process, and of no lab reads only the directory
    from vtopo.host.heard import Heard
    from vtopo.host.lab_parts import Compiled, LabParts
    from vtopo.host.resolved_labs import ResolvedLabs
    from vtopo.host.watch import Watcher
    from vtopo.server.live_lab import Found, LiveLab

Send = Callable[[p.Message], None]


class Follower:
    """A client following lab `lab`: `reads` says whether it may read a lab deployed by a uid (its own, or root).
    What it is told waits in its outbox until its own thread sends it (`deliver`): a client that does not read stalls
    nobody but itself, and once MAX_WAITING messages wait for it, it is let go."""

    MAX_WAITING = 4096

    def __init__(self, lab: str, reads: Callable[[int], bool]) -> None:
        self.lab = lab
        self.reads = reads
        self._waiting: deque[p.Message] = deque()
        self._guard = threading.Lock()
        self._bell = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
        self._dropped = False

    def send(self, message: p.Message) -> None:
        """From any thread: queue `message` for the client."""
        with self._guard:
            if len(self._waiting) >= self.MAX_WAITING:
                self._dropped = True
            else:
                self._waiting.append(message)
        os.eventfd_write(self._bell, 1)

    def deliver(self, connection: socket.socket, send: Send) -> None:
        """Send what is told, in order, until the client closes its connection (or says anything more, or falls
        MAX_WAITING messages behind)."""
        with selectors.DefaultSelector() as selector:
            selector.register(connection, selectors.EVENT_READ)
            selector.register(self._bell, selectors.EVENT_READ)
            while True:
                with self._guard:
                    waiting, self._waiting = self._waiting, deque()
                    if self._dropped:
                        return
                for message in waiting:
                    send(message)
                if any(key.fileobj is connection for key, _ in selector.select()):
                    return
                try:
                    os.eventfd_read(self._bell)
                except BlockingIOError:
                    continue

    def close(self) -> None:
        """Once it no longer follows its lab (see LiveLabs.followed)."""
        os.close(self._bell)


class LiveLabs:
    """Every deployed lab's record (by name), the watcher that keeps them, and the clients that follow them."""

    def __init__(self, shown: Callable[[LabStatus], LabStatus], doing: Callable[[str], str]) -> None:
        self._shown = shown  # a lab's status as a job under way changes it (vtopo.server.jobs.LabJobs.shown)
        self._doing = doing
        self._guard = threading.RLock()
        self._labs: dict[str, LiveLab] = {}
        self._followers: list[Follower] = []
        self._paused: set[str] = set()  # labs a request is changing: their events wait for its end
        self._renewing: set[str] = set()  # labs watched anew: what is heard meanwhile goes to the record they replace
        self._due: dict[str, Compiled | None] = {}  # labs whose job ended, to be renewed from what it compiled
        self._watcher: Watcher | None = None
        self._resolved: ResolvedLabs | None = None

    def close(self) -> None:
        with self._guard:
            if self._watcher is not None:
                self._watcher.close()
                self._watcher = None
            self._labs.clear()

    # ------------------------------------------------------------ reading

    def statuses(self, lab: str = "") -> list[LabStatus]:
        """Every deployed lab's status (or the one named `lab`'s), from the record, as a job under way shows it."""
        records = [record for record in StateStore().labs() if not lab or _name(record) == lab]
        with self._guard:
            return [self._shown(live.parts.with_details(live.status)) for record in records
                    if (live := self._live(record)) is not None]

    def read_recorded(self) -> None:
        """Read the record of each lab deployed before the agent started, one lab at a time, so that a request
        waits at most for the lab being read, not for all of them."""
        for record in StateStore().labs():
            with self._guard:
                self._live(record)

    def verify(self, lab: str, reads: Callable[[int], bool]) -> tuple[list[LabStatus], list[str]]:
        """The status of every lab (or the one named `lab`) the caller `reads`, as a probe of the host finds it, and
        where the record said otherwise; the record takes what the probe found, unless the lab changed meanwhile.

        Each lab is resolved and probed outside the guard that every status, follower and event of every lab takes:
        probing a lab of hundreds of nodes takes a while, and its owner may ask for it again and again."""
        from vtopo.server.live_lab import LiveLab, probed

        found, differences = [], []
        for record in StateStore().labs():
            try:
                name = _name(record)
                if (lab and name != lab) or not reads(record.owner):  # the name first: an owner is read in the record
                    continue
                stamp, parts = record.stamp(), self._parts_of(record)
            except FileNotFoundError:  # destroyed meanwhile
                continue
            with self._guard:
                recorded = self._labs.get(name)
                heard = recorded.heard if recorded is not None else 0
            probe = probed(parts)
            with self._guard:
                current = self._labs.get(name)
                unchanged = current is recorded and (current is None or current.heard == heard)
                if unchanged and StateStore().named(name) is not None and record.stamp() == stamp:
                    if current is not None and current.parts.holds(record) and current.agrees(probe):
                        live = current  # kept, and its heap frozen: nothing is made to be collected
                    else:
                        thaw()  # the record `recorded` is replaced
                        live = self._labs[name] = self._made(parts, probe=True, found=probe)
                        self._tell_whole(name)
                else:  # changed by a request or an event while probed: the probe is told, and the record kept
                    live = LiveLab(parts, *probe)
            found.append(self._shown(live.parts.with_details(live.status)))
            if recorded is not None:
                differences += _differences(recorded.status, live.status)
        return found, differences

    def _live(self, record: LabRecord, name: str = "") -> LiveLab | None:
        """The lab's record kept up; `name`, the lab's when the caller found `record` by it (else read from it)."""
        name = name or _name(record)
        if name in self._due:  # read before the thread of the job that ended renewed it
            self.renew(name, self._due.pop(name))
        live = self._labs.get(name)
        if live is None or not live.parts.holds(record):
            # none yet, or the lab was deployed, updated or operated by another process (root's own command with
            # no agent listening, or the deployer itself): what the record says now, as the host has it
            thaw()
            try:
                live = self._labs[name] = self._made(self._parts_of(record), probe=True)
            except FileNotFoundError:  # destroyed meanwhile
                return None
        return live

    def _made(self, parts: LabParts, probe: bool, found: Found | None = None) -> LiveLab:
        """A lab's record, watched from now on: its parts as a probe finds (or `found`) them, or as its plan made
        them."""
        from vtopo.server.live_lab import watched

        return watched(parts, self._watching(), probe, found)

    def resolved(self) -> ResolvedLabs:
        """Each lab resolved and lowered, once (vtopo.host.resolved_labs): what the lab's record and the requests on
        the running lab read."""
        from vtopo.host.resolved_labs import ResolvedLabs

        with self._guard:
            if self._resolved is None:
                self._resolved = ResolvedLabs(new_deployer().kinds)
            return self._resolved

    def _parts_of(self, record: LabRecord, compiled: Compiled | None = None) -> LabParts:
        """The lab's plan by part: `compiled`, what the deploy that made the record compiled (and applied whole), or
        the lab resolved."""
        from vtopo.host.lab_parts import LabParts

        resolved = self.resolved()
        if compiled is None:
            return LabParts(record, resolved.kinds, resolved.of(record))
        parts = LabParts(record, resolved.kinds, compiled, applied_whole=True)
        resolved.keep(record, compiled, parts.data)  # the record as read once: a lab of thousands of nodes takes a while
        return parts

    def _read(self, record: LabRecord, compiled: Compiled | None = None) -> LabParts | None:
        """The lab's parts (see `_parts_of`) read by a caller that holds no guard, for `renew`; None if it is gone."""
        try:
            return self._parts_of(record, compiled)
        except FileNotFoundError:  # destroyed meanwhile
            return None

    def _watching(self) -> Watcher:
        from vtopo.host.watch import Watcher

        if self._watcher is None:
            self._watcher = Watcher(self._heard)
        return self._watcher

    # ------------------------------------------------------------ changing

    def _heard(self, lab: str, what: Heard) -> None:
        with self._guard:
            live = self._labs.get(lab)
            if live is None:
                return
            owners = live.hear(what)
            if lab in self._paused or lab in self._renewing or lab in self._due or self._doing(lab):
                # told at the end of what changes it
                return
            if live.unheard:
                self.renew(lab)
                return
            nodes, links = live.recount(owners)
            if nodes or links:
                self._tell(lab, p.PartsChanged(lab, live.status.state, nodes, links))

    @contextmanager
    def changing(self, lab: str) -> Iterator[None]:
        """While a request changes a lab (a node stopped, a link taken down), its events wait; afterwards its record
        reads what the request wrote and watches the processes it started. The lab's parts are read again outside
        the guard that every status, follower and event of every lab takes (a lab of hundreds of nodes takes a
        while), and not at all when the request wrote nothing (an explain) and nothing was heard of the lab meanwhile.
        """
        with self._guard:
            self._paused.add(lab)
            self._refresh(lab)
            before = self._labs.get(lab)
            heard = before.heard if before is not None else 0
        try:
            yield
        finally:
            record = StateStore().named(lab)
            parts = None if before is None or record is None or before.parts.holds(record) else self._read(record)
            with self._guard:
                self._paused.discard(lab)
                untouched = (before is not None and self._labs.get(lab) is before and before.heard == heard
                             and not before.unheard and record is not None and before.parts.holds(record))
                if not untouched:
                    self.renew(lab, parts=parts)

    def _refresh(self, lab: str) -> None:
        """Before the agent changes a lab: read first what another process did to it since (destroyed it, deployed
        it again, operated it), which the change then keeps. A lab with no record yet gets none: nothing is kept."""
        record = StateStore().named(lab)
        if record is not None:
            if self._kept(lab):
                self._live(record, lab)
        elif self._labs.pop(lab, None) is not None and self._watcher is not None:
            self._watcher.forget(lab)

    def _kept(self, lab: str) -> bool:
        """Whether the agent keeps a record of `lab` now: it has read it, or a client follows it. A lab that nobody
        read since the agent started (root's own command with no agent listening: a destroy, a link taken down) is
        read, with a probe, when it first is, not before and after each change."""
        return lab in self._labs or any(follower.lab == lab for follower in self._followers)

    def renew(self, lab: str, compiled: Compiled | None = None, parts: LabParts | None = None) -> None:
        """Read a lab's record again after the agent changed it (deployed, updated, destroyed, operated) or began or
        ended a job on it, and tell its followers; `compiled` is what a deploy that made the record compiled, `parts`
        the lab's parts the caller read from the record, taken if the record is still as it was read."""
        with self._guard:
            record = StateStore().named(lab)
            before = self._labs.get(lab)
            thaw()  # the record `before` is dropped or replaced
            if record is None:
                self._labs.pop(lab, None)
                if self._watcher is not None:
                    self._watcher.forget(lab)
                if before is not None:
                    self.resolved().forget(before.parts.record)
            elif compiled is not None or self._kept(lab):  # one nobody read waits for its first read, unless a deploy
                # made it: its plan says what it is, with no probe
                probe = before is not None and before.unheard
                self._renewing.add(lab)
                try:  # the events the watcher had not read yet are heard by `before`, and kept from it
                    if parts is None or not parts.holds(record):
                        parts = self._parts_of(record, compiled)
                    live = self._labs[lab] = self._made(parts, probe)
                finally:
                    self._renewing.discard(lab)
                if before is not None and not probe:
                    live.keep_heard(before)
                    live.unheard = before.unheard  # missed while watched anew: the next event probes
            self._tell_whole(lab)

    def job_changed(self, lab: str, ended: bool, compiled: Compiled | None = None,
                    answer: Callable[[], None] | None = None) -> None:
        """A deploy or destroy of `lab` began or `ended` (a deploy having compiled it as `compiled`): every follower
        hears of the list of labs, and the lab's of its state. At its end, `answer` tells the job's client first: the
        lab's record is rebuilt after, and whoever reads it meanwhile waits for that (see `_live`)."""
        if ended and answer is not None:
            with self._guard:
                self._due[lab] = compiled
            answer()
        record = StateStore().named(lab) if ended and (compiled is not None or self._kept(lab)) else None
        parts = self._read(record, compiled) if record is not None else None  # outside the guard, as `changing`
        with self._guard:
            if ended:
                self._tell_labs()  # first: a follower told the lab's state finds the lab listed
                if lab in self._due or answer is None:
                    self.renew(lab, self._due.pop(lab, compiled), parts)
            else:
                self._refresh(lab)
                if lab in self._labs:
                    self._tell_whole(lab)
                self._tell_labs()

    # ------------------------------------------------------------ followers

    @contextmanager
    def followed(self, follower: Follower) -> Iterator[None]:
        """Send the follower the running labs and its lab's state, then each change, while the block runs."""
        with self._guard:
            follower.send(p.LabsListed(self._entries()))
            record = StateStore().named(follower.lab)
            live = self._live(record, follower.lab) if record is not None else None
            follower.send(p.LabState(self._shown(live.parts.with_details(live.status)) if live is not None and
                                     follower.reads(live.status.owner) else None))
            self._followers.append(follower)
        try:
            yield
        finally:
            with self._guard:
                self._followers.remove(follower)

    def _entries(self) -> list[LabEntry]:
        return [replace(entry, doing=self._doing(entry.lab)) for entry in new_deployer().labs()]

    def _tell_labs(self) -> None:
        if not self._followers:  # the list reads every lab's record
            return
        listed = p.LabsListed(self._entries())
        for follower in self._followers:
            follower.send(listed)

    def _tell_whole(self, lab: str) -> None:
        if not any(follower.lab == lab for follower in self._followers):  # a lab's whole status takes a while
            return
        live = self._labs.get(lab)
        status = self._shown(live.parts.with_details(live.status)) if live is not None else None
        self._tell(lab, p.LabState(status), status is None)

    def _tell(self, lab: str, message: p.Message, anyone: bool = False) -> None:
        """`message` to the followers of `lab` who may read it (`anyone`: who follow it, it says nothing of it)."""
        live = self._labs.get(lab)
        for follower in self._followers:
            if follower.lab == lab and (anyone or (live is not None and follower.reads(live.status.owner))):
                follower.send(message)


def _name(record: LabRecord) -> str:
    try:
        return record.name
    except FileNotFoundError:
        return ""


def _differences(recorded: LabStatus, found: LabStatus) -> list[str]:
    """Where the record and the host differ, one line per node or link."""
    lines = []
    for kind, before, after in (("node", recorded.nodes, found.nodes), ("link", recorded.links, found.links)):
        was = {part.name: part for part in before}
        for part in after:
            old = was.get(part.name)
            if old is not None and (old.state, old.detail) != (part.state, part.detail):
                lines.append(f"lab {found.lab}: {kind} {part.name}: the record said {old.state}{old.detail}; the host "
                             f"has it {part.state}{part.detail}")
    return lines

