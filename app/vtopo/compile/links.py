"""Choosing how a link is made (the medium) and the ops that make and configure it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from vtopo.kinds.contract import SWITCH_PORT, EndContext, ForwardsInUserspace, LabContext, Role, SegmentKind
from vtopo.lab_terms import HostFacts, LabNames
from vtopo.model.topology import IMPAIRMENT_LIMITS, Impairment
from vtopo.ops import (AddAddress, ConfigureLink, CreateLinkBridge, CreateMacvlan, CreateMacvtap, CreateTap, CreateVeth,
                       LinkType, Op, SetImpairment, SetMaster)

BRIDGED_TAPS = "bridged tap"
"""The medium of a link from a VM to another VM, a container or a router: the VM's tap, and the other VM's tap or a
veth into the node, joined by the link's own bridge (LabNames.link_bridge)."""


def medium_for(a: EndContext, b: EndContext) -> str | None:
    """veth, a switch port, macvlan, macvtap, tap or bridged taps; None when these two roles cannot be linked. A link with an
    impairment stays a veth: its qdiscs go on both ends, and a switch's own port has none. So does a link to the
    host's own namespace, which has no namespace to move a port into."""
    roles = {a.kind.role, b.kind.role}
    if roles == {Role.NAMESPACE, Role.SWITCH}:
        switch, node = (a, b) if a.kind.role is Role.SWITCH else (b, a)
        makes_port = (isinstance(switch.kind, ForwardsInUserspace) and switch.kind.makes_namespace_ports(switch.owner)
                      and not a.link.impairment.active and node.kind.netns(node.owner) is not None)
        return SWITCH_PORT if makes_port else "veth"
    if roles <= {Role.NAMESPACE, Role.SWITCH}:
        return "veth"
    if Role.SEGMENT in roles and len(roles) == 2:
        segment = a if a.kind.role is Role.SEGMENT else b
        child = b if segment is a else a
        if not isinstance(segment.kind, SegmentKind):
            return None
        return segment.kind.child_media.get(child.kind.role)
    if roles == {Role.MACHINE, Role.NAMESPACE}:
        node = a if a.kind.role is Role.NAMESPACE else b
        return "tap" if node.kind.netns(node.owner) is None else BRIDGED_TAPS  # the host holds the tap itself
    if roles == {Role.MACHINE, Role.SWITCH}:
        return "tap"
    if roles == {Role.MACHINE}:
        return BRIDGED_TAPS
    return None


def create_medium(a: EndContext, b: EndContext, names: LabNames) -> Iterator[Op]:
    owner = f"link {a.link_name}"
    if a.medium == "veth":
        host_side, other = (b, a) if a.netns is not None and b.netns is None else (a, b)
        yield CreateVeth(owner=owner, name=host_side.device, netns=host_side.netns, peer=other.device,
                         peer_netns=other.netns)
        return
    if a.medium == BRIDGED_TAPS:
        yield from _bridged_taps(owner, (a, b), names)
        return
    segment, child = (a, b) if a.kind.role is Role.SEGMENT else (b, a)
    if a.medium == LinkType.MACVLAN:
        assert isinstance(segment.kind, SegmentKind)
        context = segment.owner
        yield CreateMacvlan(owner=owner, name=child.device, netns=child.netns,
                            lower=segment.kind.lower_device(context), lower_netns=None, mode=segment.kind.mode(context))
    elif a.medium == LinkType.MACVTAP:
        assert isinstance(segment.kind, SegmentKind)
        context = segment.owner
        yield CreateMacvtap(owner=owner, name=child.device, lower=segment.kind.lower_device(context),
                            mode=segment.kind.mode(context))
    elif a.medium == "tap":
        machine = a if a.kind.role is Role.MACHINE else b
        yield CreateTap(owner=owner, name=machine.device)
    # a SWITCH_PORT is made by the switch's attach


def _bridged_taps(owner: str, ends: tuple[EndContext, EndContext], names: LabNames) -> Iterator[Op]:
    """Each VM's tap, or a veth into the container or router, on the link's bridge: forwarding at once (no STP, no
    forward delay), tagged frames passed as they come."""
    link_id = ends[0].link.id
    bridge = names.link_bridge(link_id)
    yield CreateLinkBridge(owner=owner, name=bridge, forward_delay_s=0)
    yield ConfigureLink(owner=owner, name=bridge, netns=None, alias=names.tag)
    for end in ends:
        if end.kind.role is Role.MACHINE:
            yield CreateTap(owner=owner, name=end.device)
            yield SetMaster(owner=owner, name=end.device, master=bridge)
            continue
        port = names.link_port(link_id)
        yield CreateVeth(owner=owner, name=port, netns=None, peer=end.device, peer_netns=end.netns)
        yield ConfigureLink(owner=owner, name=port, netns=None, mtu=end.end.interface.mtu or
                            end.other.end.interface.mtu, alias=names.tag)
        yield SetMaster(owner=owner, name=port, master=bridge)


