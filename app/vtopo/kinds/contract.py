"""What a node kind is: the contract every plugin implements, built-in or third-party, and the node and link ends
in context that its hooks receive."""
from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Generic, Iterable, TypeVar

from vtopo.kinds.back_references import BackReference
from vtopo.kinds.freezing import FreezesOnceResolved
from vtopo.lab_terms import HostFacts, LabNames, Trust, in_containers_cgroup
from vtopo.model.problems import Problem
from vtopo.model.rules import NETNS_DIR, stable_digest, subinterface_name

if TYPE_CHECKING:
    from vtopo.kinds.check_types import CheckType
    from vtopo.kinds.running import ConfigCheck, MachineProcess, NodeFiles, NodeImage, SavedState
    from vtopo.model.topology import Endpoint, Link, Node, Topology
    from vtopo.ops import Op


S = TypeVar("S")  # a kind's settings dataclass


class CannotRunInside(Exception):
    """The node has no place to run a command in (a VM without a shell, say); the message says what exists."""


IPERF3_SERVER = "iperf3"
"""A standing server (RunsMachine.standing_servers): `iperf3 -s`, serving one test at a time."""
ECHO_SERVER = "echo"
"""A standing server: a TCP server that sends back what it receives, the other end of a request/response test."""


SWITCH_PORT = "switch port"  # the medium of a link whose switch makes the namespace's interface (makes_namespace_ports)


class Role(str, Enum):
    """How a kind takes part in links. The compiler picks the link medium from the two roles."""

    NAMESPACE = "namespace"  # owns a network namespace (or is the host's): link ends are interfaces inside it
    SWITCH = "switch"  # forwards frames between its ports, in the host namespace
    SEGMENT = "segment"  # macvlan/macvtap: each link end is a child device of one lower device
    MACHINE = "machine"  # a virtual machine: each link end is a NIC backed by a host device


@dataclass(frozen=True)
class PortSpec:
    """Ports are named prefix+number, e.g. eth0..eth7 or p1..p24. New ports take `prefix`; a port named with one of
    the `older` prefixes, as an earlier vtopo named them, is the same port still."""

    prefix: str
    first: int = 0
    limit: int | None = None
    older: tuple[str, ...] = ()

    def name(self, index: int) -> str:
        return f"{self.prefix}{index}"

    def index_of(self, port: str) -> int | None:
        prefixes = "|".join(re.escape(prefix) for prefix in (self.prefix, *self.older))
        match = re.fullmatch(f"(?:{prefixes})" + r"(\d+)", port)
        if not match:
            return None
        index = int(match.group(1))
        if index < self.first or (self.limit is not None and index >= self.first + self.limit):
            return None
        return index

    def next_free(self, used: set[str]) -> str | None:
        taken = {self.index_of(port) for port in used}  # "c1" is "mv1" too
        index = self.first
        while self.limit is None or index < self.first + self.limit:
            if index not in taken:
                return self.name(index)
            index += 1
        return None

    def describe(self) -> str:
        if self.limit is None:
            return f"{self.prefix}{self.first}, {self.prefix}{self.first + 1}, ..."
        return f"{self.prefix}{self.first} to {self.prefix}{self.first + self.limit - 1}"


@dataclass(frozen=True)
class PortVlans:
    """The VLANs of a switch port that keeps VLANs apart: `untagged`, the VLAN its untagged frames belong to and leave
    it in (an access port's VLAN, a trunk's native VLAN; None for none), and `tagged`, those it carries with their
    tag (a trunk's), `untagged` not among them."""

    untagged: int | None
    tagged: tuple[int, ...] = ()

    @property
    def trunk(self) -> bool:
        return bool(self.tagged)

    def carries(self, vlan: int) -> bool:
        return vlan == self.untagged or vlan in self.tagged

    def __str__(self) -> str:
        """As a switch's VLANs setting writes the port: access 10, trunk 10,20, trunk 10,20 native 1."""
        if not self.trunk:
            return f"access {self.untagged}"
        native = f" native {self.untagged}" if self.untagged is not None else ""
        return f"trunk {','.join(map(str, self.tagged))}{native}"


