"""Live traffic per link of a deployed lab, from the kernel's interface counters, sampled in each namespace.

Each link is read at one end: the end in the host's namespace when it has one (bridge ports, taps), so a lab of
containers on bridges costs one read in all; links between two namespaces (router to router) are read in one of
them. A read is one netlink dump of the namespace's 64-bit counters (IFLA_STATS64, `link_counters`); the devices'
ifindexes are looked up once, on the first sample.
"""
from __future__ import annotations

import socket
import time
from typing import Self

from vtopo.host.netlink import link_counters
from vtopo.host.netns import NetlinkError, entered
from vtopo.kinds.contract import LabContext
from vtopo.reports import LinkRate, LinkTotals, RateMeter

RatesUnavailable = (OSError, NetlinkError)
"""What reading the counters raises when a namespace is gone: the lab was destroyed."""


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


class LinkCounters:
    """`read()` gives each link's counters now. The agent reads them for a lab's owner, who cannot enter its
    namespaces."""

    def __init__(self, devices: dict[str | None, dict[str, str]]) -> None:
        self.devices = devices
        """namespace (None: the host's) -> device -> the id of the link it is an end of"""
        self._indexes: dict[str | None, dict[int, str]] = {}
        """namespace -> ifindex -> the id of the link, once looked up"""

    @classmethod
    def of_lab(cls, lab: LabContext) -> Self:
        devices: dict[str | None, dict[str, str]] = {}
        for link_id in lab.topology.links:
            ends = sorted((e for e in lab.ends if e.link.id == link_id and e.device), key=lambda e: e.netns is not None)
            if ends:
                devices.setdefault(ends[0].netns, {})[ends[0].device] = link_id
        return cls(devices)

    def read(self) -> LinkTotals:
        if not self._indexes:
            self._indexes = {netns: by_index(netns, devices) for netns, devices in self.devices.items()}
        totals: LinkTotals = {}
        for netns, links in self._indexes.items():
            for index, counters in link_counters(netns).items():
                if index in links:
                    totals[links[index]] = counters
        return totals


class LinkRates(LinkCounters):
    """`changes()` gives the rates that changed since the previous call: every link's at the second, then only those
    of the links that carry traffic, or stopped (vtopo.reports.RateMeter)."""

    def __init__(self, devices: dict[str | None, dict[str, str]]) -> None:
        super().__init__(devices)
        self._meter = RateMeter()

    def changes(self) -> dict[str, LinkRate]:
        return self._meter.changes(self.read(), time.monotonic())
