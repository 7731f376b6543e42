"""An OSPF router: a namespace running zebra and ospfd (FRR, or Quagga: the configuration is the same, as in the
host-networking experiment)."""
from __future__ import annotations

import ipaddress
import itertools
from dataclasses import dataclass
from typing import Iterable

from vtopo.kinds.api import (CheckType, CreateNamespace, DaemonShell, EndContext, MakeDirectory, NodeContext, NodeKind,
                             Op, PortSpec, Problem, Role, SetSysctl, StartProcess, WriteFile, addresses_resource,
                             dev_resource, setting, up_resource)
from vtopo_kinds.router_checks import OspfNeighbor

BACKBONE = "0.0.0.0"
DAEMONS = ("zebra", "ospfd")
VTY_GROUP = {"frr": "frrvty", "quagga": "quaggavty"}  # the group the daemons' vty sockets admit
HOST_VTY_DIRS = {"frr": ("/run/frr",), "quagga": ("/run/quagga",)}  # where the host's own daemons keep theirs


@dataclass(frozen=True)
class RouterSettings:
    router_id: str = setting("", "Router ID", "Empty: the highest IPv4 address of the router")
    hello_interval: int = setting(1, "Hello interval (s)", "OSPF hello timer. Short timers make a lab converge in "
                                  "seconds instead of the default 40.", minimum=1, maximum=65535)
    dead_interval: int = setting(4, "Dead interval (s)", "A neighbour silent this long is declared down",
                                 minimum=2, maximum=65535)
    areas: dict[str, str] = setting({}, "OSPF area per port", "e.g. eth1 = 0.0.0.1. Ports not listed are in the "
                                    "backbone, area 0.0.0.0.")
    passive: list[str] = setting([], "Passive ports", "Ports whose subnet is announced but where no OSPF neighbour "
                                 "is sought (stub LANs)")
    redistribute_connected: bool = setting(False, "Redistribute connected", "Announce every connected subnet")
    default_originate: bool = setting(False, "Originate default", "Announce a default route (default-information "
                                      "originate always)")


def normalise_area(area: str) -> str:
    return str(ipaddress.IPv4Address(int(area))) if area.isdigit() else str(ipaddress.IPv4Address(area))


