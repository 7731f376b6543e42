"""A container: a network namespace with interfaces, routes and sysctls (the veth-vs-macvlan experiment)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from vtopo.kinds.api import (AddRoute, CreateNamespace, EndContext, NodeContext, NodeKind, Op, PortSpec, Problem,
                             Reader, Role, SavedState, SetSysctl, setting)
from vtopo_kinds.common import check_gateway, check_route, kernel_addresses, kernel_routes


@dataclass(frozen=True)
class ContainerSettings:
    default_route: str = setting("", "Default gateway", "Next hop for the default route, e.g. 10.0.1.1")
    routes: list[str] = setting([], "Routes", "One per line, e.g. 10.9.0.0/16 via 10.0.1.1 or 2001:db8:9::/48 via "
                                "2001:db8:1::1")
    sysctls: dict[str, str] = setting({}, "sysctls", "Namespace sysctls, e.g. net.ipv4.ip_forward = 1")


class ContainerKind(NodeKind[ContainerSettings]):
    name = "container"
    label = "Container"
    description = "A network namespace, like a container without a filesystem: interfaces, routes, sysctls."
    role = Role.NAMESPACE
    ports = PortSpec("eth", 0)
    connects_to = frozenset({"bridge", "ovs", "macvlan", "container", "router", "host"})
    connect_hint = "Containers join bridges, OVS switches, macvlan segments, routers, the host or each other."
    settings_type = ContainerSettings
    name_stem = "c"

    def device_name(self, node: NodeContext[ContainerSettings], end: EndContext) -> str:
        return end.end.interface.name or end.end.port

    def default_gateway(self, node: NodeContext[ContainerSettings]) -> str | None:
        return str(node.settings.default_route)

    def check(self, node: NodeContext[ContainerSettings]) -> Iterable[Problem]:
        yield from check_gateway(node, node.settings.default_route, "Default gateway")
        for route in node.settings.routes:
            yield from check_route(node, route)
        for key in node.settings.sysctls:
            if not key.startswith("net."):
                yield Problem(f"sysctl {key} is not per-namespace (only net.* sysctls are); setting it would change "
                              "the whole host", node.subject, subject_id=node.node.id)

    def lower(self, node: NodeContext[ContainerSettings]) -> Iterable[Op]:
        netns = node.names.netns(node.node.name)
        owner = node.subject
        yield CreateNamespace(owner=owner, name=netns)
        for key, value in sorted(node.settings.sysctls.items()):
            yield SetSysctl(owner=owner, netns=netns, key=key, value=value)
        if node.settings.default_route:
            yield AddRoute(owner=owner, netns=netns, destination="default", gateway=node.settings.default_route)
        for route in node.settings.routes:
            destination, _, gateway = route.partition(" via ")
            yield AddRoute(owner=owner, netns=netns, destination=destination.strip(), gateway=gateway.strip())

    def saved_state(self, node: NodeContext[ContainerSettings], read: Reader) -> SavedState:
        """The addresses on its ports and the routes students add with `ip`; the IPv4 default is its gateway."""
        routes = kernel_routes(read)
        default = next((gateway for destination, gateway in routes if destination == "default"), "")
        return SavedState(settings={"default_route": default,
                                    "routes": [f"{destination} via {gateway}" for destination, gateway in routes
                                               if destination != "default"]},
                          addresses=kernel_addresses(node, read))
