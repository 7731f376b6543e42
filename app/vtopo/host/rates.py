"""Live traffic per link of a deployed lab, from the kernel's interface counters read over netlink (RTM_GETSTATS,
64-bit link stats only), one dump per namespace per sample.

Each link is read at one end: the end in the host's namespace when it has one (bridge ports, taps), so a lab of
containers on bridges costs one dump in all. Links between two namespaces (router to router) are read in one of them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError as KernelRefused

from vtopo.kinds.contract import LabContext
from vtopo.host.netns import NetlinkError, entered

STATS_LINK_64 = 1  # IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64)


RatesUnavailable = (OSError, NetlinkError, KernelRefused)
"""What reading the counters raises when a namespace is gone or the kernel refuses: the lab was destroyed."""


@dataclass(frozen=True)
class LinkRate:
    bits_per_second: float
    packets_per_second: float


class LinkRates:
    """`sample()` gives each link's rate since the previous call (both directions added); `close()` when done."""

    def __init__(self, devices: dict[str | None, dict[str, str]]) -> None:
        self.devices = devices
        """namespace (None: the host's) -> device -> the id of the link it is an end of"""
        self._sockets: dict[str | None, IPRoute] = {}
        self._names: dict[str | None, dict[int, str]] = {}
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
            for index, (octets, packets) in self._dump(netns).items():
                link_id = devices.get(self._name(netns, index))
                if link_id is not None:
                    totals[link_id] = (octets, packets)
        elapsed, last = now - self._last_at, self._last
        self._last, self._last_at = totals, now
        if not last or elapsed <= 0:
            return {}
        return {link: LinkRate(max(0, octets - last[link][0]) * 8 / elapsed, max(0, packets - last[link][1]) / elapsed)
                for link, (octets, packets) in totals.items() if link in last}

    def _socket(self, netns: str | None) -> IPRoute:
        if netns not in self._sockets:
            with entered(netns):
                self._sockets[netns] = IPRoute()  # a netlink socket stays in the namespace it was opened in
        return self._sockets[netns]

    def _dump(self, netns: str | None) -> dict[int, tuple[int, int]]:
        counters = {}
        for message in self._socket(netns).stats("dump", filter_mask=STATS_LINK_64):
            stats = message.get_attr("IFLA_STATS_LINK_64")
            if stats is not None:
                counters[message["ifindex"]] = (stats["rx_bytes"] + stats["tx_bytes"],
                                                stats["rx_packets"] + stats["tx_packets"])
        return counters

    def _name(self, netns: str | None, index: int) -> str:
        names = self._names.setdefault(netns, {})
        if index not in names:
            names.clear()
            names.update((link["index"], link.get_attr("IFLA_IFNAME")) for link in self._socket(netns).get_links())
        return names.get(index, "")

    def close(self) -> None:
        for socket in self._sockets.values():
            socket.close()
        self._sockets.clear()
