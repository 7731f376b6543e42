"""An Open vSwitch bridge with optional OpenFlow rules (the OVS vhost-user experiment)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from vtopo.kinds import api
from vtopo.kinds.api import (MAX_INTERFACE_NAME, SWITCH_PORT, EndContext, ForwardsInUserspace, KeepsVlansApart,
                             MakesTaggedPorts, NodeContext, NodeKind, PortSpec, PortVlans, Problem, Role,
                             RoutesBetweenVlans, Severity, port_vlans, setting, subinterface_name, svi_name)
from vtopo_kinds.vlans import part_settings, svi_problems, svi_vlans, svis_setting, vlan_problems, vlans_setting

PORT_REFERENCE = re.compile(r"(?:in_port=|output:)(\d+)")
SUBINTERFACE_OFPORTS = 1000  # the OpenFlow port of the first internal port made as a node's subinterface
SVI_OFPORTS = 2000  # the OpenFlow port of the switch's first VLAN interface


@dataclass(frozen=True)
class OvsSettings:
    datapath: str = setting("auto", "Datapath", "system: the kernel module. netdev: userspace. auto: the kernel "
                            "module when it is there, otherwise netdev.", choices=("auto", "system", "netdev"))
    fail_mode: str = setting("standalone", "Fail mode", "standalone: a learning switch until rules say otherwise. "
                             "secure: only the OpenFlow rules forward.", choices=("standalone", "secure"))
    ports: str = setting("internal", "Port type", "How the userspace (netdev) datapath reaches containers and "
                         "routers. internal: OVS's own port device (a tap it reads with virtio-net headers), moved "
                         "into the node as its interface: ten times or more the TCP throughput of system, no "
                         "retransmits. system: a veth pair, OVS reading its host end with a packet socket. afxdp: a "
                         "veth read with AF_XDP, about 75 MB of memory per port. A link with an impairment, and a VM's "
                         "port, are always system.", choices=("internal", "system", "afxdp"))
    flows: list[str] = setting([], "OpenFlow rules", "One rule per line, e.g. in_port=1,actions=output:3. Port "
                               "p1 is OpenFlow port 1.")
    vlans: dict[str, str] = vlans_setting()
    svis: dict[str, str] = svis_setting()


def vlan_columns(vlans: PortVlans | None) -> tuple[str, int, tuple[int, ...]]:
    """The vlan_mode, tag and trunks of an OVS port with these VLANs: an access port is tagged with its VLAN, a trunk
    lists its VLANs, and a trunk's native VLAN is its tag, sent untagged."""
    if vlans is None:
        return "", 0, ()
    if not vlans.trunk:
        return api.OvsVlanMode.ACCESS, vlans.untagged or 0, ()
    if vlans.untagged is None:
        return api.OvsVlanMode.TRUNK, 0, vlans.tagged
    return api.OvsVlanMode.NATIVE_UNTAGGED, vlans.untagged, vlans.tagged


