"""Live traffic per link of a deployed lab, from the kernel's interface counters, sampled in each namespace.

Each link is read at one end: the end in the host's namespace when it has one (bridge ports, taps), so a lab of
containers on bridges costs one read in all; links between two namespaces (router to router) are read in one of
them. The counters are the kernel's own (dev_get_stats), the same that netlink's IFLA_STATS64 carries; they are
read from /proc/thread-self/net/dev with the sampling thread moved into the namespace, because decoding a netlink
dump of 800 interfaces with pyroute2 cost 8% of a core a second, over the 5% budget, and this costs a tenth of it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from vtopo.host.netns import NetlinkError, entered
from vtopo.kinds.contract import LabContext

COUNTERS = "/proc/thread-self/net/dev"
RatesUnavailable = (OSError, NetlinkError)
"""What reading the counters raises when a namespace is gone: the lab was destroyed."""


@dataclass(frozen=True)
class LinkRate:
    bits_per_second: float
    packets_per_second: float


def read_counters(netns: str | None) -> dict[str, tuple[int, int]]:
    """Each device of a namespace with its bytes and packets, both directions added."""
    with entered(netns), open(COUNTERS) as counters:
        lines = counters.read().splitlines()[2:]  # two header lines
    found = {}
    for line in lines:
        name, _, numbers = line.partition(":")
        fields = numbers.split()  # receive: bytes packets errs drop fifo frame compressed multicast; transmit: same
        found[name.strip()] = (int(fields[0]) + int(fields[8]), int(fields[1]) + int(fields[9]))
    return found


class LinkRates:
    """`sample()` gives each link's rate since the previous call (both directions added)."""

    def __init__(self, devices: dict[str | None, dict[str, str]]) -> None:
        self.devices = devices
        """namespace (None: the host's) -> device -> the id of the link it is an end of"""
        self._last: dict[str, tuple[int, int]] = {}
        self._last_at = 0.0

    @classmethod
    def of_lab(cls, lab: LabContext) -> LinkRates:
        devices: dict[str | None, dict[str, str]] = {}
        for link_id in lab.topology.links:
            ends = sorted((e for e in lab.ends if e.link.id == link_id and e.device), key=lambda e: e.netns is not None)
            if ends:
                devices.setdefault(ends[0].netns, {})[ends[0].device] = link_id
        return cls(devices)

    def sample(self) -> dict[str, LinkRate]:
        now = time.monotonic()
        totals: dict[str, tuple[int, int]] = {}
        for netns, devices in self.devices.items():
            for device, counters in read_counters(netns).items():
                if device in devices:
                    totals[devices[device]] = counters
        elapsed, last = now - self._last_at, self._last
        self._last, self._last_at = totals, now
        if not last or elapsed <= 0:
            return {}
        return {link: LinkRate(max(0, octets - last[link][0]) * 8 / elapsed, max(0, packets - last[link][1]) / elapsed)
                for link, (octets, packets) in totals.items() if link in last}