@dataclass(frozen=True)
class EmptySettings:
    """The settings of a kind that has none."""


Reader = Callable[[list[str]], str]
"""What a command (one of the kind's `state_commands`) printed inside a running node."""

FileReader = Callable[[str, int], str]
"""Reads at most so many bytes of a file of the lab's (written by its own user) on the host; "" when it is not there."""


@dataclass(eq=False)
class EndContext(FreezesOnceResolved):
    """One end of a link, once the compiler has chosen the medium and named the device."""

    link: Link
    end: Endpoint
    owner: BackReference[NodeContext[Any]] = BackReference()
    link_name: str  # type: ignore[misc]  # mypy takes the BackReference above for a default, which it is not
    medium: str = ""
    device: str = ""  # empty when this end has no device of its own (a macvlan segment's end)
    netns: str | None = None
    peer: BackReference[EndContext | None] = BackReference(optional=True)
    node: Node = field(init=False, repr=False)  # the owner's node and kind, kept here: compiling reads them at every
    kind: NodeKind[Any] = field(init=False, repr=False)  # step, and the owner only through its back reference

    def __post_init__(self) -> None:
        self.node, self.kind = self.owner.node, self.owner.kind

    @property
    def other(self) -> EndContext:
        assert self.peer is not None
        return self.peer

    def guest_mac(self) -> str:
        """A VM NIC's MAC: the user's, or a stable one in QEMU's 52:54:00 range."""
        if self.end.interface.mac:
            return self.end.interface.mac.lower()
        digest = stable_digest(f"{self.owner.names.prefix}/{self.node.name}/{self.end.port}")
        return "52:54:00:" + ":".join(digest[i:i + 2] for i in range(0, 6, 2))


def svi_name(vlan: int) -> str:
    """The name of an L3 switch's interface in VLAN `vlan` (its SVI), in the switch's own namespace."""
    return f"vlan{vlan}"


@dataclass(frozen=True, eq=False)
class NodeInterface:
    """An interface of a node with addresses of its own: a link end's, or one of its 802.1Q subinterfaces (`vlan`).
    `port` names it in the lab (eth0, eth0.10), `device` inside the node."""

    end: EndContext
    port: str
    device: str
    addresses: tuple[str, ...]
    vlan: int | None = None


@dataclass(eq=False)
class NodeContext(FreezesOnceResolved, Generic[S]):
    """A node in context: its kind, its settings parsed into the kind's settings dataclass, and its link ends."""

    node: Node
    kind: NodeKind[S]
    settings: S
    lab: BackReference[LabContext] = BackReference()
    ends: list[EndContext] = field(default_factory=list)

    @property
    def names(self) -> LabNames:
        return self.lab.names

    @property
    def facts(self) -> HostFacts:
        return self.lab.facts

    @property
    def subject(self) -> str:
        return f"node {self.node.name}"

    def interfaces(self) -> list[NodeInterface]:
        """Its link ends' interfaces, each followed by its subinterfaces."""
        found = []
        for end in self.ends:
            interface = end.end.interface
            found.append(NodeInterface(end, end.end.port, end.device, tuple(interface.addresses)))
            found += [NodeInterface(end, subinterface_name(end.end.port, sub.vlan),
                                    subinterface_name(end.device, sub.vlan), tuple(sub.addresses), sub.vlan)
                      for sub in interface.subinterfaces]
        return found

    def enter(self, argv: list[str], workdir: str = "", own_pids: bool = True) -> list[str]:
        """`argv` run inside the node, a container: its network, mount and UTS namespaces (see IsolateNode), as root
        of the lab's user namespace where it has one (nsenter enters that one last, as uid 0 inside: the owner).
        `workdir`: where the command starts, inside the node's mount namespace ("/" by default). A node from an image
        has a PID namespace too, whose /proc its mount namespace shows: a command enters it unless `own_pids` is
        False (a daemon vtopo stops by the pid it writes, which must be the host's); and its cgroup, under the node's
        limits, always."""
        netns = self.kind.netns(self)
        if netns is None:
            raise CannotRunInside(f"{self.node.name} is the host's own namespace, not a container")
        names, name = self.names, self.node.name
        user = [f"--user={self.lab.user_namespace}"] if self.lab.user_namespace else []
        image = image_of(self) is not None
        pids = [f"--pid={names.node_namespace(name, 'pid')}"] if own_pids and image else []
        return [*(in_containers_cgroup(netns) if image else []), "nsenter", *user, f"--net={NETNS_DIR}/{netns}",
                f"--mount={names.node_namespace(name, 'mnt')}", f"--uts={names.node_namespace(name, 'uts')}", *pids,
                *([f"--wdns={workdir}"] if workdir else []), "--", *argv]


