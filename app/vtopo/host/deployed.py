"""A lab as deployed on this host: its saved topology, recompiled in context, to run commands inside nodes."""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from vtopo.compile.analysis import broadcast_domains
from vtopo.compile.context import EndContext, LabContext, NodeContext
from vtopo.host.state import StateStore
from vtopo.lab import context_of
from vtopo.model import io


class NotDeployed(Exception):
    pass


@dataclass
class DeployedLab:
    context: LabContext

    @classmethod
    def find(cls, lab: str, store: StateStore | None = None) -> DeployedLab:
        record = (store or StateStore()).find(lab)
        if record is None:
            raise NotDeployed(f"no deployed lab is named {lab!r}; `vtopo status` lists the deployed labs")
        data = record.read()
        return cls(context_of(io.from_document(data["topology"]), record.facts()))

    def node(self, name: str) -> NodeContext:
        node = self.context.node_named(name)
        if node is None:
            names = ", ".join(sorted(n.node.name for n in self.context.nodes.values()))
            raise NotDeployed(f"lab {self.context.topology.name} has no node {name!r} (it has: {names})")
        return node

    def command_in(self, name: str, argv: list[str]) -> list[str]:
        node = self.node(name)
        return node.kind.command_in(node, argv)

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


def _ip(end: EndContext) -> str:
    return str(ipaddress.ip_interface(end.end.interface.addresses[0]).ip)
