"""Ops on network devices: netlink's work, shown as the iproute2, tc and sysctl commands."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from vtopo.model.rules import DEFAULT_VLAN
from vtopo.ops.base import Op, addresses_resource, dev_resource, ns_resource, up_resource
from vtopo.ops.host import Host, RouteProtocol, clock_t

TBF_LATENCY_MS = 50  # tbf queues at most this much traffic
ROUTE_PROTOCOL = RouteProtocol.STATIC  # what the routes vtopo adds are tagged with
VETH_QUEUES = 1  # transmit and receive queues of each veth end: the kernel's default, one per CPU, makes sysfs objects
# for each at create and at delete, and a veth gains nothing from more than one


def bridge_port_resource(name: str) -> str:
    """A host interface that is a port of a bridge."""
    return f"brport:{name}"


def tbf_rate(rate_mbit: float) -> int:
    """A rate in Mbit/s as tbf takes it, in bytes per second."""
    return round(rate_mbit * 1_000_000 / 8)


def tbf_burst(rate_mbit: float) -> int:
    """The bucket of a tbf at this rate, in bytes: 10 ms worth, two full frames at least."""
    return max(tbf_rate(rate_mbit) // 100, 2 * 1514)


class LinkType(StrEnum):
    """The kernel's names of the link types vtopo makes (`ip link add ... type T`, netlink's IFLA_INFO_KIND)."""

    BRIDGE = "bridge"
    VETH = "veth"
    MACVLAN = "macvlan"
    MACVTAP = "macvtap"
    VXLAN = "vxlan"
    VLAN = "vlan"  # an 802.1Q VLAN device (the kernel's 8021q)
    TAP = "tap"


class Tool(StrEnum):
    """Programs of the explained script whose names are also words of the model."""

    BRIDGE = "bridge"  # iproute2's bridge tool


class MacvlanMode(StrEnum):
    """The kernel's macvlan and macvtap modes."""

    PRIVATE = "private"
    VEPA = "vepa"
    BRIDGE = "bridge"
    PASSTHRU = "passthru"
    SOURCE = "source"


@dataclass(frozen=True, kw_only=True)
class DeviceOp(Op, register=False):
    """An op on one device that exists already: it needs that device."""

    name: str
    netns: str | None

    def requires(self) -> frozenset[str]:
        return frozenset({dev_resource(self.netns, self.name)})


# ---------------------------------------------------------------- links

@dataclass(frozen=True, kw_only=True)
class DeleteLink(Op):
    name: str
    netns: str | None = None
    summary_text: ClassVar[str] = "delete interface {name}"

    def apply(self, host: Host) -> None:
        host.delete_link(self.name, self.netns)