@dataclass(eq=False)
class LabContext(FreezesOnceResolved):
    """The lab as the kinds and the compiler see it while it is resolved: its nodes and link ends with what
    the stages found out about them."""

    topology: Topology
    names: LabNames
    facts: HostFacts
    trust: Trust = field(default_factory=Trust)
    nodes: dict[str, NodeContext[Any]] = field(default_factory=dict)
    ends: list[EndContext] = field(default_factory=list)
    domains: list[list[EndContext]] = field(default_factory=list)  # the ends on each L2 segment, once named
    whole: LabContext | None = None  # of one site's part of a lab spread over sites: the whole lab, which holds the
    # nodes of the other sites that the part's ends reach (a tunnel's far end)

    @property
    def user_namespace(self) -> str:
        """The file of the lab's user namespace, which holds its nodes' namespaces; "" for a lab of root's whose
        namespaces are the host's (agent.toml's `root_labs_as_host`)."""
        return self.names.user_namespace if self.trust.owner.ids is not None else ""

    def node_named(self, name: str) -> NodeContext[Any] | None:
        return next((n for n in self.nodes.values() if n.node.name == name), None)

    def no_node_named(self, name: str) -> str:
        """What to say when `node_named` found no node: the names there are."""
        return self.topology.no_node_named(name)

    @property
    def vm_backend(self) -> str:
        """"libvirt" or "qemu": the lab's choice, or for auto, libvirt when libvirtd answers."""
        chosen = self.topology.vm_backend
        if chosen in ("libvirt", "qemu"):
            return chosen
        return "libvirt" if self.facts.libvirt else "qemu"


