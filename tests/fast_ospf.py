"""OSPF's timers made short in an imported lab's router configurations, for tests about what OSPF carries rather than
when. FRR's defaults (hellos every 10 s, a 40 s dead interval) make each broadcast segment wait a dead interval before
it elects its designated router, so a test would wait 40 s before any adjacency there forms."""
from __future__ import annotations

import re

from vtopo.model.topology import Topology

FAST_TIMERS = " ip ospf hello-interval 1\n ip ospf dead-interval 4\n"
_INTERFACE = re.compile(r"^interface (?!lo$)\S+\n", re.MULTILINE)  # the loopback sends no hellos


def with_fast_hellos(topology: Topology) -> Topology:
    """`topology` with one-second hellos and a four-second dead interval on every interface but the loopback that its
    routers' configurations name (both ends of a link get them, so their adjacencies still form)."""
    for node in topology.nodes.values():
        if config := node.settings.get("config"):
            node.settings["config"] = _INTERFACE.sub(lambda line: line.group(0) + FAST_TIMERS, config)
    return topology
