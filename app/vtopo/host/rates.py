"""Live traffic per link of a deployed lab, from the kernel's interface counters, sampled in each namespace.

Each link is read at one end: the end in the host's namespace when it has one (bridge ports, taps), so a lab of
containers on bridges costs one read in all; links between two namespaces (router to router) are read in one of
them. A read is one netlink dump of the namespace's 64-bit counters (IFLA_STATS64, `link_counters`); the devices'
ifindexes are looked up once, on the first sample.
"""
from __future__ import annotations

import socket
import time
from dataclasses import dataclass

from vtopo.host.netlink import link_counters
from vtopo.host.netns import NetlinkError, entered
from vtopo.kinds.contract import LabContext

RatesUnavailable = (OSError, NetlinkError)
"""What reading the counters raises when a namespace is gone: the lab was destroyed."""


@dataclass(frozen=True)
class LinkRate:
    bits_per_second: float
    packets_per_second: float


def by_index(netns: str | None, devices: dict[str, str]) -> dict[int, str]:
    """The same map keyed by each device's ifindex in its namespace; a device that is not there is left out."""
    found = {}
    with entered(netns):
        for device, link_id in devices.items():
            try:
                found[socket.if_nametoindex(device)] = link_id
            except OSError:
                continue
    return found


class LinkRates:
    """`sample()` gives each link's rate since the previous call (both directions added)."""

    def __init__(self, devices: dict[str | None, dict[str, str]]) -> None:
        self.devices = devices
        """namespace (None: the host's) -> device -> the id of the link it is an end of"""
        self._indexes: dict[str | None, dict[int, str]] = {}
        """namespace -> ifindex -> the id of the link, once looked up"""
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
        if not self._indexes:
            self._indexes = {netns: by_index(netns, devices) for netns, devices in self.devices.items()}
        totals: dict[str, tuple[int, int]] = {}
        for netns, links in self._indexes.items():
            for index, counters in link_counters(netns).items():
                if index in links:
                    totals[links[index]] = counters
        elapsed, last = now - self._last_at, self._last
        self._last, self._last_at = totals, now
        if not last or elapsed <= 0:
            return {}
        return {link: LinkRate(max(0, octets - last[link][0]) * 8 / elapsed, max(0, packets - last[link][1]) / elapsed)
                for link, (octets, packets) in totals.items() if link in last}
