"""VLANs on a switch's ports, the same on Open vSwitch and on a Linux bridge.

Each port is an access port, in one VLAN and untagged, or a trunk, carrying VLANs tagged and at most one native VLAN
untagged. The switch's VLANs setting says it port by port: `p1 = access 10`, `p3 = trunk 10,20`,
`p4 = trunk 10,20 native 1`. Once it lists a port, every port it does not list is an access port in VLAN 1, as on
most switches; a switch with no VLANs set passes every frame as it came, tag and all.
"""
from __future__ import annotations

from typing import Any, Iterator

from vtopo.kinds.api import (DEFAULT_VLAN, HIGHEST_VLAN, LOWEST_VLAN, VLANS_EXAMPLE, EndContext, NodeContext,
                             PortVlans, Problem, Severity, parse_port, setting)


def vlans_setting() -> Any:
    """The VLANs setting of a switch kind."""
    return setting({}, "VLANs per port", "One port a line: p1 = access 10 (in VLAN 10, untagged), p3 = trunk 10,20 "
                   "(VLANs 10 and 20, tagged), p4 = trunk 10,20 native 1 (and VLAN 1 untagged). Once a port is "
                   "listed, the ports not listed are access ports in VLAN 1. Empty: the switch passes every frame "
                   "as it comes, tag and all.", port_vlans=True)


def part_settings(settings: dict[str, Any], ports: frozenset[str], trunk: str) -> dict[str, Any]:
    """The settings of the part of a switch that has `ports` and joins the rest through `trunk`: its VLANs those of
    `ports`, and `trunk` a trunk of every VLAN the switch names, with VLAN 1 (its unlisted ports') native. A switch with
    no VLANs set keeps none: it passes every frame as it came."""
    vlans: dict[str, str] = settings.get("vlans") or {}
    if not vlans:
        return dict(settings)
    named: set[int] = {DEFAULT_VLAN}
    for text in vlans.values():
        try:
            named.update(parse_port(text)[1])
        except ValueError:
            continue  # the check says so
    part = {port: text for port, text in vlans.items() if port in ports}
    part[trunk] = str(PortVlans(DEFAULT_VLAN, tuple(sorted(named - {DEFAULT_VLAN}))))
    return {**settings, "vlans": part}


def vlan_problems(node: NodeContext[Any]) -> Iterator[Problem]:
    """What is wrong with a switch's VLANs setting, and the trunks from it whose two ends disagree on their native
    VLAN."""
    vlans: dict[str, str] = node.settings.vlans
    linked = {end.end.port for end in node.ends}
    name = node.node.name
    for port, text in vlans.items():
        try:
            _, numbers = parse_port(text)
        except ValueError:
            yield Problem(f"VLANs of {name}:{port} read {text!r}, which is neither access N (one VLAN, untagged) nor "
                          f"trunk N,N (VLANs tagged) with an optional native N; write e.g. {VLANS_EXAMPLE}", node.subject,
                          "", node.node.id)
            continue
        for number in dict.fromkeys(numbers):
            if not LOWEST_VLAN <= number <= HIGHEST_VLAN:
                yield Problem(f"VLAN {number} on {name}:{port} is outside {LOWEST_VLAN}-{HIGHEST_VLAN} (0 stands for "
                              "no VLAN in a tag and 4095 is reserved); use a VLAN from "
                              f"{LOWEST_VLAN} to {HIGHEST_VLAN}", node.subject, "", node.node.id)
        if port not in linked:
            yield Problem(f"VLANs name port {port}, which has no link (linked: {', '.join(sorted(linked)) or 'none'})",
                          node.subject, "", node.node.id, Severity.WARNING)
    for end in node.ends:
        yield from _native_mismatch(end)


def _native_mismatch(end: EndContext) -> Iterator[Problem]:
    """A link to another switch with VLANs, a trunk at one end at least, whose ends put untagged frames in different
    VLANs: said once, by the end that comes first."""
    peer = end.peer
    if peer is None:
        return
    mine, theirs = end.kind.port_vlans(end.owner, end), peer.kind.port_vlans(peer.owner, peer)
    if mine is None or theirs is None or not (mine.trunk or theirs.trunk) or mine.untagged == theirs.untagged:
        return
    here, there = f"{end.node.name}:{end.end.port}", f"{peer.node.name}:{peer.end.port}"
    if here > there:
        return
    if theirs.trunk:
        fix = f"{peer.node.name}: {peer.end.port} = {PortVlans(mine.untagged, theirs.tagged)}"
    else:
        fix = f"{end.node.name}: {end.end.port} = {PortVlans(theirs.untagged, mine.tagged)}"
    yield Problem(f"the native VLAN differs at the two ends of this trunk: {here} {_untagged(mine)}, {there} "
                  f"{_untagged(theirs)}, so {_crossing(mine, theirs)}. Give both ends the same native VLAN, e.g. {fix}",
                  f"link {end.link_name}", "", end.link.id, Severity.WARNING)


def _untagged(vlans: PortVlans) -> str:
    if not vlans.trunk:
        return f"is an access port in VLAN {vlans.untagged}"
    if vlans.untagged is None:
        return "has no native VLAN (it drops untagged frames)"
    return f"has native VLAN {vlans.untagged}"


def _crossing(mine: PortVlans, theirs: PortVlans) -> str:
    if mine.untagged is None or theirs.untagged is None:
        lost = mine.untagged if theirs.untagged is None else theirs.untagged
        return f"VLAN {lost}'s frames are lost on the way"
    return f"untagged frames cross from VLAN {mine.untagged} into VLAN {theirs.untagged} and back"