@dataclass(frozen=True, kw_only=True)
class CreateBridge(Op):
    name: str
    stp: bool = False
    forward_delay_s: float = 15.0
    ageing_s: float = 300.0
    vlan_filtering: bool = False  # its ports keep VLANs apart, each port in VLAN 1 untagged until told otherwise
    summary_text: ClassVar[str] = "create Linux bridge {name}"

    def provides(self) -> frozenset[str]:
        return frozenset({dev_resource(None, self.name)})

    def apply(self, host: Host) -> None:
        host.add_bridge(self.name, stp=self.stp, forward_delay=clock_t(self.forward_delay_s),
                        ageing_time=clock_t(self.ageing_s), vlan_filtering=self.vlan_filtering)

    def inverse(self) -> Op:
        return DeleteLink(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class CreateLinkBridge(CreateBridge):
    """The bridge of a link from a VM to another VM, a container or a router: a VM's NIC is a tap, and a tap meets
    another device only on a bridge. It has the link's two ends as its only ports and no node of its own
    (docs/architecture.md, "A link from a VM to a VM, a container or a router")."""

    summary_text: ClassVar[str] = ("create Linux bridge {name}, the link's own: a VM's NIC is a tap, which meets the "
                                   "other VM's tap or the node's veth only on a bridge")


@dataclass(frozen=True, kw_only=True)
class CreateVeth(Op):
    """A veth pair. When an end lives in a lab namespace, the pair dies with the namespace: the kernel then
    removes all of a destroyed lab's veths in one batch, far faster than one at a time. With `master`, its end
    `name`, in the host's namespace, is made a port of that bridge in the same request, still down (see
    vtopo.compile.links.made_on_their_bridges)."""

    name: str
    netns: str | None
    peer: str
    peer_netns: str | None
    master: str = ""
    summary_text: ClassVar[str] = "create veth pair {name} <-> {peer}"

    def requires(self) -> frozenset[str]:
        bridge = {dev_resource(None, self.master)} if self.master else set()
        return frozenset({ns_resource(self.netns), ns_resource(self.peer_netns), *bridge})

    def provides(self) -> frozenset[str]:
        port = {bridge_port_resource(self.name)} if self.master else set()
        return frozenset({dev_resource(self.netns, self.name), dev_resource(self.peer_netns, self.peer), *port})

    def apply(self, host: Host) -> None:
        host.add_veth(self.name, self.netns, self.peer, self.peer_netns, master=self.master or None,
                      queues=VETH_QUEUES)

    def summary(self) -> str:
        return super().summary() + (f", {self.name} a port of bridge {self.master}" if self.master else "")

    def inverse(self) -> Op | None:
        if self.netns is None and self.peer_netns is None:
            return DeleteLink(owner=self.owner, name=self.name)
        return None

    def host_ends(self) -> list[str]:
        return [name for name, netns in ((self.name, self.netns), (self.peer, self.peer_netns)) if netns is None]


@dataclass(frozen=True, kw_only=True)
class CreateMacvlan(Op):
    name: str
    netns: str | None
    lower: str
    lower_netns: str | None
    mode: str
    summary_text: ClassVar[str] = "create macvlan {name} on {lower}, mode {mode}"

    def requires(self) -> frozenset[str]:
        return frozenset({ns_resource(self.netns), dev_resource(self.lower_netns, self.lower)})

    def provides(self) -> frozenset[str]:
        return frozenset({dev_resource(self.netns, self.name)})

    def apply(self, host: Host) -> None:
        host.add_macvlan(self.name, self.netns, self.lower, self.lower_netns, self.mode)

    def inverse(self) -> Op | None:
        return None if self.netns else DeleteLink(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class CreateVlan(Op):
    """An 802.1Q subinterface: a kernel VLAN device on `parent`, in its namespace, whose frames leave `parent` tagged
    with `vid`."""

    name: str
    netns: str | None
    parent: str
    vid: int
    summary_text: ClassVar[str] = ("create subinterface {name} of {parent} in VLAN {vid}: a kernel 802.1Q VLAN device, "
                                   "as this kernel has 8021q")

    def requires(self) -> frozenset[str]:
        return frozenset({dev_resource(self.netns, self.parent)})

    def provides(self) -> frozenset[str]:
        return frozenset({dev_resource(self.netns, self.name)})

    def apply(self, host: Host) -> None:
        host.add_vlan(self.name, self.netns, self.parent, self.vid)

    def inverse(self) -> Op | None:
        return None if self.netns else DeleteLink(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class CreateMacvtap(Op):
    """A macvtap in the host namespace. QEMU opens /dev/tapN, where N is its ifindex."""

    name: str
    lower: str
    mode: str
    summary_text: ClassVar[str] = "create macvtap {name} on {lower}, mode {mode}"

    def requires(self) -> frozenset[str]:
        return frozenset({dev_resource(None, self.lower)})

    def provides(self) -> frozenset[str]:
        return frozenset({dev_resource(None, self.name)})

    def apply(self, host: Host) -> None:
        host.add_macvtap(self.name, self.lower, self.mode)

    def inverse(self) -> Op:
        return DeleteLink(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class CreateTap(Op):
    name: str
    summary_text: ClassVar[str] = "create tap device {name}"

    def provides(self) -> frozenset[str]:
        return frozenset({dev_resource(None, self.name)})

    def apply(self, host: Host) -> None:
        host.add_tap(self.name)

    def inverse(self) -> Op:
        return DeleteLink(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class MoveLink(Op):
    """Move a host interface into a namespace under its name there: a switch's own port (an OVS internal port)
    becomes a node's interface. It needs no undo: it goes with the switch's port, or with the namespace."""

    name: str
    netns: str
    new_name: str
    summary_text: ClassVar[str] = "move {name} into {netns} as {new_name}"

    def requires(self) -> frozenset[str]:
        return frozenset({dev_resource(None, self.name), ns_resource(self.netns)})

    def provides(self) -> frozenset[str]:
        return frozenset({dev_resource(self.netns, self.new_name)})

    def apply(self, host: Host) -> None:
        host.move_link(self.name, self.netns, self.new_name)


@dataclass(frozen=True, kw_only=True)
class SetMaster(Op):
    name: str
    master: str
    hairpin: bool = False
    summary_text: ClassVar[str] = "attach {name} to bridge {master}"

    def requires(self) -> frozenset[str]:
        return frozenset({dev_resource(None, self.name), dev_resource(None, self.master)})

    def provides(self) -> frozenset[str]:
        return frozenset({bridge_port_resource(self.name)})

    def apply(self, host: Host) -> None:
        host.set_master(self.name, self.master)
        if self.hairpin:
            host.set_hairpin(self.name, True)


@dataclass(frozen=True, kw_only=True)
class SetBridgeVlans(Op):
    """The VLANs of a port of a VLAN-filtering bridge, in place of VLAN 1 untagged: `untagged`, the VLAN its
    untagged frames belong to and leave it in (an access port's, a trunk's native VLAN; 0 for none), and `tagged`,
    those it carries tagged (a trunk's). It goes with the port."""

    name: str
    untagged: int = 0
    tagged: tuple[int, ...] = ()
    summary_text: ClassVar[str] = "set the VLANs of bridge port {name}"

    def requires(self) -> frozenset[str]:
        return frozenset({bridge_port_resource(self.name)})

    def apply(self, host: Host) -> None:
        host.delete_bridge_vlan(self.name, DEFAULT_VLAN)
        for vid in self.tagged:
            host.add_bridge_vlan(self.name, vid, pvid=False, untagged=False)
        if self.untagged:
            host.add_bridge_vlan(self.name, self.untagged, pvid=True, untagged=True)


@dataclass(frozen=True, kw_only=True)
class ConfigureLink(DeviceOp):
    """MTU, MAC, the ownership tag (ifalias) and link state of one interface."""

    mtu: int = 0
    mac: str = ""
    alias: str = ""
    up: bool = True
    summary_text: ClassVar[str] = "configure and bring up {name}"

    def provides(self) -> frozenset[str]:
        return frozenset({up_resource(self.netns, self.name)}) if self.up else frozenset()

    def apply(self, host: Host) -> None:
        host.set_link(self.name, self.netns, mtu=self.mtu or None, mac=self.mac or None, alias=self.alias or None,
                      up=self.up)


@dataclass(frozen=True, kw_only=True)
class SetLinkState(DeviceOp):
    """An interface of a running lab set up or down (`vtopo node` and `vtopo link`), and with `carrier` given, its
    carrier kept or cut while it stays up (IFLA_PROTO_DOWN: a tunnel's end, which has no peer to lose it from)."""

    up: bool
    carrier: bool | None = None

    def apply(self, host: Host) -> None:
        host.set_link(self.name, self.netns, up=self.up, carrier=self.carrier)

    def summary(self) -> str:
        carrier = "" if self.carrier is None else " with its carrier" if self.carrier else " without carrier"
        return f"set {self.name} {'up' if self.up else 'down'}{carrier}"


@dataclass(frozen=True, kw_only=True)
class AddAddress(DeviceOp):
    cidr: str
    summary_text: ClassVar[str] = "address {cidr} on {name}"

    def provides(self) -> frozenset[str]:
        return frozenset({addresses_resource(self.netns)})

    def apply(self, host: Host) -> None:
        """An IPv6 address skips duplicate address detection: usable at once, as a lab's addresses are planned."""
        host.add_address(self.name, self.netns, self.cidr, nodad=":" in self.cidr)

    def removal(self) -> DeleteAddress:
        """What takes the address away from an interface that stays (its namespace takes it along otherwise)."""
        return DeleteAddress(owner=self.owner, name=self.name, netns=self.netns, cidr=self.cidr)


@dataclass(frozen=True, kw_only=True)
class DeleteAddress(DeviceOp):
    """An address taken from an interface that stays, by `deploy --update`; one already gone is no error."""

    cidr: str
    summary_text: ClassVar[str] = "remove address {cidr} from {name}"

    def apply(self, host: Host) -> None:
        host.delete_address(self.name, self.netns, self.cidr)


@dataclass(frozen=True, kw_only=True)
class AddRoute(Op):
    """A route via `gateway`, IPv4 or IPv6; out of `device` when the gateway is link-local (fe80::), which only
    the device it is reached on makes unique."""

    netns: str | None
    destination: str
    gateway: str
    device: str = ""
    summary_text: ClassVar[str] = "route {destination} via {gateway}"

    def requires(self) -> frozenset[str]:
        device = {dev_resource(self.netns, self.device), up_resource(self.netns, self.device)} if self.device else set()
        return frozenset({addresses_resource(self.netns), *device})

    def apply(self, host: Host) -> None:
        host.add_route(self.netns, self.destination, self.gateway, self.device, ROUTE_PROTOCOL)

    def removal(self) -> DeleteRoute:
        """What takes the route away from a namespace that stays (the namespace takes it along otherwise)."""
        return DeleteRoute(owner=self.owner, netns=self.netns, destination=self.destination, gateway=self.gateway,
                           device=self.device)


@dataclass(frozen=True, kw_only=True)
class DeleteRoute(Op):
    """A route taken from a namespace that stays, by `deploy --update`; one already gone (with its address, say) is
    no error."""

    netns: str | None
    destination: str
    gateway: str
    device: str = ""
    summary_text: ClassVar[str] = "remove route {destination} via {gateway}"

    def apply(self, host: Host) -> None:
        host.delete_route(self.netns, self.destination, self.gateway, self.device)


@dataclass(frozen=True, kw_only=True)
class SetSysctl(Op):
    """A per-namespace sysctl; in the host namespace only the per-device sysctl of a device the lab made. In a
    namespace of the lab's user namespace `userns`, written by root of that user namespace (the lab's owner), never by
    the host's root: the kernel judges what a lab file asks with the lab's powers (it loads no module for it)."""

    netns: str | None
    key: str
    value: str
    device: str = ""
    userns: str = ""
    summary_text: ClassVar[str] = "sysctl {key}={value}"

    def requires(self) -> frozenset[str]:
        return frozenset({ns_resource(self.netns)} | ({dev_resource(self.netns, self.device)} if self.device else set()))

    def apply(self, host: Host) -> None:
        host.set_sysctl(self.netns, self.key, self.value, self.userns)


def own_arp_only(owner: str, device: str) -> tuple[SetSysctl, SetSysctl]:
    """A device of the host's namespace that vtopo gives addresses of the host's (a lab's gateway): on it the host
    answers ARP only for an address that device holds (arp_ignore 1), not for those of its other networks, and asks
    with a source address of that device's own (arp_announce 2). Set on the device alone, never `all` or `default`."""
    return (SetSysctl(owner=owner, netns=None, key=f"net/ipv4/conf/{device}/arp_ignore", value="1", device=device),
            SetSysctl(owner=owner, netns=None, key=f"net/ipv4/conf/{device}/arp_announce", value="2", device=device))


@dataclass(frozen=True, kw_only=True)
class SetImpairment(DeviceOp):
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    loss_pct: float = 0.0
    rate_mbit: float = 0.0
    summary_text: ClassVar[str] = "impair {name} with netem"

    def apply(self, host: Host) -> None:
        host.set_impairment(self.name, self.netns, delay_ms=self.delay_ms, jitter_ms=self.jitter_ms,
                            loss_pct=self.loss_pct, rate_mbit=self.rate_mbit)


@dataclass(frozen=True, kw_only=True)
class SetTxChecksum(DeviceOp):
    """OVS's userspace datapath does not fill in TCP checksums that veth offloaded, so the sender must."""

    enabled: bool = False
    summary_text: ClassVar[str] = "turn TX checksum offload off on {name} (OVS userspace datapath)"

    def apply(self, host: Host) -> None:
        host.set_tx_checksum(self.name, self.netns, self.enabled)
