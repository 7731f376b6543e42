"""A container: network, mount and UTS namespaces of its own (vtopo makes those for every node with a namespace), with
interfaces, routes and sysctls (the veth-vs-macvlan experiment)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from vtopo.kinds import api
from vtopo.kinds.api import (EndContext, FileReader, NodeContext, NodeKind, PortSpec, Problem, Reader, Role,
                             RunsAsContainer, SavesState, ServesDhcp, setting)
from vtopo_kinds import dhcp
from vtopo_kinds.common import (GATEWAY6_HELP, KERNEL_STATE, check_default_routes, check_route, cpu_setting,
                                disk_setting, gateway_route, image_setting, kernel_addresses, kernel_routes,
                                memory_setting, node_image)


@dataclass(frozen=True)
class ContainerSettings:
    """A container's settings."""

    default_route: str = setting("", "Default gateway", "Next hop for the default route, e.g. 10.0.1.1")
    default_route6: str = setting("", "IPv6 default gateway", GATEWAY6_HELP)
    routes: list[str] = setting([], "Routes", "One per line, e.g. 10.9.0.0/16 via 10.0.1.1 or 2001:db8:9::/48 via "
                                "2001:db8:1::1")
    sysctls: dict[str, str] = setting({}, "sysctls", "Namespace sysctls, e.g. net.ipv4.ip_forward = 1")
    dhcp_pools: list[str] = setting([], "DHCP server pools", dhcp.POOLS_HELP)
    image: str = image_setting("vtopo/toolbox")
    memory_mb: int = memory_setting()
    cpu_percent: int = cpu_setting()
    disk_mb: int = disk_setting()


class ContainerKind(NodeKind[ContainerSettings], RunsAsContainer[ContainerSettings], ServesDhcp[ContainerSettings],
                    SavesState[ContainerSettings]):
    name = "container"
    label = "Container"
    description = ("A lightweight container: its own network, hostname, /etc/hosts and /tmp, sharing the host's "
                   "programs: interfaces, routes, sysctls.")
    role = Role.NAMESPACE
    gateway_setting = "default_route"
    ports = PortSpec("eth", 0)
    dhcp_client = True
    connects_to = frozenset({"bridge", "ovs", "macvlan", "container", "router", "host"})
    connect_hint = "Containers join bridges, OVS switches, macvlan segments, routers, the host or each other."
    settings_type = ContainerSettings
    name_stem = "c"

    def device_name(self, node: NodeContext[ContainerSettings], end: EndContext) -> str:
        return end.end.interface.name or end.end.port

    def own_files(self, node: NodeContext[ContainerSettings]) -> api.NodeFiles:
        return api.NodeFiles(dhcp.binds(node, node.settings.dhcp_pools, {}))

    def image(self, node: NodeContext[ContainerSettings]) -> api.NodeImage | None:
        settings = node.settings
        return node_image(settings.image, settings.memory_mb, settings.cpu_percent, settings.disk_mb)

    def dhcp_service(self, node: NodeContext[ContainerSettings], end: EndContext) -> str:
        return dhcp.service(node, end, node.settings.dhcp_pools, {})

    def status_detail(self, node: NodeContext[ContainerSettings], read_file: FileReader) -> str:
        return dhcp.leases(node, node.settings.dhcp_pools, read_file)

    def default_gateways(self, node: NodeContext[ContainerSettings]) -> list[str]:
        return [gateway for gateway in (node.settings.default_route, node.settings.default_route6) if gateway]

    def check(self, node: NodeContext[ContainerSettings]) -> Iterable[Problem]:
        yield from check_default_routes(node, node.settings.default_route, node.settings.default_route6)
        for route in node.settings.routes:
            yield from check_route(node, route)
        for key in node.settings.sysctls:
            if not key.startswith("net."):
                yield Problem(f"sysctl {key} is not per-namespace (only net.* sysctls are); setting it would change "
                              "the whole host", node.subject, subject_id=node.node.id)
        yield from dhcp.problems(node, node.settings.dhcp_pools, {})

    def lower(self, node: NodeContext[ContainerSettings]) -> Iterable[api.Op]:
        netns = node.names.netns(node.node.name)
        owner = node.subject
        for key, value in sorted(node.settings.sysctls.items()):
            yield api.SetSysctl(owner=owner, netns=netns, key=key, value=value, userns=node.lab.user_namespace)
        for gateway in self.default_gateways(node):
            yield gateway_route(node, netns, gateway)
        for route in node.settings.routes:
            destination, _, gateway = route.partition(" via ")
            yield api.AddRoute(owner=owner, netns=netns, destination=destination.strip(), gateway=gateway.strip())
        yield from dhcp.ops(node, node.settings.dhcp_pools, {})

    def state_commands(self, node: NodeContext[ContainerSettings]) -> tuple[tuple[str, ...], ...]:
        return KERNEL_STATE

    def saved_state(self, node: NodeContext[ContainerSettings], read: Reader) -> api.SavedState:
        """The addresses on its ports and the routes students add with `ip`; the default routes are its gateways."""
        routes = kernel_routes(read)
        defaults = {destination: gateway for destination, gateway in routes if destination in ("default", "::/0")}
        return api.SavedState(settings={"default_route": defaults.get("default", ""),
                                        "default_route6": defaults.get("::/0", ""),
                                        "routes": [f"{destination} via {gateway}" for destination, gateway in routes
                                                   if destination not in defaults]},
                              addresses=kernel_addresses(node, read))
