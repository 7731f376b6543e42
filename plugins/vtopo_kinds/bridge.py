"""A Linux bridge, optionally numbered (the host gets an address on it, as in the host-networking experiment)."""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any, Iterable

from vtopo.kinds import api
from vtopo.kinds.api import (DEFAULT_VLAN, EndContext, KeepsVlansApart, NodeContext, NodeKind, PortSpec, PortVlans,
                             Problem, ProtectsLoops, Role, Severity, port_vlans, setting)
from vtopo_kinds.vlans import part_settings, vlan_problems, vlans_setting


@dataclass(frozen=True)
class BridgeSettings:
    """A Linux bridge's settings."""

    stp: bool = setting(False, "STP", "Run the spanning tree protocol, to break loops between bridges")
    forward_delay: float = setting(15.0, "Forward delay (s)", "How long a port listens and learns before forwarding; "
                                   "0 forwards at once (the host-networking experiment)", minimum=0, maximum=30)
    ageing: float = setting(300.0, "Ageing time (s)", "How long a learned MAC address is kept", minimum=0,
                            maximum=1_000_000)
    host_addresses: list[str] = setting([], "Host addresses", "Addresses the host gets on this bridge, which makes it "
                                        "a numbered bridge (host-only networking)")
    host_routing: bool = setting(False, "Host routes", "The host forwards IPv4 packets arriving on this bridge, so "
                                 "it routes between its numbered bridges. Only this bridge's own forwarding "
                                 "sysctl is set; the host's global settings are left alone, so IPv6 is not "
                                 "routed.")
    vlans: dict[str, str] = vlans_setting()


class BridgeKind(NodeKind[BridgeSettings], KeepsVlansApart[BridgeSettings], ProtectsLoops[BridgeSettings]):
    name = "bridge"
    label = "Linux bridge"
    description = ("A Linux bridge in the host: a learning switch in the kernel. Give it host addresses to number it. "
                   "Its ports can be access ports or trunks of VLANs where the kernel filters VLANs on bridges.")
    role = Role.SWITCH
    ports = PortSpec("p", 1)
    connects_to = frozenset({"container", "router", "host", "vm", "bridge", "ovs"})
    connect_hint = "Bridges take containers, routers, VMs, the host, and other switches."
    settings_type = BridgeSettings
    name_stem = "br"
    address_hint = "use the bridge's host address setting"

    def protects_loops(self, node: NodeContext[BridgeSettings]) -> bool:
        return node.settings.stp

    def host_addresses(self, node: NodeContext[BridgeSettings]) -> list[str]:
        return list(node.settings.host_addresses)

    def routes(self, node: NodeContext[BridgeSettings]) -> bool:
        return bool(node.settings.host_routing)

    def check(self, node: NodeContext[BridgeSettings]) -> Iterable[Problem]:
        settings = node.settings
        if settings.host_routing and not settings.host_addresses:
            yield Problem("host routing needs a host address on this bridge", node.subject, "", node.node.id)
        if settings.stp and settings.forward_delay < 2:
            yield Problem("with STP on, the kernel needs a forward delay of 2 to 30 s", node.subject,
                          "", node.node.id)
        for address in settings.host_addresses:
            try:
                if "/" not in address:
                    raise ValueError
                version = ipaddress.ip_interface(address).version
            except ValueError:
                yield Problem(f"host address {address!r} must be an address with prefix, e.g. 10.0.1.1/24",
                              node.subject, "", node.node.id)
                continue
            if settings.host_routing and version == 6:
                yield Problem(f"the host routes IPv4 only: Linux forwards IPv6 only with the host's global setting "
                              f"(net.ipv6.conf.all.forwarding), which vtopo leaves alone, so {address} takes no "
                              "IPv6 packet to another segment; put a router node between the segments for IPv6",
                              node.subject, "", node.node.id, Severity.WARNING)
        if settings.vlans and node.facts.probed and not node.facts.bridge_vlans:
            yield Problem("VLANs on a Linux bridge need the kernel's bridge VLAN filtering "
                          "(CONFIG_BRIDGE_VLAN_FILTERING, with 802.1Q), which this kernel does not have: make "
                          f"{node.node.name} an Open vSwitch switch (kind ovs), which does the same VLANs on every host",
                          node.subject, "", node.node.id)
        yield from vlan_problems(node)

    def port_vlans(self, node: NodeContext[BridgeSettings], end: EndContext) -> PortVlans | None:
        return port_vlans(node.settings.vlans, end.end.port)

    def part_settings(self, settings: dict[str, Any], ports: frozenset[str], trunk: str) -> dict[str, Any]:
        return part_settings(settings, ports, trunk)

    def lower(self, node: NodeContext[BridgeSettings]) -> Iterable[api.Op]:
        settings, owner = node.settings, node.subject
        name = node.names.node_device(node.node.name)
        yield api.CreateBridge(owner=owner, name=name, stp=settings.stp, forward_delay_s=settings.forward_delay,
                               ageing_s=settings.ageing, vlan_filtering=bool(settings.vlans))
        yield api.ConfigureLink(owner=owner, name=name, netns=None, alias=node.names.tag)
        for address in settings.host_addresses:
            yield api.AddAddress(owner=owner, name=name, netns=None, cidr=address)
        if settings.host_addresses:
            yield from api.own_arp_only(owner, name)
        if settings.host_routing:
            yield api.SetSysctl(owner=owner, netns=None, key=f"net.ipv4.conf.{name}.forwarding", value="1", device=name)

    def attach(self, node: NodeContext[BridgeSettings], end: EndContext) -> Iterable[api.Op]:
        yield api.SetMaster(owner=node.subject, name=end.device, master=node.names.node_device(node.node.name))
        vlans = self.port_vlans(node, end)
        if vlans is not None and vlans != PortVlans(DEFAULT_VLAN):  # a port joins VLAN 1 untagged by itself
            yield api.SetBridgeVlans(owner=node.subject, name=end.device, untagged=vlans.untagged or 0,
                                     tagged=vlans.tagged)
