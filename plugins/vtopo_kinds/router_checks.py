"""The check type the router kind adds: an OSPF adjacency in a given state."""
from __future__ import annotations

import json
from dataclasses import dataclass

from vtopo.kinds.api import CheckType, Probe, Verdict, setting


@dataclass(frozen=True)
class NeighborParams:
    router: str = setting("", "Router", "the router whose neighbour table is read")
    neighbor: str = setting("", "Neighbour", "the router it should be adjacent to")
    state: str = setting("Full", "State", "the OSPF state expected", choices=("Full", "2-Way"))


class OspfNeighbor(CheckType):
    name = "ospf-neighbor"
    summary = "router R sees router S as an OSPF neighbour in state Full"
    params_type = NeighborParams
    node_fields = ("router", "neighbor")

    def describe(self, params: NeighborParams) -> str:
        return f"{params.router} and {params.neighbor} are OSPF neighbours in state {params.state}"

    def run(self, params: NeighborParams, probe: Probe) -> Verdict:
        table = json.loads(probe.run(params.router, ["vtysh", "-c", "show ip ospf neighbor json"]) or "{}")
        theirs = set(probe.addresses_of(params.neighbor))
        states = []
        for router_id, entries in table.get("neighbors", {}).items():
            for entry in entries:
                address = entry.get("address") or entry.get("ifaceAddress", "")
                state = str(entry.get("state") or entry.get("nbrState", "")).split("/")[0]
                if address in theirs or router_id in theirs:
                    states.append(state)
        if params.state in states:
            return Verdict(True, f"{params.router} sees {params.neighbor} in state {params.state}")
        if states:
            return Verdict(False, f"{params.router} sees {params.neighbor} in state {', '.join(states)}, "
                                  f"not {params.state}")
        others = ", ".join(table.get("neighbors", {})) or "none"
        return Verdict(False, f"{params.router} has no OSPF neighbour {params.neighbor} (neighbour ids: {others}); "
                              "check the link between them, its addresses and that its port is not passive")
