"""macvlan and macvtap segments: children hung off one lower device in a mode (the tap-vs-macvtap and
veth-vs-macvlan experiments).

With no lower device given, vtopo makes its own: a veth pair whose far end is up. In VEPA mode the far end is
put on a small bridge with hairpin on, which plays the external switch that reflects frames back.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import ClassVar, Iterable

from vtopo.kinds import api
from vtopo.kinds.api import (MAX_INTERFACE_NAME, ConsentRequest, NodeContext, PortSpec, Problem, Role, SegmentKind,
                             Severity, setting)

MODES = ("bridge", "private", "vepa", "passthru", "source")


@dataclass(frozen=True)
class SegmentSettings:
    mode: str = setting("bridge", "Mode", "bridge: children talk directly. private: they never do. vepa: their "
                        "frames go out to the switch beyond, which must send them back. passthru: one child takes "
                        "over the lower device. source: only listed source MACs are received.", choices=MODES)
    lower: str = setting("", "Lower device", "A host interface to hang the children on. Empty: vtopo creates one "
                         "(a veth pair), so the host's own NICs are never touched.")


def uplink(node: NodeContext[SegmentSettings]) -> str:
    return node.names.host_device(node.node.name, "up")


def reflector(node: NodeContext[SegmentSettings]) -> str:
    return node.names.host_device(node.node.name, "sw")


class LowerDeviceSegment(SegmentKind[SegmentSettings]):
    ports = PortSpec("mv", 1, older=("c",))  # "c" named them like the containers they serve
    settings_type = SegmentSettings
    child_word: ClassVar[str]

    def mode(self, node: NodeContext[SegmentSettings]) -> str:
        return node.settings.mode

    def lower_device(self, node: NodeContext[SegmentSettings]) -> str:
        return node.settings.lower or node.names.node_device(node.node.name)

    def own_devices(self, node: NodeContext[SegmentSettings]) -> list[str]:
        if node.settings.lower:
            return []
        devices = [self.lower_device(node), uplink(node)]
        return devices + ([reflector(node)] if node.settings.mode == "vepa" else [])

    def joins_ports(self, node: NodeContext[SegmentSettings]) -> bool:
        """Bridge mode switches between children; VEPA does too, through vtopo's own hairpin reflector."""
        return node.settings.mode == "bridge" or (node.settings.mode == "vepa" and not node.settings.lower)

    def check(self, node: NodeContext[SegmentSettings]) -> Iterable[Problem]:
        mode, lower = node.settings.mode, node.settings.lower
        if lower:
            yield from self._host_device(node, lower, mode)
        for device in self.own_devices(node):
            if len(device) > MAX_INTERFACE_NAME:
                yield Problem(f"the lower device would be named {device!r}, over the kernel's {MAX_INTERFACE_NAME} "
                              "characters. Use a shorter node name.", node.subject, "", node.node.id)
        if mode == "passthru" and len(node.ends) > 1:
            yield Problem(f"passthru mode hands the lower device to a single {self.child_word}; this segment has "
                          f"{len(node.ends)} children. Use bridge mode, or one segment per child.",
                          node.subject, "", node.node.id)
        if mode == "source":
            yield Problem(f"in source mode a {self.child_word} receives only from allowed source MACs, and vtopo "
                          "does not set any yet, so nothing will arrive", node.subject, "", node.node.id,
                          Severity.WARNING)
        if mode == "vepa" and lower:
            yield Problem(f"VEPA sends traffic between children out of {lower}; the switch beyond must reflect it "
                          "back (hairpin), or the children cannot reach each other", node.subject, "", node.node.id,
                          Severity.WARNING)

    def lower(self, node: NodeContext[SegmentSettings]) -> Iterable[api.Op]:
        if node.settings.lower:
            return
        owner, tag = node.subject, node.names.tag
        lower, up = self.lower_device(node), uplink(node)
        yield api.CreateVeth(owner=owner, name=lower, netns=None, peer=up, peer_netns=None)
        yield api.ConfigureLink(owner=owner, name=lower, netns=None, alias=tag)
        yield api.ConfigureLink(owner=owner, name=up, netns=None, alias=tag)
        if node.settings.mode == "vepa":
            yield api.CreateBridge(owner=owner, name=reflector(node), stp=False, forward_delay_s=0, ageing_s=300)
            yield api.ConfigureLink(owner=owner, name=reflector(node), netns=None, alias=tag)
            yield api.SetMaster(owner=owner, name=up, master=reflector(node), hairpin=True)


    def host_device_effect(self, lower: str, mode: str) -> str:
        """What hanging this segment on the host's interface `lower` does to it, for the consent question."""
        if mode == "passthru":
            return (f"in passthru mode the {self.child_word} takes {lower} over: the device leaves the host, which "
                    f"has no network on {lower} until the lab is destroyed, and the lab gets the network {lower} is "
                    "plugged into")
        return (f"in {mode} mode each {self.child_word} gets a MAC address of its own on {lower}, and sends and "
                f"receives on the network {lower} is plugged into like another machine there")

    def _host_device(self, node: NodeContext[SegmentSettings], lower: str, mode: str) -> Iterable[Problem]:
        trust, subject, node_id = node.lab.trust, node.subject, node.node.id
        if trust.host_interfaces is not None and lower not in trust.host_interfaces:
            yield Problem(f"the lower device {lower} does not exist on this host", subject, "", node_id)
        elif lower not in trust.host_devices:
            effect = self.host_device_effect(lower, mode)
            yield Problem(f"the lower device {lower} is a host interface outside the lab: {effect}. A lab file "
                          f"cannot decide that; to allow it, pass --allow-host-device {lower} to vtopo deploy (the "
                          "designer asks)", subject, "", node_id, consent=ConsentRequest("host device", lower, effect))
        elif mode == "passthru":
            yield Problem(f"{lower} leaves the host while the lab runs (passthru, allowed with "
                          f"--allow-host-device {lower})", subject, "", node_id, Severity.WARNING)