class NodeKind(ABC, Generic[S]):
    """A kind of node: what every kind declares (its name, role, ports, settings...) as class attributes, and the hooks
    every kind may override. What only some kinds do is a capability below, which a kind's class adds beside
    NodeKind (`class RouterKind(NodeKind[RouterSettings], RunsAsContainer[RouterSettings], ...)`), and vtopo asks a kind
    for it with isinstance: nothing is asked of a kind that lacks it."""

    name: ClassVar[str]
    label: ClassVar[str]
    description: ClassVar[str]
    role: ClassVar[Role]
    ports: ClassVar[PortSpec]
    connects_to: ClassVar[frozenset[str]]  # a link is allowed when either end's kind lists the other's
    settings_type: ClassVar[type] = EmptySettings
    connect_hint: ClassVar[str] = ""
    icon_file: ClassVar[str] = ""
    name_stem: ClassVar[str] = ""  # new nodes are named stem+number (r1, br2); "" uses the kind's name
    shell: ClassVar[tuple[str, ...]] = ("bash",)  # what a terminal on a running node opens
    address_hint: ClassVar[str] = ""  # where an address goes instead, said when a port of this kind is given one
    dhcp_client: ClassVar[bool] = False  # whether a port of this kind set to dhcp runs a DHCP client in the node
    gateway_setting: ClassVar[str] = ""  # the setting of the IPv4 default gateway automatic addressing fills in

    def icon_path(self) -> Path:
        """The kind's SVG icon. Built-in kinds keep theirs in resources/icons."""
        from vtopo.resources import icon

        return icon(self.icon_file or f"{self.name}.svg")

    def netns(self, node: NodeContext[S]) -> str | None:
        """The namespace a NAMESPACE-role node's interfaces live in; None for the host's own."""
        return node.names.netns(node.node.name)

    def device_name(self, node: NodeContext[S], end: EndContext) -> str:
        """The name of the device at this end of a link, as it appears where it lives."""
        return node.names.host_device(node.node.name, end.end.port)

    def command_in(self, node: NodeContext[S], argv: list[str]) -> list[str]:
        """The argv that runs `argv` inside this node (measurements and `vtopo exec` use it); CannotRunInside
        for a node with no namespace of its own (a switch or segment forwards frames; it has no shell)."""
        if self.role is not Role.NAMESPACE:
            raise CannotRunInside(f"{node.node.name} is a {self.label}: it forwards frames and has no shell or "
                                  "address of its own; pick a container, router, VM or the host")
        return node.enter(argv) if self.netns(node) else list(argv)

    def host_addresses(self, node: NodeContext[S]) -> list[str]:
        """Addresses (with prefix) the host's own namespace has on this node, as on a numbered bridge: the host
        reaches what lies behind it with no link in the drawing."""
        return []

    def joins_ports(self, node: NodeContext[S]) -> bool:
        """For a switch or segment: whether frames pass between its ports, making one broadcast domain of them
        (a bridge, a macvlan segment in bridge mode); False where they never do or rules decide (private mode,
        OpenFlow)."""
        return True

    def routes(self, node: NodeContext[S]) -> bool:
        """Whether the node forwards IP between its interfaces (a router); for a switch, whether the host routes
        through its addresses on it. Routers are the borders of broadcast domains and the gateways of the rest."""
        return False

    def default_gateways(self, node: NodeContext[S]) -> list[str] | None:
        """The next hops of the node's default routes, IPv4 and IPv6 (empty when it has none), or None for a node
        that takes no default route."""
        return None

    def check(self, node: NodeContext[S]) -> Iterable[Problem]:
        return ()

    def limitations(self, node: NodeContext[S]) -> Iterable[str]:
        """What this host keeps the node from being, as an experiment on it must say (a switch without its kernel
        datapath, say); the compiler's warnings are said already."""
        return ()

    def check_types(self) -> Iterable[CheckType]:
        """Check types this kind adds to what a lab file's "checks" may use (a router adds `ospf-neighbor`)."""
        return ()

    @property
    def ports_take_addresses(self) -> bool:
        """Whether the node's end of a link holds addresses: a switch's port or a segment's child device does not
        (the node at the other end holds them)."""
        return self.role not in (Role.SWITCH, Role.SEGMENT)

    def lower(self, node: NodeContext[S]) -> Iterable[Op]:
        """The ops that build the node itself (namespaces, bridges, daemons)."""
        return ()

    def attach(self, node: NodeContext[S], end: EndContext) -> Iterable[Op]:
        """Kind-specific ops for a link end that has landed on this node (enslave, add-port...)."""
        return ()


class KeepsVlansApart(ABC, Generic[S]):
    """A switch whose ports can keep VLANs apart, as access ports and trunks."""

    @abstractmethod
    def port_vlans(self, node: NodeContext[S], end: EndContext) -> PortVlans | None:
        """The VLANs of its port at `end`; None where it keeps no VLANs apart, passing every frame as it came, tag and
        all (a switch with no VLANs set)."""

    @abstractmethod
    def part_settings(self, settings: dict[str, Any], ports: frozenset[str], trunk: str) -> dict[str, Any]:
        """For a switch spread over sites, the settings (as a lab file has them) of its part on one site, which has
        only `ports` of it and `trunk`, its link to the rest, which carries every VLAN."""


