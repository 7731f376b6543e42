"""The host itself: its own namespace, as in the seeds' host-to-VM and host-to-container tests."""
from __future__ import annotations

from vtopo.kinds.api import EmptySettings, NodeContext, NodeKind, PortSpec, Role


class HostKind(NodeKind[EmptySettings]):
    name = "host"
    label = "Host"
    description = ("This machine's own network namespace. Its interfaces are created by the lab (prefixed and "
                   "tagged) and removed on destroy; the host's existing interfaces are never touched.")
    role = Role.NAMESPACE
    ports = PortSpec("eth", 0)
    connects_to = frozenset({"bridge", "ovs", "macvlan", "macvtap", "container", "router", "vm"})

    def netns(self, node: NodeContext[EmptySettings]) -> str | None:
        return None
