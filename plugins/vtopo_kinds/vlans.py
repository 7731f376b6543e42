"""VLANs on a switch's ports, the same on Open vSwitch and on a Linux bridge.

Each port is an access port, in one VLAN and untagged, or a trunk, carrying VLANs tagged and at most one native VLAN
untagged. The switch's VLANs setting says it port by port: `p1 = access 10`, `p3 = trunk 10,20`,
`p4 = trunk 10,20 native 1`. Once it lists a port, every port it does not list is an access port in VLAN 1, as on
most switches; a switch with no VLANs set passes every frame as it came, tag and all.
"""
from __future__ import annotations

import ipaddress
import re
from typing import Any, Iterator

from vtopo.kinds.api import (DEFAULT_VLAN, HIGHEST_VLAN, LOWEST_VLAN, VLANS_EXAMPLE, EndContext, KeepsVlansApart,
                             NodeContext, PortVlans, Problem, Role, Severity, parse_port, setting, subinterface_name)

SVI_KEY = re.compile(r"vlan\s*(\d+)")


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
        yield from _subinterfaces_not_carried(end)
        yield from _trunk_to_no_subinterfaces(end)


def _vlans_at(end: EndContext) -> PortVlans | None:
    """The VLANs of a switch's port at `end`; None for a port of a switch that keeps no VLANs apart."""
    return end.kind.port_vlans(end.owner, end) if isinstance(end.kind, KeepsVlansApart) else None


def _native_mismatch(end: EndContext) -> Iterator[Problem]:
    """A link to another switch with VLANs, a trunk at one end at least, whose ends put untagged frames in different
    VLANs: said once, by the end that comes first."""
    peer = end.peer
    if peer is None:
        return
    mine, theirs = _vlans_at(end), _vlans_at(peer)
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


def _towards_node(end: EndContext) -> tuple[EndContext, PortVlans] | None:
    """The node's end across a port with VLANs that leads to a node, not another switch, with the port's VLANs."""
    peer = end.peer
    if peer is None or peer.kind.role in (Role.SWITCH, Role.SEGMENT):
        return None
    vlans = _vlans_at(end)
    return None if vlans is None else (peer, vlans)


def _subinterfaces_not_carried(end: EndContext) -> Iterator[Problem]:
    """Subinterfaces of the node across the port in VLANs the port does not carry tagged: their frames are dropped
    at the port."""
    towards = _towards_node(end)
    if towards is None:
        return
    peer, vlans = towards
    wanted = [sub.vlan for sub in peer.end.interface.subinterfaces]
    missing = [vlan for vlan in wanted if vlan not in vlans.tagged]
    if not missing:
        return
    names = ", ".join(subinterface_name(peer.end.port, vlan) for vlan in missing)
    native = vlans.untagged if peer.end.interface.addresses else None
    fix = str(PortVlans(native, tuple(sorted(set(vlans.tagged) | set(wanted)))))
    tags = (f"tags its frames with VLAN {missing[0]}" if len(missing) == 1 else
            f"tag their frames with VLANs {', '.join(map(str, missing))}")
    yield Problem(f"{peer.node.name}:{names} {tags}, which {end.node.name}:{end.end.port} does not carry tagged "
                  f"({_described(vlans)}), so {end.node.name} drops them. Make {end.end.port} a trunk of every VLAN of "
                  f"{peer.node.name}'s subinterfaces, e.g. on {end.node.name}: {end.end.port} = {fix}",
                  f"link {end.link_name}", "", end.link.id)


