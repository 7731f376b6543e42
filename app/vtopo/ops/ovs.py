"""Open vSwitch ops: each gives its ovs-vsctl commands once, which the host runs (a deploy batches them) or shows."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from vtopo.model.rules import ovs_lab_tag
from vtopo.ops.base import Op, dev_resource
from vtopo.ops.host import Host

INTERNAL_PORT = "internal"


class OvsVlanMode(StrEnum):
    """A port's vlan_mode, as OVS names it."""

    ACCESS = "access"  # one VLAN (tag), untagged
    TRUNK = "trunk"  # the VLANs in trunks, tagged; untagged frames are dropped
    NATIVE_UNTAGGED = "native-untagged"  # a trunk whose native VLAN (tag) is untagged


@dataclass(frozen=True, kw_only=True)
class OvsAddBridge(Op):
    name: str
    datapath: str
    fail_mode: str
    lab: str
    summary_text: ClassVar[str] = "create Open vSwitch bridge {name} ({datapath} datapath)"

    def provides(self) -> frozenset[str]:
        return frozenset({f"ovs:{self.name}"})

    def vsctl(self) -> list[list[str]]:
        return [["add-br", self.name], ["set", "Bridge", self.name, f"datapath_type={self.datapath}",
                                         f"fail_mode={self.fail_mode}", ovs_lab_tag(self.lab)]]

    def apply(self, host: Host) -> None:
        host.vsctl(self.vsctl())

    def inverse(self) -> Op:
        return OvsDeleteBridge(owner=self.owner, name=self.name)


@dataclass(frozen=True, kw_only=True)
class OvsDeleteBridge(Op):
    name: str
    summary_text: ClassVar[str] = "delete Open vSwitch bridge {name}"

    def vsctl(self) -> list[list[str]]:
        return [["--if-exists", "del-br", self.name]]

    def apply(self, host: Host) -> None:
        host.vsctl(self.vsctl())


@dataclass(frozen=True, kw_only=True)
class OvsAddPort(Op):
    bridge: str
    name: str
    ofport: int
    lab: str
    port_type: str = ""  # the Interface type; "" is a system port (a packet socket on the device)
    vlan_mode: str = ""  # an OvsVlanMode, or "" for a port that passes every frame as it is
    tag: int = 0  # the access port's VLAN, or the trunk's native VLAN
    trunks: tuple[int, ...] = ()  # the VLANs a trunk carries tagged
    summary_text: ClassVar[str] = "add port {name} to {bridge} as OpenFlow port {ofport}"

    @property
    def makes_device(self) -> bool:
        """An internal port is a device OVS makes; any other port is a device that exists already."""
        return self.port_type == INTERNAL_PORT

    def requires(self) -> frozenset[str]:
        return frozenset({f"ovs:{self.bridge}"} | (set() if self.makes_device else {dev_resource(None, self.name)}))

    def provides(self) -> frozenset[str]:
        return frozenset({f"ovsport:{self.bridge}/{self.ofport}"} |
                         ({dev_resource(None, self.name)} if self.makes_device else set()))

    def vlan_columns(self) -> list[str]:
        """The port's VLAN columns, as `ovs-vsctl add-port BRIDGE PORT tag=10` sets them."""
        if not self.vlan_mode:
            return []
        return [f"vlan_mode={self.vlan_mode}", *([f"tag={self.tag}"] if self.tag else []),
                *([f"trunks={','.join(map(str, self.trunks))}"] if self.trunks else [])]

    def vsctl(self) -> list[list[str]]:
        tag = ovs_lab_tag(self.lab)
        interface = ["set", "Interface", self.name, f"ofport_request={self.ofport}", tag]
        if self.port_type:
            interface.append(f"type={self.port_type}")
        return [["add-port", self.bridge, self.name, *self.vlan_columns()], ["set", "Port", self.name, tag], interface]

    def apply(self, host: Host) -> None:
        host.vsctl(self.vsctl())


@dataclass(frozen=True, kw_only=True)
class OvsAddSubinterface(OvsAddPort):
    """A node's 802.1Q subinterface `subinterface` where the kernel has no VLAN devices (8021q): an internal port of
    the switch its interface is linked to, an access port in the subinterface's VLAN (`tag`), which then moves into
    the node under the subinterface's name. The node sees an interface whose frames are in that VLAN, as it would
    see a VLAN device."""

    port_type: str = INTERNAL_PORT
    vlan_mode: str = OvsVlanMode.ACCESS
    subinterface: str
    summary_text: ClassVar[str] = ("make subinterface {subinterface} in VLAN {tag} as {name}, a tagged internal port "
                                   "of OVS switch {bridge}: this kernel has no 802.1Q VLAN devices (8021q)")


@dataclass(frozen=True, kw_only=True)
class OvsAddFlows(Op):
    bridge: str
    flows: tuple[str, ...]
    ports: tuple[int, ...]
    summary_text: ClassVar[str] = "install OpenFlow rules on {bridge}"

    def requires(self) -> frozenset[str]:
        return frozenset({f"ovs:{self.bridge}"} | {f"ovsport:{self.bridge}/{p}" for p in self.ports})

    def apply(self, host: Host) -> None:
        host.add_flows(self.bridge, self.flows)
