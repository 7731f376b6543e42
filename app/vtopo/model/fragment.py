"""A fragment of a lab: some nodes, the links between them and some annotations, as copy, paste and duplicate
move them (the GUI puts its text on the clipboard)."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from vtopo.model import io
from vtopo.model.rules import stem_of_name, unique_name
from vtopo.model.topology import Annotation, Endpoint, Link, Node, Position, Topology, new_id


@dataclass
class Fragment:
    """Some nodes, the links between them, and some annotations."""

    nodes: list[Node] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.nodes or self.annotations)

    def centre(self) -> Position:
        """The middle of the nodes' and annotations' positions (where a paste at the cursor puts it)."""
        positions = [n.position for n in self.nodes] + [a.position for a in self.annotations]
        xs, ys = [p.x for p in positions], [p.y for p in positions]
        return Position((min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2)

    def dumps(self) -> str:
        return io.dumps(Topology(name="clipboard", id="clipboard", nodes={n.id: n for n in self.nodes},
                                 links={link.id: link for link in self.links},
                                 annotations={a.id: a for a in self.annotations}))

    @classmethod
    def loads(cls, text: str) -> Fragment:
        """The fragment `text` holds; LabError when it is not a valid lab (clipboard data comes from any program)."""
        topology = io.loads(text)
        return cls(list(topology.nodes.values()), list(topology.links.values()), list(topology.annotations.values()))


def fragment_of(topology: Topology, node_ids: set[str], annotation_ids: set[str]) -> Fragment:
    """A deep copy of the selected nodes and annotations, with every link whose two ends are selected."""
    nodes = [copy.deepcopy(topology.nodes[i]) for i in topology.nodes if i in node_ids]
    links = [copy.deepcopy(link) for link in topology.links.values()
             if link.a.node in node_ids and link.b.node in node_ids]
    annotations = [copy.deepcopy(topology.annotations[i]) for i in topology.annotations if i in annotation_ids]
    return Fragment(nodes, links, annotations)


def instantiate(fragment: Fragment, taken_names: set[str], offset: Position) -> Fragment:
    """Fresh copies with new ids, new unique names and shifted positions, ready to add to a lab."""
    taken = set(taken_names)
    new_ids: dict[str, str] = {}
    nodes = []
    for node in fragment.nodes:
        name = unique_name(stem_of_name(node.name), taken)
        taken.add(name)
        new_ids[node.id] = new_id("node")
        nodes.append(Node(new_ids[node.id], name, node.kind, copy.deepcopy(node.settings),
                          Position(node.position.x + offset.x, node.position.y + offset.y),
                          list(node.startup_commands)))

    def moved(end: Endpoint) -> Endpoint:
        return Endpoint(new_ids[end.node], end.port, copy.deepcopy(end.interface))

    links = [Link(new_id("link"), moved(link.a), moved(link.b), copy.deepcopy(link.impairment))
             for link in fragment.links if link.a.node in new_ids and link.b.node in new_ids]
    annotations = [Annotation(new_id("note"), a.shape, a.text, Position(a.position.x + offset.x,
                                                                         a.position.y + offset.y), a.width, a.height)
                   for a in fragment.annotations]
    return Fragment(nodes, links, annotations)
