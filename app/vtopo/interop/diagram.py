"""A lab as a diagram for handouts: draw.io (diagrams.net) and Graphviz dot, each keeping the canvas's positions, the
nodes' names and kinds, each end's addresses and each switch port's VLANs.

draw.io opens the uncompressed `.drawio` file (an mxGraphModel, written with ElementTree) with every node where the
canvas has it; Graphviz draws the `.dot` file (written with the `graphviz` package) with each node pinned at its
position by `neato`, or laid out anew by `dot`.
"""
from __future__ import annotations

from dataclasses import dataclass
from xml.etree import ElementTree

import graphviz

from vtopo.model.topology import Endpoint, Link, Node, Topology

NODE_SIZE = 60  # draw.io's side of a node's square, in canvas units
POINTS_PER_INCH = 72  # Graphviz positions nodes in points
SWITCH_KINDS = ("bridge", "ovs")
DRAWIO_STYLES = {"router": "ellipse", "bridge": "rounded=0", "ovs": "rounded=0", "vm": "shape=cube"}
DOT_SHAPES = {"router": "ellipse", "bridge": "box", "ovs": "box", "vm": "box3d"}  # others: a rounded box


@dataclass(frozen=True)
class EndText:
    """What a diagram writes at one end of a link: the port and its addresses, or the switch port's VLANs."""

    port: str
    details: tuple[str, ...]

    def __str__(self) -> str:
        return "\n".join((self.port, *self.details))


def end_text(topology: Topology, end: Endpoint) -> EndText:
    node = topology.nodes[end.node]
    vlans = node.settings.get("vlans") or {}
    details = tuple(end.interface.addresses)
    if node.kind in SWITCH_KINDS and end.port in vlans:
        details += (str(vlans[end.port]),)
    return EndText(end.port, details)


def node_text(node: Node) -> str:
    return f"{node.name}\n({node.kind})"


def to_drawio(topology: Topology) -> str:
    """The lab as a draw.io diagram: one page named after the lab, a vertex per node at its canvas position, an edge
    per link with each end's text beside it."""
    document = ElementTree.Element("mxfile", {"host": "vtopo"})
    page = ElementTree.SubElement(document, "diagram", {"id": topology.id, "name": topology.name})
    model = ElementTree.SubElement(page, "mxGraphModel", {"grid": "1", "gridSize": "10"})
    root = ElementTree.SubElement(model, "root")
    ElementTree.SubElement(root, "mxCell", {"id": "0"})
    ElementTree.SubElement(root, "mxCell", {"id": "1", "parent": "0"})
    for node in topology.nodes.values():
        style = DRAWIO_STYLES.get(node.kind, "rounded=1")
        cell = ElementTree.SubElement(root, "mxCell", {"id": f"node-{node.id}", "value": node_text(node),
                                                       "vertex": "1", "parent": "1",
                                                       "style": f"{style};whiteSpace=wrap;html=0;"})
        ElementTree.SubElement(cell, "mxGeometry", {"x": str(node.position.x - NODE_SIZE / 2),
                                                    "y": str(node.position.y - NODE_SIZE / 2),
                                                    "width": str(NODE_SIZE), "height": str(NODE_SIZE),
                                                    "as": "geometry"})
    for link in topology.links.values():
        _drawio_link(root, topology, link)
    ElementTree.indent(document)
    return ElementTree.tostring(document, encoding="unicode") + "\n"


def _drawio_link(root: ElementTree.Element, topology: Topology, link: Link) -> None:
    ElementTree.SubElement(ElementTree.SubElement(root, "mxCell", {
        "id": f"link-{link.id}", "value": "", "edge": "1", "parent": "1", "source": f"node-{link.a.node}",
        "target": f"node-{link.b.node}", "style": "endArrow=none;html=0;"}), "mxGeometry",
        {"relative": "1", "as": "geometry"})
    for end, along in ((link.a, "-0.7"), (link.b, "0.7")):  # along the edge, from its middle (-1 to 1)
        label = ElementTree.SubElement(root, "mxCell", {
            "id": f"link-{link.id}-{end.node}-{end.port}", "value": str(end_text(topology, end)), "vertex": "1",
            "connectable": "0", "parent": f"link-{link.id}", "style": "edgeLabel;html=0;fontSize=9;"})
        geometry = ElementTree.SubElement(label, "mxGeometry", {"x": along, "relative": "1", "as": "geometry"})
        ElementTree.SubElement(geometry, "mxPoint", {"as": "offset"})


def to_dot(topology: Topology) -> str:
    """The lab as a Graphviz graph: each node pinned at its canvas position (y grows upwards in Graphviz), each
    link's ends labelled with their ports, addresses and VLANs."""
    name = graphviz.nohtml(topology.name)  # a name in <...> would otherwise be read as an HTML-like label
    graph = graphviz.Graph(name, graph_attr={"label": name, "fontsize": "10"},
                           node_attr={"fontsize": "10"}, edge_attr={"fontsize": "8"})
    for node in topology.nodes.values():
        position = f"{node.position.x / POINTS_PER_INCH:g},{-node.position.y / POINTS_PER_INCH:g}!"
        graph.node(node.id, node_text(node), shape=DOT_SHAPES.get(node.kind, "box"), pos=position,
                   **({} if node.kind in DOT_SHAPES else {"style": "rounded"}))
    for link in topology.links.values():
        graph.edge(link.a.node, link.b.node, taillabel=str(end_text(topology, link.a)),
                   headlabel=str(end_text(topology, link.b)), id=link.id)
    return graph.source
