"""Automatic addressing of a lab's links from its pool (vtopo.model.addressing), with what the lab's kinds say of each
node: which ports hold addresses, which nodes route, and where a node keeps its default gateway."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from vtopo.kinds.contract import LabContext, NodeContext
from vtopo.lab_terms import HostFacts, LabNames
from vtopo.kinds.registry import Registry
from vtopo.model.allocation import NodeRole, Port, allocate
from vtopo.model.topology import Interface, Topology


@dataclass
class AddressEdits:
    """The changes automatic addressing makes: new interfaces by (link id, side), new settings by node id, and why an
    end was left without an address."""

    interfaces: dict[tuple[str, str], Interface] = field(default_factory=dict)
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    shortages: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.interfaces or self.settings)


def address_links(topology: Topology, registry: Registry, link_ids: Iterable[str]) -> AddressEdits:
    """What the lab's pool gives the ends of these links that hold addresses and have none (none for a lab without a
    pool), and the default gateways of the nodes on their LANs that have none."""
    if topology.addressing.empty:
        return AddressEdits()
    settings, _ = registry.check_nodes(topology)
    lab = LabContext(topology, LabNames(topology.prefix), HostFacts())
    roles: dict[str, NodeRole] = {}
    for node in topology.nodes.values():
        kind = registry.get(node.kind)
        if kind is None or node.id not in settings:
            continue
        context = NodeContext(node, kind, settings[node.id], lab)
        takes_gateway = kind.gateway_setting and kind.default_gateways(context) is not None
        roles[node.id] = NodeRole(kind.routes(context),
                                  str(node.settings.get(kind.gateway_setting, "")) if takes_gateway else None)
    ports = []
    for link in topology.links.values():
        for side, end in (("a", link.a), ("b", link.b)):
            kind = registry.get(topology.nodes[end.node].kind)
            holds = kind is not None and kind.ports_take_addresses
            interface = end.interface  # a trunk's end is addressed on its subinterfaces, a DHCP client's by a server
            ports.append(Port(link.id, side, end.node, tuple(interface.addresses),
                              holds and not interface.dhcp and not interface.subinterfaces, kind is not None and not holds))
    allocation = allocate(topology.addressing, ports, roles, list(link_ids))
    edits = AddressEdits(shortages=allocation.shortages)
    for (link_id, side), addresses in allocation.addresses.items():
        interface = getattr(topology.links[link_id], side).interface
        edits.interfaces[(link_id, side)] = replace(interface, addresses=[*interface.addresses, *addresses])
    for node_id, gateway in allocation.gateways.items():
        node = topology.nodes[node_id]
        kind = registry.get(node.kind)
        assert kind is not None  # a node with a role has a kind
        edits.settings[node_id] = {**node.settings, kind.gateway_setting: gateway}
    return edits


def apply_edits(topology: Topology, edits: AddressEdits) -> None:
    """Make the edits on the lab, as `vtopo address` does (the designer makes them as one undo step instead)."""
    for (link_id, side), interface in edits.interfaces.items():
        topology.update_link(link_id, a=interface if side == "a" else None, b=interface if side == "b" else None)
    for node_id, settings in edits.settings.items():
        topology.update_node(node_id, settings=settings)
