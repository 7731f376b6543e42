"""Everything a node-kind plugin may use, built-in or third-party: import from here and nowhere else in vtopo.

A plugin declares a `NodeKind` subclass, its settings dataclass (fields made with `setting`), and yields ops
from its hooks. The rest of vtopo can change shape; this module keeps its names.

The ops, what the hooks tell the host layer about a running node (NodeFiles, NodeImage..., a DHCP server's Lease) and
the rule of a VM's disk image (image_problem) load with the first hook that names one (`api.StartProcess(...)`, after
`from vtopo.kinds import api`): listing the kinds (`vtopo kinds`, the designer's palette) or validating a lab offline
defines none of their classes. A name imported from here loads them at once, and works as well.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from vtopo.kinds.check_types import CheckType, Probe, Verdict, with_cause
from vtopo.kinds.contract import (ECHO_SERVER, IPERF3_SERVER, SWITCH_PORT, CannotRunInside, EmptySettings, EndContext,
                                  FileReader, ForwardsInUserspace, GeneratesConfig, KeepsVlansApart, MakesTaggedPorts,
                                  NodeContext, NodeKind, PortSpec, PortVlans, ProtectsLoops, Reader, Role,
                                  RoutesBetweenVlans, RunsAsContainer, RunsMachine, SavesState, SegmentKind, ServesDhcp,
                                  svi_name)
from vtopo.lab_terms import KVM_GROUP, MAX_INTERFACE_NAME
from vtopo.kinds.settings import setting
from vtopo.kinds.vlans import EXAMPLE as VLANS_EXAMPLE, HIGHEST_VLAN, LOWEST_VLAN, parse_port, port_vlans
from vtopo.model.problems import ConsentRequest, Problem, Severity
from vtopo.model.rules import DEFAULT_VLAN, subinterface_name

if TYPE_CHECKING:
    from vtopo.kinds.disk_images import BUILTIN_IMAGE, image_path, image_problem
    from vtopo.kinds.leases import UNKNOWN_CLIENT, Lease, leases_text
    from vtopo.kinds.running import ConfigCheck, MachineProcess, NodeFiles, NodeImage, SavedState
    from vtopo.ops import (DOMAIN_XMLNS, INTERNAL_PORT, LIBVIRT_QEMU_RUN_DIR, VHOST_DEVICE, AddAddress,
                           AddRoute, ConfigureLink, CreateBridge, CreateNamespace, CreateVeth, LoadConfig, MakeDirectory,
                           MoveLink, Op, OvsAddBridge, OvsAddFlows, OvsAddPort, OvsAddSubinterface, OvsVlanMode,
                           ResumeDomain, SetBridgeVlans, SetMaster, SetSysctl, SetTxChecksum, StartDomain, StartProcess,
                           WriteFile, WriteScript, addresses_resource, dev_resource, drop_privileges, own_arp_only,
                           up_resource)

__all__ = [
    # what a kind declares, the capabilities it may add, and the node and link ends its hooks receive
    "NodeKind", "SegmentKind", "Role", "PortSpec", "EmptySettings", "setting", "SWITCH_PORT",
    "RunsAsContainer", "RunsMachine", "ServesDhcp", "GeneratesConfig", "SavesState", "KeepsVlansApart",
    "RoutesBetweenVlans", "MakesTaggedPorts", "ForwardsInUserspace", "ProtectsLoops",
    "NodeContext", "EndContext", "CannotRunInside",
    # what the hooks return
    "Problem", "Severity", "ConsentRequest", "PortVlans", "NodeFiles", "NodeImage", "MachineProcess", "ConfigCheck",
    "SavedState", "Reader", "FileReader", "Lease", "UNKNOWN_CLIENT", "leases_text", "ECHO_SERVER", "IPERF3_SERVER",
    "CheckType", "Probe", "Verdict", "with_cause",
    # the ops that lower and attach yield
    "Op", "AddAddress", "AddRoute", "ConfigureLink", "CreateBridge", "CreateNamespace", "CreateVeth", "LoadConfig",
    "MakeDirectory", "MoveLink", "OvsAddBridge", "OvsAddFlows", "OvsAddPort", "OvsAddSubinterface", "OvsVlanMode",
    "ResumeDomain", "SetBridgeVlans", "SetMaster", "SetSysctl", "SetTxChecksum", "StartDomain", "StartProcess",
    "WriteFile", "WriteScript", "addresses_resource", "dev_resource", "up_resource", "drop_privileges", "own_arp_only",
    "DEFAULT_VLAN", "DOMAIN_XMLNS", "INTERNAL_PORT", "LIBVIRT_QEMU_RUN_DIR", "VHOST_DEVICE",
    # the names and rules a kind shares with the core
    "KVM_GROUP", "MAX_INTERFACE_NAME", "BUILTIN_IMAGE", "image_path", "image_problem", "subinterface_name", "svi_name",
    "HIGHEST_VLAN", "LOWEST_VLAN", "VLANS_EXAMPLE", "parse_port", "port_vlans",
]


RUNNING = {
    **dict.fromkeys(("NodeFiles", "NodeImage", "MachineProcess", "ConfigCheck", "SavedState"), "vtopo.kinds.running"),
    **dict.fromkeys(("Lease", "UNKNOWN_CLIENT", "leases_text"), "vtopo.kinds.leases"),
    **dict.fromkeys(("BUILTIN_IMAGE", "image_path", "image_problem"), "vtopo.kinds.disk_images"),
}
"""The module of each name above that tells the host layer about a running node, or rules a VM's disk image; the
others __getattr__ finds are the ops'."""


def __getattr__(name: str) -> Any:
    """An op's class, a name that goes with the ops, one that tells the host layer about a running node (its files,
    image, machine, configuration check, saved state, DHCP leases) or the rule of a VM's disk image, loaded when a
    plugin first asks for it."""
    if name in __all__:
        return getattr(import_module(RUNNING.get(name, "vtopo.ops")), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