def impairment_problem(impairment: Impairment, facts: HostFacts) -> str | None:
    """What keeps `impairment` from being applied on a host with `facts` (at a deploy or live), or None."""
    outside = [f"{key} {low:g} to {high:g}" for key, (low, high) in IMPAIRMENT_LIMITS.items()
               if not low <= getattr(impairment, key) <= high]
    if outside:
        return f"impairments must be within their ranges: {', '.join(outside)}"
    if (impairment.delay_ms or impairment.jitter_ms or impairment.loss_pct) and not facts.netem and facts.probed:
        return ("delay, jitter and loss need the kernel's netem qdisc (sch_netem), which this kernel does not have; "
                "only a rate limit (tbf) can be applied here")
    return None


def devices_of(a: EndContext, b: EndContext) -> list[EndContext]:
    """The link's ends that made a device, once per device, those in a node's namespace first."""
    seen: set[tuple[str | None, str]] = set()
    ends = []
    for end in sorted((a, b), key=lambda e: e.kind.role is not Role.NAMESPACE):
        if end.device and (end.netns, end.device) not in seen:
            seen.add((end.netns, end.device))
            ends.append(end)
    return ends


def impair(end: EndContext, impairment: Impairment) -> SetImpairment:
    """The qdiscs of `impairment` on the device of `end`, at a deploy (all 0: none)."""
    return impair_device(f"link {end.link_name}", end.device, end.netns, impairment)


def impair_device(owner: str, device: str, netns: str | None, impairment: Impairment) -> SetImpairment:
    """The qdiscs of `impairment` on `device` of a link (`owner`), at a deploy and as a live change alike."""
    return SetImpairment(owner=owner, name=device, netns=netns, delay_ms=impairment.delay_ms,
                         jitter_ms=impairment.jitter_ms, loss_pct=impairment.loss_pct, rate_mbit=impairment.rate_mbit)


@dataclass(frozen=True)
class ShapedLink:
    """What a live change of a link's impairment needs of it, as the deploy made it on this site: its medium, and
    the devices its qdiscs go on (name, namespace), those a deploy impairs. A lab's record keeps it for each link
    (`shaped_links`), so that the change reads it there instead of compiling the lab again."""

    medium: str
    devices: tuple[tuple[str, str | None], ...]

    def to_json(self) -> list[Any]:
        return [self.medium, [list(device) for device in self.devices]]

    @classmethod
    def from_json(cls, data: list[Any]) -> ShapedLink:
        medium, devices = data
        return cls(str(medium), tuple((str(name), None if netns is None else str(netns)) for name, netns in devices))


def shaped_links(lab: LabContext) -> dict[str, ShapedLink]:
    """Each link with an end on this site, by id, as a live change of its impairment shapes it: the devices a deploy
    impairs (`configure_ends`), from its first end here and that end's peer."""
    links: dict[str, ShapedLink] = {}
    for end in lab.ends:
        if end.link.id not in links:
            links[end.link.id] = ShapedLink(end.medium, tuple((device.device, device.netns)
                                                              for device in devices_of(end, end.other)))
    return links


def configure_ends(a: EndContext, b: EndContext, names: LabNames) -> Iterator[Op]:
    """MTU, MAC, addresses, ownership tag, link up and impairment, once per device the link made."""
    owner = f"link {a.link_name}"
    impairment = a.link.impairment
    for end in devices_of(a, b):
        interface = end.end.interface
        if end.kind.role is Role.MACHINE:
            mac = end.guest_mac() if end.medium == LinkType.MACVTAP else ""
        else:
            mac = interface.mac
        yield ConfigureLink(owner=owner, name=end.device, netns=end.netns, mtu=interface.mtu or end.other.end.interface.mtu,
                            mac=mac, alias=names.tag if end.netns is None else "", up=True)
        if end.kind.role is Role.NAMESPACE:
            for address in interface.addresses:
                yield AddAddress(owner=owner, name=end.device, netns=end.netns, cidr=address)
        if impairment.active:
            yield impair(end, impairment)