class RoutesBetweenVlans(ABC, Generic[S]):
    """A switch with interfaces of its own in its VLANs (an L3 switch's SVIs), which route between them in a network
    namespace of the switch's own."""

    @abstractmethod
    def vlan_interfaces(self, node: NodeContext[S]) -> dict[int, tuple[str, ...]]:
        """The addresses of its interface in each VLAN, by VLAN; none when it has none."""

    @abstractmethod
    def own_namespace(self, node: NodeContext[S]) -> str | None:
        """The network namespace its interfaces route in; None when it has none."""


class MakesTaggedPorts(ABC, Generic[S]):
    """A switch that can make the 802.1Q subinterfaces of the nodes linked to it, as ports of its own, where the
    kernel makes no VLAN devices."""

    @abstractmethod
    def tagged_port(self, node: NodeContext[S], end: EndContext, vlan: int, name: str, owner: str) -> Iterable[Op]:
        """The ops that make a port of its own in VLAN `vlan`, in the namespace of the node linked at `end` and named
        `name` there: that node's subinterface."""


class ForwardsInUserspace(ABC, Generic[S]):
    """A switch that may forward in userspace (OVS's netdev datapath), where frames and ports differ from the
    kernel's."""

    @abstractmethod
    def makes_namespace_ports(self, node: NodeContext[S]) -> bool:
        """Whether it makes the interface of a namespace linked to it itself, as one of its own ports, and moves it
        into the namespace (OVS's internal ports), instead of taking the host end of a veth pair."""

    @abstractmethod
    def leaves_checksums_partial(self, node: NodeContext[S]) -> bool:
        """Whether frames cross it with their checksum left for a NIC to finish: whatever sends into it must
        checksum in full."""


class ProtectsLoops(ABC, Generic[S]):
    """A switch that can run the spanning tree protocol against switching loops, when its settings turn it on."""

    @abstractmethod
    def protects_loops(self, node: NodeContext[S]) -> bool:
        """Whether the node runs it."""


class RunsAsContainer(ABC, Generic[S]):
    """A kind whose node is a container: files of its own over the host's, and the OCI image it runs from in place of
    the host's programs, where its settings name one."""

    @abstractmethod
    def own_files(self, node: NodeContext[S]) -> NodeFiles:
        """The directories and files the node has of its own over the host's (a router's /etc/frr)."""

    @abstractmethod
    def image(self, node: NodeContext[S]) -> NodeImage | None:
        """The OCI image the node runs from, in place of the host's own programs; None for none."""


class RunsMachine(ABC, Generic[S]):
    """A kind whose node is a virtual machine: a lab with one makes the host probe for KVM, and the host must hold its
    files and its memory."""

    @abstractmethod
    def machine(self, node: NodeContext[S]) -> MachineProcess:
        """The virtual machine behind the node: what `vtopo status -v` inspects."""

    @abstractmethod
    def console_socket(self, node: NodeContext[S]) -> str:
        """The unix socket of the node's serial console: a VM has no shell vtopo can start."""

    @abstractmethod
    def host_files(self, node: NodeContext[S]) -> list[str]:
        """Files on the host the node reads when it starts (its disk image, the guest kernel): validate and deploy
        check that they exist before anything is applied."""

    @abstractmethod
    def resources(self, node: NodeContext[S]) -> tuple[int, int]:
        """The host memory (MiB) and CPUs the node takes for itself; the compiler adds them up."""

    @abstractmethod
    def standing_servers(self, node: NodeContext[S]) -> dict[str, int]:
        """Services that always listen in the guest, by name (see vtopo.measure.nodes) with their ports:
        measurements aim at them instead of starting their own."""


class ServesDhcp(ABC, Generic[S]):
    """A kind whose node can answer DHCP on its ports (a server or a relay), and whose leases `vtopo status` shows."""

    @abstractmethod
    def dhcp_service(self, node: NodeContext[S], end: EndContext) -> str:
        """What answers DHCP on the node's port at `end`, in words ("a DHCP relay to 10.0.0.2"), or "" for nothing:
        what a failed dhcp-lease check names on the client's segment."""

    @abstractmethod
    def status_detail(self, node: NodeContext[S], read_file: FileReader) -> str:
        """What `vtopo status` adds about the running node (its DHCP server's leases), read from the node's own files
        with `read_file`, which never follows a symlink; "" for nothing."""