class OvsKind(NodeKind[OvsSettings], KeepsVlansApart[OvsSettings], RoutesBetweenVlans[OvsSettings],
               MakesTaggedPorts[OvsSettings], ForwardsInUserspace[OvsSettings]):
    name = "ovs"
    label = "Open vSwitch"
    description = ("An Open vSwitch bridge. Port pN is OpenFlow port N, so rules like in_port=1,actions=output:3 work. "
                   "Its ports can be access ports or trunks of VLANs, on every host.")
    role = Role.SWITCH
    ports = PortSpec("p", 1)
    connects_to = frozenset({"container", "router", "host", "vm", "bridge", "ovs"})
    connect_hint = "OVS switches take containers, routers, VMs, the host, and other switches."
    settings_type = OvsSettings

    def datapath(self, node: NodeContext[OvsSettings]) -> str:
        chosen = node.settings.datapath
        return node.facts.ovs_datapath if chosen == "auto" else chosen

    def leaves_checksums_partial(self, node: NodeContext[OvsSettings]) -> bool:
        return self.datapath(node) == "netdev"

    def makes_namespace_ports(self, node: NodeContext[OvsSettings]) -> bool:
        return node.settings.ports == api.INTERNAL_PORT and self.datapath(node) == "netdev"

    def port_type(self, node: NodeContext[OvsSettings]) -> str:
        """The OVS interface type of a namespace's veth port: "" (system) unless AF_XDP was chosen on netdev.
        afxdp-nonpmd is polled by ovs-vswitchd's main thread, so no PMD thread spins a core."""
        return "afxdp-nonpmd" if node.settings.ports == "afxdp" and self.datapath(node) == "netdev" else ""

    def check(self, node: NodeContext[OvsSettings]) -> Iterable[Problem]:
        settings = node.settings
        if settings.datapath == "system" and node.facts.ovs_datapath != "system":
            yield Problem("datapath system needs the openvswitch kernel module, which this host does not have; "
                          "use auto or netdev", node.subject, "", node.node.id)
        if self.datapath(node) == "netdev" and node.facts.ovs_tso_off:
            yield Problem("the Open vSwitch running on this host, which vtopo did not start, has userspace TSO off: "
                          "TCP through this switch runs at about a sixth of its speed (1.6 against 10 Gb/s between "
                          "two containers, measured on a 2-core host). Run `ovs-vsctl set Open_vSwitch . "
                          "other_config:userspace-tso-enable=true` and restart ovs-vswitchd, or stop that Open "
                          "vSwitch so that vtopo starts its own", node.subject, "", node.node.id, Severity.WARNING)
        if settings.ports == "afxdp" and self.datapath(node) != "netdev":
            yield Problem("port type afxdp applies to the userspace (netdev) datapath only; these ports stay system",
                          node.subject, "", node.node.id, Severity.WARNING)
        linked = {self.ports.index_of(end.end.port) for end in node.ends}
        for flow in settings.flows:
            if "actions=" not in flow:
                yield Problem(f"OpenFlow rule {flow!r} has no actions=...", node.subject, "", node.node.id)
            for port in PORT_REFERENCE.findall(flow):
                if int(port) not in linked:
                    yield Problem(f"OpenFlow rule {flow!r} names port {port}, but p{port} has no link",
                                  node.subject, "", node.node.id, Severity.WARNING)
        if settings.fail_mode == "secure" and not settings.flows:
            yield Problem("fail mode secure with no OpenFlow rules forwards nothing", node.subject, "", node.node.id,
                          Severity.WARNING)
        if settings.flows and settings.vlans:
            yield Problem("with OpenFlow rules, the VLANs per port apply only to what a rule sends with "
                          "actions=normal", node.subject, "", node.node.id, Severity.WARNING)
        yield from vlan_problems(node)
        yield from svi_problems(node)
        for vlan in self.vlan_interfaces(node):
            port = self.svi_port(node, vlan)
            if len(port) > MAX_INTERFACE_NAME:
                yield Problem(f"its interface in VLAN {vlan} would be named {port!r} in the host's namespace "
                              f"({len(port)} characters; the kernel allows {MAX_INTERFACE_NAME}). Use a shorter node "
                              "name", node.subject, "", node.node.id)

    def vlan_interfaces(self, node: NodeContext[OvsSettings]) -> dict[int, tuple[str, ...]]:
        return svi_vlans(node.settings.svis)

    def own_namespace(self, node: NodeContext[OvsSettings]) -> str | None:
        return node.names.netns(node.node.name) if node.settings.svis else None

    def svi_port(self, node: NodeContext[OvsSettings], vlan: int) -> str:
        """The internal port that becomes the switch's interface in VLAN `vlan`, while it is in the host's
        namespace."""
        return node.names.host_device(node.node.name, svi_name(vlan))

    def port_vlans(self, node: NodeContext[OvsSettings], end: EndContext) -> PortVlans | None:
        return port_vlans(node.settings.vlans, end.end.port)

    def part_settings(self, settings: dict[str, Any], ports: frozenset[str], trunk: str) -> dict[str, Any]:
        return part_settings(settings, ports, trunk)

    def tagged_port(self, node: NodeContext[OvsSettings], end: EndContext, vlan: int, name: str, owner: str
                    ) -> Iterable[api.Op]:
        """An internal port in VLAN `vlan`, numbered after the switch's own ports (OpenFlow port 1000 and up), named
        after the port it stands beside until it is moved into the node."""
        index = [(e.end.port, sub.vlan) for e in node.ends if e.peer for sub in e.peer.end.interface.subinterfaces
                 ].index((end.end.port, vlan))
        port = self.subinterface_port(node, end, vlan)
        yield api.OvsAddSubinterface(owner=owner, bridge=node.names.node_device(node.node.name), lab=node.names.prefix,
                                     name=port, ofport=SUBINTERFACE_OFPORTS + index, tag=vlan, subinterface=name)
        if end.other.netns is not None:
            yield api.MoveLink(owner=owner, name=port, netns=end.other.netns, new_name=name)

    def subinterface_port(self, node: NodeContext[OvsSettings], end: EndContext, vlan: int) -> str:
        """The name of the internal port that becomes a subinterface, while it is in the host's namespace: the
        subinterface's own name when it stays there (a host node's)."""
        if end.other.netns is None:
            return subinterface_name(end.other.device, vlan)
        return node.names.host_device(node.node.name, subinterface_name(end.end.port, vlan))

    def joins_ports(self, node: NodeContext[OvsSettings]) -> bool:
        return not node.settings.flows

    def limitations(self, node: NodeContext[OvsSettings]) -> Iterable[str]:
        if self.datapath(node) != "system":
            yield (f"OVS forwards on its userspace ({self.datapath(node)}) datapath: this host has no openvswitch "
                   "kernel module")
        if not node.facts.ovs_dpdk:
            yield ("no vhost-user: this host's OVS has no DPDK datapath and no hugepages for it, so QEMU cannot be "
                   "attached by dpdkvhostuser ports; the same flow rules are measured between containers")

    def lower(self, node: NodeContext[OvsSettings]) -> Iterable[api.Op]:
        bridge = node.names.node_device(node.node.name)
        yield api.OvsAddBridge(owner=node.subject, name=bridge, datapath=self.datapath(node),
                               fail_mode=node.settings.fail_mode, lab=node.names.prefix)
        yield from self._svis(node, bridge)
        if node.settings.flows:
            ports = sorted({int(p) for flow in node.settings.flows for p in PORT_REFERENCE.findall(flow)
                            if int(p) in {self.ports.index_of(e.end.port) for e in node.ends}})
            yield api.OvsAddFlows(owner=node.subject, bridge=bridge, flows=tuple(node.settings.flows),
                                  ports=tuple(ports))

    def _svis(self, node: NodeContext[OvsSettings], bridge: str) -> Iterable[api.Op]:
        """The switch's interface in each VLAN: an internal port, an access port of the VLAN, moved into a namespace
        of the switch's own (in the lab's user namespace where it has one) that forwards IP between them."""
        netns = self.own_namespace(node)
        if netns is None:
            return
        owner, userns = node.subject, node.lab.user_namespace
        yield api.CreateNamespace(owner=owner, name=netns, userns=userns)
        yield api.SetSysctl(owner=owner, netns=netns, key="net.ipv4.ip_forward", value="1", userns=userns)
        yield api.SetSysctl(owner=owner, netns=netns, key="net.ipv6.conf.all.forwarding", value="1", userns=userns)
        # no duplicate address detection on the interfaces that come: until it ends, about a second after an
        # interface comes up, the kernel cannot ask for a neighbour of a packet it forwards (no usable link-local)
        yield api.SetSysctl(owner=owner, netns=netns, key="net.ipv6.conf.default.accept_dad", value="0",
                            userns=userns)
        for index, (vlan, addresses) in enumerate(sorted(self.vlan_interfaces(node).items())):
            port, name = self.svi_port(node, vlan), svi_name(vlan)
            yield api.OvsAddPort(owner=owner, bridge=bridge, name=port, ofport=SVI_OFPORTS + index,
                                 lab=node.names.prefix, port_type=api.INTERNAL_PORT,
                                 vlan_mode=api.OvsVlanMode.ACCESS, tag=vlan)
            yield api.MoveLink(owner=owner, name=port, netns=netns, new_name=name)
            yield api.ConfigureLink(owner=owner, name=name, netns=netns, up=True)
            for address in addresses:
                yield api.AddAddress(owner=owner, name=name, netns=netns, cidr=address)

    def attach(self, node: NodeContext[OvsSettings], end: EndContext) -> Iterable[api.Op]:
        bridge = node.names.node_device(node.node.name)
        ofport = self.ports.index_of(end.end.port)
        assert ofport is not None
        vlan_mode, tag, trunks = vlan_columns(self.port_vlans(node, end))
        if end.medium == SWITCH_PORT:  # OVS makes the port; it becomes the node's interface
            port = node.names.host_device(node.node.name, end.end.port)
            yield api.OvsAddPort(owner=node.subject, bridge=bridge, name=port, ofport=ofport, lab=node.names.prefix,
                                 port_type=api.INTERNAL_PORT, vlan_mode=vlan_mode, tag=tag, trunks=trunks)
            assert end.other.netns is not None
            yield api.MoveLink(owner=node.subject, name=port, netns=end.other.netns, new_name=end.other.device)
            return
        to_namespace = end.medium == "veth" and end.other.kind.role is Role.NAMESPACE
        yield api.OvsAddPort(owner=node.subject, bridge=bridge, name=end.device, ofport=ofport, lab=node.names.prefix,
                             port_type=self.port_type(node) if to_namespace else "", vlan_mode=vlan_mode, tag=tag,
                             trunks=trunks)
        if self.leaves_checksums_partial(node) and to_namespace:
            yield api.SetTxChecksum(owner=node.subject, name=end.other.device, netns=end.other.netns, enabled=False)