def _trunk_to_no_subinterfaces(end: EndContext) -> Iterator[Problem]:
    """A trunk towards a node with no subinterfaces: the node sees the trunk's native VLAN at most, and frames tagged
    with VLANs it never reads."""
    towards = _towards_node(end)
    if towards is None:
        return
    peer, vlans = towards
    if not vlans.trunk or peer.end.interface.subinterfaces:
        return
    tagged = ", ".join(map(str, vlans.tagged))
    sees = f"only VLAN {vlans.untagged}, untagged" if vlans.untagged is not None else "nothing it can use"
    first = vlans.tagged[0]
    access = f"Make the port an access port, e.g. on {end.node.name}: {end.end.port} = access {first}"
    fix = (f"{access}, or give {peer.node.name} a subinterface per VLAN ({subinterface_name(peer.end.port, first)} "
           f"for VLAN {first})")
    yield Problem(f"{end.node.name}:{end.end.port} is a trunk of VLANs {tagged} towards {peer.node.name}:"
                  f"{peer.end.port}, which has no subinterfaces, so {peer.node.name} sees {sees}. {fix}",
                  f"link {end.link_name}", "", end.link.id, Severity.WARNING)


def _described(vlans: PortVlans) -> str:
    if not vlans.trunk:
        return f"an access port in VLAN {vlans.untagged}"
    return f"a trunk of {', '.join(map(str, vlans.tagged))}"


def svis_setting() -> Any:
    """The VLAN interfaces (SVIs) setting of an L3 switch kind."""
    return setting({}, "VLAN interfaces (SVIs)", "One VLAN a line: vlan 10 = 10.0.10.1/24, 2001:db8:10::1/64 gives the "
                   "switch an interface in VLAN 10 with these addresses, in a namespace of its own with IP forwarding "
                   "on: it routes between its VLANs (an L3 switch), and the VLAN's hosts take it as their gateway.")


def svi_vlans(svis: dict[str, str]) -> dict[int, tuple[str, ...]]:
    """The addresses of each VLAN interface, by VLAN, of those the SVIs setting names rightly (the check names the
    rest)."""
    found = {}
    for key, text in svis.items():
        match = SVI_KEY.fullmatch(key)
        if match is not None and LOWEST_VLAN <= int(match.group(1)) <= HIGHEST_VLAN:
            found[int(match.group(1))] = tuple(a.strip() for a in text.split(",") if a.strip())
    return found


def svi_problems(node: NodeContext[Any]) -> Iterator[Problem]:
    """VLAN interfaces named wrongly, with addresses that are not addresses, or in a VLAN no port carries."""
    name, svis = node.node.name, node.settings.svis
    carried = {vlan for end in node.ends if (vlans := _vlans_at(end)) is not None
               for vlan in (*vlans.tagged, vlans.untagged)}
    for key, text in svis.items():
        match = SVI_KEY.fullmatch(key)
        if match is None or not LOWEST_VLAN <= int(match.group(1)) <= HIGHEST_VLAN:
            yield Problem(f"VLAN interface {key!r} of {name} must read vlan N, N a VLAN from {LOWEST_VLAN} to "
                          f"{HIGHEST_VLAN}, e.g. vlan 10 = 10.0.10.1/24", node.subject, "", node.node.id)
            continue
        vlan = int(match.group(1))
        addresses = svi_vlans({key: text})[vlan]
        for address in addresses:
            try:
                ipaddress.ip_interface(address)
            except ValueError:
                address = ""
            if "/" not in address:
                yield Problem(f"VLAN interface vlan {vlan} of {name}: {text!r} must be addresses with their prefix, "
                              "e.g. 10.0.10.1/24, 2001:db8:10::1/64", node.subject, "", node.node.id)
                break
        if not addresses:
            yield Problem(f"VLAN interface vlan {vlan} of {name} has no address: give it the gateway address of "
                          f"VLAN {vlan}, e.g. vlan {vlan} = 10.0.{vlan % 256}.1/24", node.subject, "", node.node.id)
        if vlan not in carried:
            yield Problem(f"{name} has a VLAN interface in VLAN {vlan}, but none of its ports carries VLAN {vlan}: make "
                          f"a port an access port of it (e.g. p1 = access {vlan}) or a trunk carrying it",
                          node.subject, "", node.node.id, Severity.WARNING)
