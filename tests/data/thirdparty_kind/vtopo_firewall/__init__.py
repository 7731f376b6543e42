"""A third-party node kind, as someone else would ship it: a namespace that forwards and filters."""
from dataclasses import dataclass

from vtopo.kinds import api
from vtopo.kinds.api import NodeKind, PortSpec, Role, setting


@dataclass(frozen=True)
class FirewallSettings:
    policy: str = setting("drop", "Default policy", choices=("drop", "accept"))


class FirewallKind(NodeKind):
    name = "firewall"
    label = "Firewall"
    description = "A forwarding namespace with a default policy (a third-party plugin)."
    role = Role.NAMESPACE
    ports = PortSpec("eth", 0)
    connects_to = frozenset({"container", "bridge", "firewall"})
    settings_type = FirewallSettings

    def lower(self, node):  # vtopo makes the node's namespaces: a namespace kind configures what is inside
        yield api.SetSysctl(owner=node.subject, netns=self.netns(node), key="net.ipv4.ip_forward", value="1")
