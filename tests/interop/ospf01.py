"""ospf01, a public containerlab lab of six FRR routers (tests/interop/README.md), as its tests use it."""
from __future__ import annotations

from pathlib import Path

from vtopo.model.topology import Topology

OSPF01 = Path(__file__).parent / "containerlab" / "ospf01" / "ospf01.clab.yml"


def without_log_path(ospf01: Topology) -> Topology:
    """ospf01 with the one fix vtopo asks for: router1 logs where vtopo keeps the logs, not at a path of its own."""
    router1 = ospf01.node_named("router1")
    assert router1 is not None
    router1.settings["config"] = router1.settings["config"].replace("log file /var/log/frr/ospfd.log\n", "")
    return ospf01
