"""A router: a namespace running FRR's zebra, staticd and every routing daemon a course uses (or those its settings
name), so that whatever a student types into vtysh is taken. The configuration is FRR's own integrated text
(frr.conf), kept verbatim in the lab; a router without one runs the OSPF configuration vtopo writes from its settings
(OSPFv2, and OSPFv3 where the router has IPv6 addresses), or nothing at all when told not to (a router to configure
from scratch). Quagga takes the same text.

The daemons run inside the node, as a container: FRR's /etc/frr, /run/frr and /var/log/frr there are the router's
own directory. In a lab with a user namespace (a member's), they run as root of that namespace, the
lab's owner outside, and so does every vtysh that loads, checks or reads their configuration: what the
configuration or a student's vtysh says reaches the node's own files and nothing the owner could not reach
themselves, and writes none of the owner's: the host's other files are read-only inside the node. In root's labs they drop to the host's FRR user, and every vtysh runs as that user too, never as root."""
from __future__ import annotations

import ipaddress
import itertools
from dataclasses import dataclass
from typing import Any, Iterable

from vtopo.kinds import api
from vtopo.kinds.api import (CheckType, EndContext, FileReader, GeneratesConfig, NodeContext, NodeKind, PortSpec,
                             Problem, Reader, Role, RunsAsContainer, SavesState, ServesDhcp, setting)
from vtopo_kinds import dhcp
from vtopo_kinds.common import cpu_setting, disk_setting, image_setting, memory_setting, node_image
from vtopo_kinds.frr_config import ALWAYS, DAEMONS, OSPFD, ZEBRA, comparable_config, file_commands, kept_running_config
from vtopo_kinds.ospf_design import BACKBONE, design_problems

CONFIG_FILE = "frr.conf"
SHELL_CONFIG_FILE = "vtysh.conf"
VTY_GROUP = {"frr": "frrvty", "quagga": "quaggavty"}  # the group the daemons' vty sockets admit
CONFIG_DIR = {"frr": "/etc/frr", "quagga": "/etc/quagga"}  # inside the node: the router's directory
RUN_DIR = {"frr": "/run/frr", "quagga": "/run/quagga"}  # inside the node: the router's directory too
LOG_DIR = {"frr": "/var/log/frr", "quagga": "/var/log/quagga"}  # inside the node: the router's directory as well
LAB_ROOT = "root"  # who the daemons run as in a lab's user namespace
# A router's /etc/group in a lab's user namespace: only its root and nobody exist there, and FRR's daemons want their
# vty group to be one of their user's groups
LAB_GROUPS = "root:x:0:\nfrr:x:0:\n{vty}:x:0:\nnogroup:x:65534:\n"
RUNNING_CONFIG = ("vtysh", "-c", "show running-config")


@dataclass(frozen=True)
class RouterSettings:
    """A router's settings."""

    config: str = setting("", "Configuration", "FRR's integrated configuration (frr.conf), kept as written. Empty: "
                          "the OSPF configuration vtopo writes from the settings below, or none with Generate OSPF "
                          "off.", multiline=True)
    generate_ospf: bool = setting(True, "Generate OSPF", "With no configuration of its own, run the OSPF vtopo writes "
                                  "from the settings below. Off: the router starts with no configuration at all, for "
                                  "a student to configure in vtysh.")
    daemons: list[str] = setting([], "Daemons", "The routing daemons beside zebra and staticd, which always run. "
                                 "Empty: all of them (ospfd, ospf6d, bgpd, ripd, ripngd, isisd, bfdd), so that what "
                                 "is typed into vtysh is taken; name fewer to save memory")
    ospf_instance: int = setting(0, "OSPF instance", "The instance number ospfd runs as, for a configuration "
                                 "that names one (`router ospf 1`, `ip ospf 1 area 0`), as FRR's ospfd_instances "
                                 "says; 0: none, as usual", minimum=0, maximum=65535)
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
    dhcp_pools: list[str] = setting([], "DHCP server pools", dhcp.POOLS_HELP)
    dhcp_relay: dict[str, str] = setting({}, "DHCP relay", dhcp.RELAY_HELP)
    image: str = image_setting("vtopo/frr (its FRR's daemons run in place of the host's)")
    memory_mb: int = memory_setting()
    cpu_percent: int = cpu_setting()
    disk_mb: int = disk_setting()


