"""An Open vSwitch bridge with optional OpenFlow rules (the OVS vhost-user experiment)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from vtopo.kinds.api import (INTERNAL_PORT, SWITCH_PORT, EndContext, MoveLink, NodeContext, NodeKind, Op, OvsAddBridge,
                             OvsAddFlows, OvsAddPort, OvsVlanMode, PortSpec, PortVlans, Problem, Role, SetTxChecksum,
                             Severity, port_vlans, setting)
from vtopo_kinds.vlans import part_settings, vlan_problems, vlans_setting

PORT_REFERENCE = re.compile(r"(?:in_port=|output:)(\d+)")


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


def vlan_columns(vlans: PortVlans | None) -> tuple[str, int, tuple[int, ...]]:
    """The vlan_mode, tag and trunks of an OVS port with these VLANs: an access port is tagged with its VLAN, a trunk
    lists its VLANs, and a trunk's native VLAN is its tag, sent untagged."""
    if vlans is None:
        return "", 0, ()
    if not vlans.trunk:
        return OvsVlanMode.ACCESS, vlans.untagged or 0, ()
    if vlans.untagged is None:
        return OvsVlanMode.TRUNK, 0, vlans.tagged
    return OvsVlanMode.NATIVE_UNTAGGED, vlans.untagged, vlans.tagged


class OvsKind(NodeKind[OvsSettings]):
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
        return node.settings.ports == INTERNAL_PORT and self.datapath(node) == "netdev"

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

    def port_vlans(self, node: NodeContext[OvsSettings], end: EndContext) -> PortVlans | None:
        return port_vlans(node.settings.vlans, end.end.port)

    def part_settings(self, settings: dict[str, Any], ports: frozenset[str], trunk: str) -> dict[str, Any]:
        return part_settings(settings, ports, trunk)

    def joins_ports(self, node: NodeContext[OvsSettings]) -> bool:
        return not node.settings.flows

    def limitations(self, node: NodeContext[OvsSettings]) -> Iterable[str]:
        if self.datapath(node) != "system":
            yield (f"OVS forwards on its userspace ({self.datapath(node)}) datapath: this host has no openvswitch "
                   "kernel module")
        if not node.facts.ovs_dpdk:
            yield ("no vhost-user: this host's OVS has no DPDK datapath and no hugepages for it, so QEMU cannot be "
                   "attached by dpdkvhostuser ports; the same flow rules are measured between containers")

    def lower(self, node: NodeContext[OvsSettings]) -> Iterable[Op]:
        bridge = node.names.node_device(node.node.name)
        yield OvsAddBridge(owner=node.subject, name=bridge, datapath=self.datapath(node),
                           fail_mode=node.settings.fail_mode, lab=node.names.prefix)
        if node.settings.flows:
            ports = sorted({int(p) for flow in node.settings.flows for p in PORT_REFERENCE.findall(flow)
                            if int(p) in {self.ports.index_of(e.end.port) for e in node.ends}})
            yield OvsAddFlows(owner=node.subject, bridge=bridge, flows=tuple(node.settings.flows), ports=tuple(ports))

    def attach(self, node: NodeContext[OvsSettings], end: EndContext) -> Iterable[Op]:
        bridge = node.names.node_device(node.node.name)
        ofport = self.ports.index_of(end.end.port)
        assert ofport is not None
        vlan_mode, tag, trunks = vlan_columns(self.port_vlans(node, end))
        if end.medium == SWITCH_PORT:  # OVS makes the port; it becomes the node's interface
            port = node.names.host_device(node.node.name, end.end.port)
            yield OvsAddPort(owner=node.subject, bridge=bridge, name=port, ofport=ofport, lab=node.names.prefix,
                             port_type=INTERNAL_PORT, vlan_mode=vlan_mode, tag=tag, trunks=trunks)
            assert end.other.netns is not None
            yield MoveLink(owner=node.subject, name=port, netns=end.other.netns, new_name=end.other.device)
            return
        to_namespace = end.medium == "veth" and end.other.kind.role is Role.NAMESPACE
        yield OvsAddPort(owner=node.subject, bridge=bridge, name=end.device, ofport=ofport, lab=node.names.prefix,
                         port_type=self.port_type(node) if to_namespace else "", vlan_mode=vlan_mode, tag=tag,
                         trunks=trunks)
        if self.leaves_checksums_partial(node) and to_namespace:
            yield SetTxChecksum(owner=node.subject, name=end.other.device, netns=end.other.netns, enabled=False)
