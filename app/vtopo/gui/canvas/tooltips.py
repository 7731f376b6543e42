"""What a node's or a link's tooltip says. Built when the tooltip is asked for, not on every edit."""
from __future__ import annotations

from html import escape

from vtopo.gui.canvas.labels import format_rate, impairment_label
from vtopo.gui.canvas.states import NodeState
from vtopo.model.topology import Endpoint, Topology
from vtopo.reports import LinkRate


def _end_text(topology: Topology, end: Endpoint) -> str:
    node = topology.nodes.get(end.node)
    name = node.name if node is not None else end.node
    interface = end.interface.name or end.port
    port = f"{interface} (port {end.port})" if interface != end.port else end.port
    addresses = ", ".join(end.interface.addresses) or "no address"
    return f"<b>{escape(name)}</b> {escape(port)}: {escape(addresses)}"


def link_tooltip(topology: Topology, link_id: str, fault: str = "", traffic: LinkRate | None = None) -> str:
    link = topology.links[link_id]
    lines = [_end_text(topology, link.a), _end_text(topology, link.b)]
    if fault:
        lines.append(f"<b>{escape(fault)}</b>")
    if traffic is not None:
        lines.append(f"traffic: {format_rate(traffic.bits_per_second)}, {traffic.packets_per_second:,.0f} packets/s")
    impairment = impairment_label(link.impairment)
    lines.append(f"impairment: {escape(impairment)}" if impairment else "no impairment")
    return "<br>".join(lines)


def node_tooltip(topology: Topology, node_id: str, kind_label: str, state: NodeState) -> str:
    node = topology.nodes[node_id]
    lines = [f"<b>{escape(node.name)}</b> ({escape(kind_label)}), {state.value}"]
    for link in topology.links_of(node_id):
        own, peer = (link.a, link.b) if link.a.node == node_id else (link.b, link.a)
        peer_node = topology.nodes.get(peer.node)
        peer_name = peer_node.name if peer_node is not None else peer.node
        addresses = ", ".join(own.interface.addresses) or "no address"
        lines.append(f"{escape(own.interface.name or own.port)} → {escape(peer_name)} {escape(peer.port)}: "
                     f"{escape(addresses)}")
    if len(lines) == 1:
        lines.append("no links")
    return "<br>".join(lines)
