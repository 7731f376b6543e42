"""A lab as deployed on this host: its saved topology, recompiled in context, to run commands inside nodes."""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from vtopo.compile.analysis import broadcast_domains, describe_path, path_between
from vtopo.compile.context import EndContext, LabContext, NodeContext
from vtopo.host.state import StateStore
from vtopo.kinds.contract import CannotRunInside, Role
from vtopo.measure.nodes import InNode
from vtopo.lab import context_of
from vtopo.model import io


class NotDeployed(Exception):
    pass


@dataclass
class DeployedLab:
    context: LabContext
    source: str = ""  # the .vtopo file it was deployed from, if any

    @classmethod
    def find(cls, lab: str, store: StateStore | None = None) -> DeployedLab:
        record = (store or StateStore()).find(lab)
        if record is None:
            raise NotDeployed(f"no deployed lab is named {lab!r}; `vtopo status` lists the deployed labs")
        data = record.read()
        return cls(context_of(io.from_document(data["topology"]), record.facts()), data.get("source", ""))

    def node(self, name: str) -> NodeContext:
        node = self.context.node_named(name)
        if node is None:
            names = ", ".join(sorted(n.node.name for n in self.context.nodes.values()))
            raise NotDeployed(f"lab {self.context.topology.name} has no node {name!r} (it has: {names})")
        return node

    def command_in(self, name: str, argv: list[str]) -> list[str]:
        node = self.node(name)
        return node.kind.command_in(node, argv)

    def measurable(self) -> list[tuple[str, InNode, list[str]]]:
        """Each node a measurement can run in: its name, how to run a command there, its addresses."""
        targets = []
        for node in self.context.nodes.values():
            try:
                node.kind.command_in(node, ["true"])
            except CannotRunInside:
                continue
            if node.kind.role is not Role.NAMESPACE:
                continue
            addresses = [str(ipaddress.ip_interface(a).ip) for end in node.ends for a in end.end.interface.addresses]
            targets.append((node.node.name, _bound(node), addresses))
        return targets

    def in_node(self, name: str) -> InNode:
        """How to run a command in a node; raises CannotRunInside for nodes without a place to run it."""
        node = self.node(name)
        node.kind.command_in(node, ["true"])
        return _bound(node)

    def path(self, source: str, destination: str) -> str:
        return describe_path(self.context, self.node(source).node.id, self.node(destination).node.id)

    def path_links(self, source: str, destination: str) -> list[str]:
        return [end.link.id for end in path_between(self.context, self.node(source).node.id,
                                                     self.node(destination).node.id)]

    def target_address(self, source: str, destination: str) -> tuple[str, str]:
        """The address of `destination` to aim at from `source`, and how it is reached ("same segment"/"routed").

        Prefer an address on a segment both share (no router in between); otherwise the destination's first IPv4.
        """
        src, dst = self.node(source), self.node(destination)
        for domain in broadcast_domains(self.context):
            if any(e.node.id == src.node.id for e in domain):
                for end in domain:
                    if end.node.id == dst.node.id and end.end.interface.addresses:
                        return _ip(end), "same segment"
        for end in dst.ends:
            if end.end.interface.addresses:
                return _ip(end), "routed"
        raise NotDeployed(f"{destination} has no IP address to reach")


def _bound(node: NodeContext) -> InNode:
    return lambda argv: node.kind.command_in(node, argv)


def _ip(end: EndContext) -> str:
    return str(ipaddress.ip_interface(end.end.interface.addresses[0]).ip)