class GeneratesConfig(ABC, Generic[S]):
    """A kind whose node runs a configuration that vtopo generates where a setting is left empty, and that a program
    on the host must accept (a router's FRR)."""

    @abstractmethod
    def generated_settings(self, node: NodeContext[S]) -> dict[str, str]:
        """For a text setting left empty, what vtopo generates in its place (a router's OSPF configuration), by
        setting name: what the inspector shows, and what "Edit" starts from."""

    @abstractmethod
    def config_checks(self, node: NodeContext[S]) -> Iterable[ConfigCheck]:
        """The node's texts that a program on the host must accept (a router's FRR configuration)."""


class SavesState(ABC, Generic[S]):
    """A kind whose running node becomes something its settings and addresses can hold (`vtopo save`)."""

    @abstractmethod
    def state_commands(self, node: NodeContext[S]) -> tuple[tuple[str, ...], ...]:
        """The commands, run inside the running node, that show what it has become (`vtopo save` runs them: they
        are its plan, and --explain prints them)."""

    @abstractmethod
    def saved_state(self, node: NodeContext[S], read: Reader) -> SavedState:
        """What the running node has become that its settings and addresses can hold, from what its
        `state_commands` printed (`read` gives each's: a router's running configuration, a container's addresses and
        routes)."""

    def comparable(self, setting: str, value: Any) -> Any:
        """A setting's value in the form two values of it are compared and shown as a diff in (`vtopo save`): a
        router's configuration without what FRR adds to and reorders in `show running-config`."""
        return value


def image_of(node: NodeContext[Any]) -> NodeImage | None:
    """The OCI image a node runs from: None for a node of the host's programs, or of a kind that runs no container."""
    return node.kind.image(node) if isinstance(node.kind, RunsAsContainer) else None


def resources_of(node: NodeContext[Any]) -> tuple[int, int]:
    """The host memory (MiB) and CPUs the node takes for itself: a virtual machine's, none for other nodes."""
    return node.kind.resources(node) if isinstance(node.kind, RunsMachine) else (0, 0)


def vlan_interfaces_of(node: NodeContext[Any]) -> dict[int, tuple[str, ...]]:
    """The addresses of a switch's own interface in each of its VLANs, by VLAN: none for a node that routes no VLANs."""
    return node.kind.vlan_interfaces(node) if isinstance(node.kind, RoutesBetweenVlans) else {}


def generated_settings_of(node: NodeContext[Any]) -> dict[str, str]:
    """What vtopo generates for the node's text settings left empty, by setting name: none for a kind that generates
    no configuration."""
    return node.kind.generated_settings(node) if isinstance(node.kind, GeneratesConfig) else {}


class SegmentKind(NodeKind[S]):
    """macvlan and macvtap: each link end is a child device hung off one lower device in a given mode."""

    role = Role.SEGMENT
    child_media: ClassVar[dict[Role, str]]  # the device made for a child of each role

    def lower_device(self, node: NodeContext[S]) -> str:
        raise NotImplementedError

    def mode(self, node: NodeContext[S]) -> str:
        raise NotImplementedError


CAPABILITIES: tuple[type, ...] = (KeepsVlansApart, RoutesBetweenVlans, MakesTaggedPorts, ForwardsInUserspace,
                                  ProtectsLoops, RunsAsContainer, RunsMachine, ServesDhcp, GeneratesConfig, SavesState)


def undeclared_hooks(kind: NodeKind[Any]) -> list[str]:
    """The capabilities' hooks that `kind` writes without adding their capability to its class, each as
    "hook() without Capability": vtopo asks a kind for a capability with isinstance, and would never call them."""
    return [f"{hook}() without {capability.__name__}" for capability in CAPABILITIES
            if not isinstance(kind, capability) for hook, value in vars(capability).items()
            if callable(value) and not hook.startswith("_") and callable(getattr(kind, hook, None))]