class RouterKind(NodeKind[RouterSettings]):
    name = "router"
    label = "OSPF router"
    description = "A namespace running zebra and ospfd (FRR, Quagga-compatible), with IP forwarding on."
    role = Role.NAMESPACE
    ports = PortSpec("eth", 0)
    connects_to = frozenset({"container", "router", "bridge", "ovs", "macvlan", "host"})
    connect_hint = "Routers join containers, other routers, bridges, OVS switches, macvlan segments and the host."
    settings_type = RouterSettings
    name_stem = "r"
    shell = ("vtysh",)  # FRR's shell

    def device_name(self, node: NodeContext[RouterSettings], end: EndContext) -> str:
        return end.end.interface.name or end.end.port

    def command_in(self, node: NodeContext[RouterSettings], argv: list[str]) -> list[str]:
        """vtysh reaches this router's own daemons through their vty sockets."""
        if argv and argv[0] == "vtysh":
            directory = node.names.node_dir(node.node.name)
            argv = ["vtysh", "--vty_socket", directory, "--config_dir", directory, *argv[1:]]
        return super().command_in(node, argv)

    def daemon_shell(self, node: NodeContext[RouterSettings], argv: list[str], socket_dir: str) -> DaemonShell | None:
        if argv[:1] != ["vtysh"]:
            return None
        suite = node.facts.routing_suite
        argv = ["vtysh", "--vty_socket", socket_dir, "--config_dir", socket_dir, *argv[1:]]
        return DaemonShell(node.names.node_dir(node.node.name), tuple(f"{daemon}.vty" for daemon in DAEMONS),
                           VTY_GROUP[suite], tuple(argv), HOST_VTY_DIRS[suite], "vtysh.conf",
                           "username {user} nopassword")  # vtysh asks PAM otherwise, which refuses a user

    def routes(self, node: NodeContext[RouterSettings]) -> bool:
        return True

    def check_types(self) -> Iterable[CheckType]:
        return (OspfNeighbor(),)

    def area_of(self, node: NodeContext[RouterSettings], port: str) -> str:
        return normalise_area(node.settings.areas.get(port, BACKBONE))

    def router_id(self, node: NodeContext[RouterSettings]) -> str:
        if node.settings.router_id:
            return node.settings.router_id
        addresses = [ipaddress.ip_interface(a).ip for end in node.ends for a in end.end.interface.addresses
                     if "/" in a and ipaddress.ip_interface(a).version == 4]
        return str(max(addresses)) if addresses else ""

    def check(self, node: NodeContext[RouterSettings]) -> Iterable[Problem]:
        settings, subject, node_id = node.settings, node.subject, node.node.id
        ports = {end.end.port for end in node.ends}
        if settings.router_id:
            try:
                ipaddress.IPv4Address(settings.router_id)
            except ValueError:
                yield Problem(f"Router ID {settings.router_id!r} must be an IPv4 address", subject, "", node_id)
        elif not self.router_id(node):
            yield Problem("the router has no IPv4 address to take its router ID from; set its Router ID", subject, "",
                          node_id)
        if settings.dead_interval <= settings.hello_interval:
            yield Problem("the dead interval must be longer than the hello interval", subject, "", node_id)
        for port, area in sorted(settings.areas.items()):
            if port not in ports:
                yield Problem(f"areas names port {port}, which has no link", subject, "", node_id)
            try:
                normalise_area(area)
            except ValueError:
                yield Problem(f"area {area!r} of {port} must be a number or dotted quad like 0.0.0.1", subject, "",
                              node_id)
        for port in settings.passive:
            if port not in ports:
                yield Problem(f"passive names port {port}, which has no link", subject, "", node_id)
        yield from self._overlaps(node)
        yield from self._area_mismatches(node)

    def _overlaps(self, node: NodeContext[RouterSettings]) -> Iterable[Problem]:
        networks = [(end.end.port, ipaddress.ip_interface(a).network) for end in node.ends
                    for a in end.end.interface.addresses if "/" in a]
        for (port_a, net_a), (port_b, net_b) in itertools.combinations(networks, 2):
            if port_a != port_b and net_a.version == net_b.version and net_a.overlaps(net_b):
                yield Problem(f"subnets overlap on two ports: {port_a} has {net_a} and {port_b} has {net_b}; a router "
                              "needs a distinct subnet per interface", node.subject, "", node.node.id)

    def _area_mismatches(self, node: NodeContext[RouterSettings]) -> Iterable[Problem]:
        own_ends = {id(e) for e in node.ends}
        for domain in node.lab.domains:
            mine = [e for e in domain if id(e) in own_ends]
            for end in mine:
                area = self._safe_area(node, end.end.port)
                for other in domain:
                    if other.kind.name != self.name or other.node.id == node.node.id:
                        continue
                    theirs = self._safe_area(node.lab.nodes[other.node.id], other.end.port)
                    if area and theirs and area != theirs and node.node.name < other.node.name:
                        yield Problem(f"OSPF areas differ across a shared segment: {node.node.name}:{end.end.port} is "
                                      f"in area {area}, {other.node.name}:{other.end.port} in area {theirs}; they "
                                      "will never become neighbours", f"link {end.link_name}", "", end.link.id)

    def _safe_area(self, node: NodeContext[RouterSettings], port: str) -> str:
        try:
            return self.area_of(node, port)
        except ValueError:
            return ""

    def generated_settings(self, node: NodeContext[RouterSettings]) -> dict[str, str]:
        """The integrated FRR configuration of the OSPF vtopo runs on this router (its daemons' logs aside)."""
        ospf = [line for line in self.ospfd_conf(node).splitlines() if not line.startswith("log file")]
        return {"config": "\n".join(ospf) + "\n"}

    # ------------------------------------------------------------ lowering

    def zebra_conf(self, node: NodeContext[RouterSettings]) -> str:
        return f"hostname {node.node.name}\nlog file {node.names.node_dir(node.node.name)}/zebra.log\n"

    def ospfd_conf(self, node: NodeContext[RouterSettings]) -> str:
        settings, frr = node.settings, node.facts.routing_suite == "frr"
        lines = [f"hostname {node.node.name}", f"log file {node.names.node_dir(node.node.name)}/ospfd.log", "!"]
        for end in sorted(node.ends, key=lambda e: e.end.port):
            lines += [f"interface {end.device}", f" ip ospf hello-interval {settings.hello_interval}",
                      f" ip ospf dead-interval {settings.dead_interval}"]
            if end.other.kind.name == self.name:
                lines.append(" ip ospf network point-to-point")  # no DR election: adjacent within a hello or two
            if end.end.port in settings.passive and frr:
                lines.append(" ip ospf passive")
            lines.append("!")
        lines += ["router ospf", f" ospf router-id {self.router_id(node)}"]
        if frr:  # accept an LSA re-sent at once instead of waiting for the 5 s retransmit
            lines.append(" timers lsa min-arrival 0")
        else:  # Quagga's spelling of passive interfaces
            lines += [f" passive-interface {e.device}" for e in node.ends if e.end.port in settings.passive]
        for end in sorted(node.ends, key=lambda e: e.end.port):
            for address in end.end.interface.addresses:
                network = ipaddress.ip_interface(address).network
                if network.version == 4:
                    lines.append(f" network {network} area {self.area_of(node, end.end.port)}")
        if settings.redistribute_connected:
            lines.append(" redistribute connected")
        if settings.default_originate:
            lines.append(" default-information originate always")
        return "\n".join(lines + ["!"]) + "\n"

    def lower(self, node: NodeContext[RouterSettings]) -> Iterable[Op]:
        owner, name, facts = node.subject, node.node.name, node.facts
        netns, directory = node.names.netns(name), node.names.node_dir(name)
        yield CreateNamespace(owner=owner, name=netns)
        yield SetSysctl(owner=owner, netns=netns, key="net.ipv4.ip_forward", value="1")
        yield SetSysctl(owner=owner, netns=netns, key="net.ipv6.conf.all.forwarding", value="1")
        yield MakeDirectory(owner=owner, path=directory, user=facts.frr_user)
        yield WriteFile(owner=owner, path=f"{directory}/zebra.conf", content=self.zebra_conf(node))
        yield WriteFile(owner=owner, path=f"{directory}/ospfd.conf", content=self.ospfd_conf(node))
        yield WriteFile(owner=owner, path=f"{directory}/vtysh.conf", content="! vtysh for this router only\n")
        interfaces = tuple(dev_resource(netns, end.device) for end in node.ends)
        # ospfd must first see each interface with carrier: seen without, FRR 8.4 may keep it as type "Null"
        # and leave its network out of the router LSA
        carrier = tuple(up_resource(e.netns, e.device) for side in node.ends for e in (side, side.other) if e.device)
        # root's own directory: frr, which owns `directory`, cannot swap these for symlinks before the bind mounts
        private_root = f"{directory}.private"
        yield MakeDirectory(owner=owner, path=private_root)
        private = (("/var/tmp", f"{private_root}/var-tmp"), ("/var/run/frr", f"{private_root}/run-frr"))
        after = {"zebra": (addresses_resource(netns), *interfaces, *carrier), "ospfd": (f"process:zebra@{name}",)}
        for daemon in DAEMONS:
            yield StartProcess(owner=owner, name=f"{daemon}@{name}", netns=netns, pid_file=f"{directory}/{daemon}.pid",
                               ready_path=f"{directory}/{daemon}.vty", private_dirs=private,
                               argv=(f"{facts.frr_dir}/{daemon}", "-d", "-u", facts.frr_user, "-g", facts.frr_user,
                                     "-f", f"{directory}/{daemon}.conf", "-i", f"{directory}/{daemon}.pid",
                                     "-z", f"{directory}/zserv.api", "--vty_socket", directory, "-P", "0",
                                     "--log", f"file:{directory}/{daemon}.log"),
                               after=(f"file:{directory}/{daemon}.conf", f"file:{private_root}", *after[daemon]))
