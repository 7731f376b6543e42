"""The ops that make and configure a link: its medium, its ends (a node's subinterfaces among them), a tunnel's end
on this site, and the qdiscs of its impairment. Which medium each link has was chosen when the lab was resolved
(vtopo.compile.media)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterator

from vtopo.compile.media import BRIDGED_TAPS
from vtopo.compile.subinterfaces import made_by_switch
from vtopo.kinds.contract import EndContext, LabContext, MakesTaggedPorts, Role, SegmentKind
from vtopo.lab_terms import LabNames
from vtopo.model.rules import subinterface_name
from vtopo.model.sites import VXLAN_PORT, SitePart
from vtopo.model.topology import Impairment
from vtopo.ops import (AddAddress, ConfigureLink, CreateLinkBridge, CreateMacvlan, CreateMacvtap, CreateTap, CreateVeth,
                       CreateVlan, CreateVxlan, LinkType, Op, SetImpairment, SetMaster, SetSysctl, own_arp_only)


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


def made_on_their_bridges(ops: list[Op]) -> list[Op]:
    """`ops`, each veth whose host end a bridge takes as a port (SetMaster without hairpin) made on that bridge
    (CreateVeth.master) instead of attached by a SetMaster of its own: one request instead of two, and the port is
    attached while it is down, as `build_phase` orders ports otherwise (vtopo.compile.compiler)."""
    attached = {op.name: op.master for op in ops if isinstance(op, SetMaster) and not op.hairpin}
    made = {op.name for op in ops if isinstance(op, CreateVeth) and op.netns is None and op.name in attached}
    return [replace(op, master=attached[op.name]) if isinstance(op, CreateVeth) and op.name in made else op
            for op in ops if not (isinstance(op, SetMaster) and op.name in made)]


def tunnel_end(end: EndContext, part: SitePart) -> Iterator[Op]:
    """The VXLAN device of this site's end of a link between sites."""
    tunnel = part.tunnel(end.link.id)
    assert tunnel is not None, "a site's part has a tunnel for each of its nodes' links to other sites"
    yield CreateVxlan(owner=f"link {end.link_name}", name=end.device, netns=end.netns, vni=tunnel.vni,
                      local=part.address, remote=tunnel.remote, port=VXLAN_PORT, mtu=end.end.interface.mtu)


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
            if end.netns is None and interface.addresses:  # a host node's end
                yield from own_arp_only(owner, end.device)
        if impairment.active:
            yield impair(end, impairment)


def subinterface_ops(end: EndContext, tag: str) -> Iterator[Op]:
    """Each subinterface at this end made, up, with its addresses; `tag`, the lab's tag for a device in the host's
    namespace."""
    owner = f"link {end.link_name}"
    by_switch = made_by_switch(end)
    for sub in end.end.interface.subinterfaces:
        name = subinterface_name(end.device, sub.vlan)
        if by_switch and isinstance(end.other.kind, MakesTaggedPorts):
            yield from end.other.kind.tagged_port(end.other.owner, end.other, sub.vlan, name, owner)
        else:
            yield CreateVlan(owner=owner, name=name, netns=end.netns, parent=end.device, vid=sub.vlan)
        # no duplicate address detection of its link-local address: until it ends, a second after the subinterface
        # comes up, a router cannot ask for the neighbour of a packet it forwards there
        yield SetSysctl(owner=owner, netns=end.netns, key=f"net/ipv6/conf/{name}/accept_dad", value="0", device=name,
                        userns=end.owner.lab.user_namespace if end.netns else "")
        yield ConfigureLink(owner=owner, name=name, netns=end.netns, alias=tag if end.netns is None else "", up=True)
        for address in sub.addresses:
            yield AddAddress(owner=owner, name=name, netns=end.netns, cidr=address)
        if end.netns is None and sub.addresses:
            yield from own_arp_only(owner, name)
