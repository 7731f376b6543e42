"""What the host layer reports: a long job's progress (deploy, destroy, cleanup), what a deploy did, and the state
of a deployed lab's nodes and links.

The host layer makes these, the agent carries them over its socket unchanged, and the CLI and the designer show
them: so they live below all three, free of Qt and of the host layer.
"""
from __future__ import annotations

import pwd
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple


OUTPUT_STAGE = "output"
"""The progress stage of what a startup command printed: shown whole, however little of the rest is."""


@dataclass(frozen=True)
class Progress:
    stage: str  # "preflight", "apply", "output" (what a startup command printed), "rollback", "destroy", "cleanup"
    done: int
    total: int
    message: str
    owner: str = "lab"


ProgressCallback = Callable[[Progress], None]


def counted(number: int, noun: str) -> str:
    """"1 link", "2 links": a count and its noun (one whose plural takes an s), as English says it."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def user_name(uid: int) -> str:
    """How a report names the user `uid` (a lab's owner): their login, or the number when it has none."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


@dataclass
class DeployReport:
    lab: str
    prefix: str
    nodes: int
    links: int
    ops: int
    seconds: float
    notices: list[str] = field(default_factory=list)


@dataclass
class PartState:
    """A node or a link of a deployed lab, compared with the plan."""

    name: str
    state: str  # "running", "degraded" (something it made is gone), "incomplete" (not all of it was applied),
    # "stopped" (a node the user stopped), "down" (a link the user took down)
    detail: str = ""


@dataclass
class LabStatus:
    """A deployed lab, each of its nodes and links compared with its plan: what `vtopo status` and the designer show.
    The host layer makes it; the agent shows another member's lab without its prefix, source and document."""

    lab: str
    prefix: str
    source: str  # the file it was deployed from
    owner: int  # the uid that deployed it
    state: str  # "running", "degraded", "incomplete (deploy was interrupted at op k of n)"; while the agent deploys
    # or destroys it, "deploying" or "destroying"
    nodes: list[PartState]
    links: list[PartState]
    document: dict[str, Any]  # the lab as deployed, to compare with an edited one

    @property
    def up(self) -> bool:
        return self.state == "running"

    def changed(self, state: str, nodes: list[PartState], links: list[PartState]) -> LabStatus:
        """The lab after a change the agent sent: its new state, and the nodes and links whose state changed."""
        new_nodes, new_links = {part.name: part for part in nodes}, {part.name: part for part in links}
        return replace(self, state=state, nodes=[new_nodes.get(part.name, part) for part in self.nodes],
                       links=[new_links.get(part.name, part) for part in self.links])


@dataclass
class LabEntry:
    """A deployed lab as the list of running labs shows it, to every user."""

    lab: str
    owner: int  # the uid that deployed it
    doing: str = ""  # "deploying" or "destroying" while the agent does so; "" otherwise


LinkTotals = dict[str, tuple[int, int]]
"""link id -> the octets and packets its interface counters have seen, both directions added"""


class LinkRate(NamedTuple):
    """A link's traffic, both directions added. A tuple: the agent makes thousands a second while a lab's links all
    carry a little, and sends each distinct one once, as [bits/s, packets/s] (vtopo.protocol.LinkRatesChanged)."""

    bits_per_second: float
    packets_per_second: float


STILL = LinkRate(0.0, 0.0)
"""The rate of a link that carried nothing since the previous reading."""


class RateMeter:
    """Each link's rate between one reading of the counters and the next, told when it changes: the second reading
    gives every link's rate, and each next one only the rates that differ from the ones told last (a link whose
    counters stopped moving: now 0). A reading where no rate changed gives nothing. Rates are rounded to a bit and a
    tenth of a packet a second: a finer figure would only be longer to send."""

    def __init__(self) -> None:
        self._last: LinkTotals = {}
        self._last_at = 0.0
        self._told: dict[str, LinkRate] = {}  # the links whose last rate told was not 0, with that rate
        self._first = True

    def changes(self, totals: LinkTotals, at: float) -> dict[str, LinkRate]:
        """The rates that changed since the previous reading (none at the first); `at` is when these were read, in
        seconds."""
        elapsed, last = at - self._last_at, self._last
        self._last, self._last_at = totals, at
        if not last or elapsed <= 0:
            return {}
        moving: dict[str, LinkRate] = {}
        alike: dict[tuple[int, int], LinkRate] = {}  # by how far the counters moved: a packet flooded through a
        # switch moves a thousand links' counters alike, and gives them one rate
        for link, counted in totals.items():
            before = last.get(link)
            if before is None or counted == before:
                continue
            moved = (counted[0] - before[0], counted[1] - before[1])
            rate = alike.get(moved)
            if rate is None:
                rate = LinkRate(round(max(0, moved[0]) * 8 / elapsed), round(max(0, moved[1]) / elapsed, 1))
                rate = alike[moved] = STILL if rate == STILL else rate  # counters that went back: a device made anew
            if rate is not STILL:
                moving[link] = rate
        told, self._told = self._told, moving
        if self._first:
            self._first = False
            return {link: moving.get(link, STILL) for link in totals if link in last}
        changed = {link: rate for link, rate in moving.items() if told.get(link) != rate}
        changed.update((link, STILL) for link in told.keys() - moving.keys())
        return changed