def normalise_area(area: str) -> str:
    return str(ipaddress.IPv4Address(int(area))) if area.isdigit() else str(ipaddress.IPv4Address(area))


class RouterKind(NodeKind[RouterSettings], RunsAsContainer[RouterSettings], ServesDhcp[RouterSettings],
                 GeneratesConfig[RouterSettings], SavesState[RouterSettings]):
    name = "router"
    label = "Router"
    description = ("A namespace running FRR: zebra, staticd and the routing daemons (OSPF by default; its own "
                   "frr.conf, or vtysh, for static routes, RIP, BGP, IS-IS...), with IP forwarding on.")
    role = Role.NAMESPACE
    ports = PortSpec("eth", 0)
    dhcp_client = True
    connects_to = frozenset({"container", "router", "bridge", "ovs", "macvlan", "host"})
    connect_hint = "Routers join containers, other routers, bridges, OVS switches, macvlan segments and the host."
    settings_type = RouterSettings
    name_stem = "r"
    shell = ("vtysh",)  # FRR's shell

    def device_name(self, node: NodeContext[RouterSettings], end: EndContext) -> str:
        return end.end.interface.name or end.end.port

    def command_in(self, node: NodeContext[RouterSettings], argv: list[str]) -> list[str]:
        """Inside the node, where vtysh finds the router's daemons and configuration at FRR's own paths, as the
        daemons' user (never the host's root)."""
        if argv[:1] == ["vtysh"]:
            return node.enter([*self._as_daemons_user(node), *argv])
        return super().command_in(node, argv)

    def own_files(self, node: NodeContext[RouterSettings]) -> api.NodeFiles:
        suite, directory = node.facts.routing_suite, node.names.node_dir(node.node.name)
        binds = tuple((directory, inside) for inside in (CONFIG_DIR[suite], RUN_DIR[suite], LOG_DIR[suite]))
        binds += dhcp.binds(node, node.settings.dhcp_pools, node.settings.dhcp_relay)
        in_lab = self._in_user_namespace(node)
        return api.NodeFiles(binds, (("/etc/group", LAB_GROUPS.format(vty=VTY_GROUP[suite])),) if in_lab else (),
                         host_read_only=True)

    def image(self, node: NodeContext[RouterSettings]) -> api.NodeImage | None:
        settings = node.settings
        return node_image(settings.image, settings.memory_mb, settings.cpu_percent, settings.disk_mb)

    def dhcp_service(self, node: NodeContext[RouterSettings], end: EndContext) -> str:
        return dhcp.service(node, end, node.settings.dhcp_pools, node.settings.dhcp_relay)

    def status_detail(self, node: NodeContext[RouterSettings], read_file: FileReader) -> str:
        return dhcp.leases(node, node.settings.dhcp_pools, read_file)

    @staticmethod
    def _in_user_namespace(node: NodeContext[RouterSettings]) -> bool:
        return node.lab.trust.owner.ids is not None

    def _daemons_user(self, node: NodeContext[RouterSettings]) -> str:
        return LAB_ROOT if self._in_user_namespace(node) else node.facts.frr_user

    def _as_daemons_user(self, node: NodeContext[RouterSettings]) -> list[str]:
        """The words that run a shell of the daemons as their user: nothing in a lab's user namespace (its root is
        theirs); in a lab in the host's identities, setpriv to FRR's user with its vty group alone."""
        if self._in_user_namespace(node):
            return []
        return api.drop_privileges(node.facts.frr_user, (VTY_GROUP[node.facts.routing_suite],))

    def routes(self, node: NodeContext[RouterSettings]) -> bool:
        return True

    def check_types(self) -> Iterable[CheckType]:
        """The checks of a router's routes and sessions, which load with the first lab whose checks are read."""
        from vtopo_kinds.router_checks import ROUTER_CHECKS

        return ROUTER_CHECKS

    # ------------------------------------------------------------ the configuration

    @staticmethod
    def _generates(node: NodeContext[RouterSettings]) -> bool:
        """Whether the router runs the OSPF configuration vtopo writes: it has none of its own, and Generate OSPF is
        on."""
        return not node.settings.config and node.settings.generate_ospf

    def configuration(self, node: NodeContext[RouterSettings]) -> str:
        """The router's frr.conf: its own, the OSPF configuration generated from its settings, or nothing."""
        return self.generated_configuration(node) if self._generates(node) else node.settings.config

    def daemons(self, node: NodeContext[RouterSettings]) -> list[str]:
        """zebra first, then staticd and the routing daemons: those the settings name, or all of them."""
        return [d for d in DAEMONS if d in ALWAYS or not node.settings.daemons or d in node.settings.daemons]

    def generated_settings(self, node: NodeContext[RouterSettings]) -> dict[str, str]:
        return {"config": self.generated_configuration(node)} if node.settings.generate_ospf else {}

    def comparable(self, setting: str, value: Any) -> Any:
        return comparable_config(value) if setting == "config" and isinstance(value, str) else value

    def state_commands(self, node: NodeContext[RouterSettings]) -> tuple[tuple[str, ...], ...]:
        return (RUNNING_CONFIG,)

    def saved_state(self, node: NodeContext[RouterSettings], read: Reader) -> api.SavedState:
        return api.SavedState(settings={"config": kept_running_config(read(list(RUNNING_CONFIG)))})

    def config_checks(self, node: NodeContext[RouterSettings]) -> Iterable[api.ConfigCheck]:
        """FRR's dry run of the router's own text. `vtysh -b` skips a line FRR does not take and loads the rest, as
        FRR's own service does at boot: each such line is a warning, and the router deploys with the rest."""
        if node.settings.config and node.facts.routing_suite == "frr":
            yield api.ConfigCheck("FRR", "config", node.settings.config,
                                  ("vtysh", "--config_dir", "{dir}", "-C", "-f", "{file}"),
                                  CONFIG_FILE, ((SHELL_CONFIG_FILE, ""),), skips_lines=True)

    # ------------------------------------------------------------ checks

    def area_of(self, node: NodeContext[RouterSettings], port: str) -> str:
        return normalise_area(node.settings.areas.get(port, BACKBONE))

    def router_id(self, node: NodeContext[RouterSettings]) -> str:
        if node.settings.router_id:
            return node.settings.router_id
        addresses = [ipaddress.ip_interface(a).ip for interface in node.interfaces() for a in interface.addresses
                     if "/" in a and ipaddress.ip_interface(a).version == 4]
        return str(max(addresses)) if addresses else ""

    def check(self, node: NodeContext[RouterSettings]) -> Iterable[Problem]:
        yield from self._overlaps(node)
        yield from dhcp.problems(node, node.settings.dhcp_pools, node.settings.dhcp_relay)
        yield from self._configuration_problems(node)
        if self._generates(node):
            yield from self._generated_problems(node)
            yield from self._area_mismatches(node)
            yield from design_problems(node, self.area_of)

    def _configuration_problems(self, node: NodeContext[RouterSettings]) -> Iterable[Problem]:
        subject, node_id = node.subject, node.node.id
        for daemon in node.settings.daemons:
            if daemon not in DAEMONS:
                yield Problem(f"daemon {daemon!r} is not one a router runs (it runs: {', '.join(DAEMONS)})", subject,
                              "", node_id)
        for number, line in file_commands(node.settings.config):
            yield Problem(f"line {number} of its configuration, {line!r}, would have FRR write or read a file outside "
                          "the router's own directory; name a log file without a path (each daemon already logs there: "
                          "vtopo exec LAB ROUTER -- vtysh -c 'show logging')", subject, "", node_id)

    def _generated_problems(self, node: NodeContext[RouterSettings]) -> Iterable[Problem]:
        settings, subject, node_id = node.settings, node.subject, node.node.id
        ports = {interface.port for interface in node.interfaces()}
        if settings.router_id:
            try:
                ipaddress.IPv4Address(settings.router_id)
            except ValueError:
                yield Problem(f"Router ID {settings.router_id!r} must be an IPv4 address", subject, "", node_id)
        elif not self.router_id(node):
            yield Problem("the router has no IPv4 address to take its router ID from; set its Router ID", subject, "",
                          node_id)
        if settings.ospf_instance:
            yield Problem(f"OSPF instance {settings.ospf_instance} needs a configuration of the router's own that "
                          f"names it (`router ospf {settings.ospf_instance}`); the OSPF vtopo writes names none",
                          subject, "", node_id)
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

    def _overlaps(self, node: NodeContext[RouterSettings]) -> Iterable[Problem]:
        networks = [(interface.port, ipaddress.ip_interface(a).network) for interface in node.interfaces()
                    for a in interface.addresses if "/" in a and not ipaddress.ip_interface(a).is_link_local]
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
        if not self._generates(node):
            return ""  # its own configuration says which areas it is in, if any
        try:
            return self.area_of(node, port)
        except ValueError:
            return ""

    # ------------------------------------------------------------ lowering

    def _speaks_ipv6(self, node: NodeContext[RouterSettings]) -> bool:
        return any(ipaddress.ip_interface(a).version == 6 for interface in node.interfaces()
                   for a in interface.addresses if "/" in a)

    def generated_configuration(self, node: NodeContext[RouterSettings]) -> str:
        """OSPFv2 on every port and subinterface (and OSPFv3 where the router has IPv6), from the router's
        settings."""
        settings, frr = node.settings, node.facts.routing_suite == "frr"
        ipv6 = self._speaks_ipv6(node) and frr
        interfaces = sorted(node.interfaces(), key=lambda i: (i.end.end.port, i.vlan or 0))
        lines = [f"hostname {node.node.name}", "!"]
        for interface in interfaces:
            passive = interface.port in settings.passive
            # no DR election with a router linked straight: adjacent within a hello or two
            point_to_point = interface.vlan is None and interface.end.other.kind.name == self.name
            lines += [f"interface {interface.device}", f" ip ospf hello-interval {settings.hello_interval}",
                      f" ip ospf dead-interval {settings.dead_interval}"]
            lines += [" ip ospf network point-to-point"] if point_to_point else []
            lines += [" ip ospf passive"] if passive and frr else []
            if ipv6:
                lines += [f" ipv6 ospf6 area {self.area_of(node, interface.port)}",
                          f" ipv6 ospf6 hello-interval {settings.hello_interval}",
                          f" ipv6 ospf6 dead-interval {settings.dead_interval}"]
                lines += [" ipv6 ospf6 network point-to-point"] if point_to_point else []
                lines += [" ipv6 ospf6 passive"] if passive else []
            lines.append("!")
        lines += ["router ospf", f" ospf router-id {self.router_id(node)}"]
        if frr:  # accept an LSA re-sent at once instead of waiting for the 5 s retransmit
            lines.append(" timers lsa min-arrival 0")
        else:  # Quagga's spelling of passive interfaces
            lines += [f" passive-interface {i.device}" for i in interfaces if i.port in settings.passive]
        for interface in interfaces:
            for address in interface.addresses:
                network = ipaddress.ip_interface(address).network
                if network.version == 4:
                    lines.append(f" network {network} area {self.area_of(node, interface.port)}")
        lines += self._announcements(settings)
        lines.append("!")
        if ipv6:
            lines += ["router ospf6", f" ospf6 router-id {self.router_id(node)}", *self._announcements(settings), "!"]
        return "\n".join(lines) + "\n"

    def _shell_config(self, node: NodeContext[RouterSettings]) -> str:
        """vtysh's own configuration for this router: FRR 8.4's vtysh keeps the hostname itself (its prompt, and the
        `hostname` line of `show running-config`), taking the host's unless told; and the daemons' user may open it
        without a password (else vtysh asks PAM)."""
        return f"hostname {node.node.name}\nusername {self._daemons_user(node)} nopassword\n"

    @staticmethod
    def _announcements(settings: RouterSettings) -> list[str]:
        return ([" redistribute connected"] if settings.redistribute_connected else []) + \
            ([" default-information originate always"] if settings.default_originate else [])

    def lower(self, node: NodeContext[RouterSettings]) -> Iterable[api.Op]:
        owner, name, facts = node.subject, node.node.name, node.facts
        netns, directory, suite = node.names.netns(name), node.names.node_dir(name), facts.routing_suite
        userns = node.lab.user_namespace
        yield api.SetSysctl(owner=owner, netns=netns, key="net.ipv4.ip_forward", value="1", userns=userns)
        yield api.SetSysctl(owner=owner, netns=netns, key="net.ipv6.conf.all.forwarding", value="1", userns=userns)
        ids = node.lab.trust.owner.ids
        frr_user = "" if ids is not None else facts.frr_user
        yield api.MakeDirectory(owner=owner, path=directory, user=frr_user, ids=ids)
        config_file, shell_file = f"{directory}/{CONFIG_FILE}", f"{directory}/{SHELL_CONFIG_FILE}"
        yield api.WriteFile(owner=owner, path=config_file, content=self.configuration(node))
        yield api.WriteFile(owner=owner, path=shell_file, content=self._shell_config(node))
        interfaces = tuple(api.dev_resource(netns, interface.device) for interface in node.interfaces())
        # the daemons must first see each interface with carrier: seen without, FRR 8.4's ospfd may keep it as type
        # "Null" and leave its network out of the router LSA
        carrier = (*(api.up_resource(e.netns, e.device) for side in node.ends for e in (side, side.other) if e.device),
                   *(api.up_resource(netns, i.device) for i in node.interfaces() if i.vlan is not None))
        user, run, logs = self._daemons_user(node), RUN_DIR[suite], LOG_DIR[suite]
        enter = tuple(node.enter([], workdir=logs, own_pids=False))  # a log file the configuration names without a
        # path lands there
        processes = []
        for daemon in self.daemons(node):  # each starts empty (/dev/null, never the host's /etc/frr); vtysh -b
            # configures them. ospfd with an instance number is ospfd-N to FRR: its pid file, vty socket and log
            instance = node.settings.ospf_instance if daemon == OSPFD else 0
            process = f"{daemon}-{instance}" if instance else daemon
            processes.append(process)
            after = ((api.addresses_resource(netns), *interfaces, *carrier) if daemon == ZEBRA
                     else (f"process:zebra@{name}",))
            yield api.StartProcess(owner=owner, name=f"{process}@{name}", netns=netns,
                                   pid_file=f"{directory}/{process}.pid", ready_path=f"{directory}/{process}.vty",
                                   enter=enter,
                                   argv=(f"{facts.frr_dir}/{daemon}", *(("-n", str(instance)) if instance else ()),
                                         "-d", "-u", user, "-g", user, "-f", "/dev/null", "-i", f"{run}/{process}.pid",
                                         "-z", f"{run}/zserv.api", "--vty_socket", run, "-P", "0", "--log",
                                         f"file:{logs}/{process}.log"),
                                   after=after)
        yield api.LoadConfig(owner=owner, node=name, netns=netns,
                             argv=(*node.enter([*self._as_daemons_user(node), "vtysh", "-b"], workdir=logs),),
                             after=(f"file:{config_file}", f"file:{shell_file}",
                                    *(f"process:{p}@{name}" for p in processes)))
        yield from dhcp.ops(node, node.settings.dhcp_pools, node.settings.dhcp_relay)