class MacvlanKind(LowerDeviceSegment):
    name = "macvlan"
    name_stem = "mvl"
    label = "macvlan segment"
    description = ("Containers get macvlan interfaces on one lower device: no bridge, no veth. In bridge mode the "
                   "host reaches them only through a macvlan of its own on the same lower device.")
    child_media = {Role.NAMESPACE: "macvlan"}
    child_word = "macvlan"
    connects_to = frozenset({"container", "router", "host"})
    connect_hint = "A macvlan segment takes containers, routers and the host; VMs need a macvtap segment."

    def check(self, node: NodeContext[SegmentSettings]) -> Iterable[Problem]:
        yield from super().check(node)
        yield from self._host_reachability(node)

    def _host_reachability(self, node: NodeContext[SegmentSettings]) -> Iterable[Problem]:
        """The host talks to macvlan children only through a macvlan of its own on the same lower (as the
        veth-vs-macvlan experiment found)."""
        host_is_child = any(end.other.kind.name == "host" for end in node.ends)
        if host_is_child:
            return
        if node.settings.lower:
            yield Problem(f"the host cannot reach these containers through {node.settings.lower}: a macvlan never "
                          "passes frames to or from its own lower device. Link a host node to this segment, so the "
                          "host gets a macvlan of its own.", node.subject, "", node.node.id, Severity.WARNING)
            return
        child_networks = {ipaddress.ip_interface(a).network for end in node.ends
                          for a in end.other.end.interface.addresses if "/" in a}
        for host_end in (e for e in node.lab.ends if e.kind.name == "host"):
            for address in host_end.end.interface.addresses:
                if "/" in address and ipaddress.ip_interface(address).network in child_networks:
                    yield Problem(f"the host has {address} on the containers' subnet but is not on this segment. "
                                  "A bridge-mode macvlan child reaches the host only if the host has its own macvlan "
                                  "on the same lower device: link the host node to this segment instead.",
                                  node.subject, "", node.node.id, Severity.WARNING)
                    return


class MacvtapKind(LowerDeviceSegment):
    name = "macvtap"
    name_stem = "mvt"
    label = "macvtap segment"
    description = ("VM NICs as macvtap devices on one lower device, no bridge needed (the tap-vs-macvtap experiment). "
                   "QEMU gets the /dev/tapN of each, and the guest's MAC must equal the macvtap's.")
    child_media = {Role.MACHINE: "macvtap", Role.NAMESPACE: "macvlan"}
    child_word = "macvtap"
    connects_to = frozenset({"vm", "host"})
    connect_hint = ("A macvtap segment takes VM NICs, and the host (which gets a macvlan of its own on the same "
                    "lower device); connect containers to a macvlan segment instead.")
