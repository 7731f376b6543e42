"""What a student types into each router's vtysh for the stages of topologies/ospf-assignment.vtopo: OSPF on the
ring in area 0 (with one-second hellos on point-to-point links, so that a test need not wait out a 40 s dead
interval, and one-second retransmits, so that a database description lost while the neighbour was still starting is
sent again after 1 s rather than 5), then each LAN announced with its host side passive."""
from __future__ import annotations

RING = {"r1": (1, ["10.0.12.0/30", "10.0.13.0/30"], "10.1.0.0/24"), "r2": (2, ["10.0.12.0/30", "10.0.23.0/30"], ""),
        "r3": (3, ["10.0.13.0/30", "10.0.23.0/30"], "10.3.0.0/24")}
"""Each router's id number, its ring links and its LAN ("" for none)."""


def ospf_in_area_0(router: str) -> list[str]:
    """Stage 2: the router's ring links, fast hellos and retransmits, OSPF in area 0."""
    number, links, _ = RING[router]
    fast = [line for port in ("eth1", "eth2") for line in (
        f"interface {port}", "ip ospf network point-to-point", "ip ospf hello-interval 1", "ip ospf dead-interval 4",
        "ip ospf retransmit-interval 1")]
    return [*fast, "router ospf", f"ospf router-id {number}.{number}.{number}.{number}",
            *(f"network {link} area 0" for link in links)]


def lan_announced(router: str) -> list[str]:
    """Stage 3: the router's LAN in area 0, its host side passive; nothing for a router without a LAN."""
    lan = RING[router][2]
    return ["router ospf", f"network {lan} area 0", "passive-interface eth0"] if lan else []
