"""Everything a node-kind plugin may use, built-in or third-party: import from here and nowhere else in vtopo.

A plugin declares a `NodeKind` subclass, its settings dataclass (fields made with `setting`), and yields ops
from its hooks. The rest of vtopo can change shape; this module keeps its names.
"""
from __future__ import annotations

from vtopo.kinds.check_types import CheckType, Probe, Verdict, with_cause
from vtopo.kinds.contract import (ECHO_SERVER, IPERF3_SERVER, CannotRunInside, ConfigCheck, EmptySettings, EndContext,
                                  FileReader, LabContext, LoopProtection, MachineProcess, NodeContext, NodeFiles, NodeImage,
                                  NodeKind, PortSpec, PortVlans, Reader, Role, SavedState, SegmentKind, SWITCH_PORT,
                                  svi_name)
from vtopo.lab_terms import KVM_GROUP, MAX_INTERFACE_NAME, HostFacts, LabNames
from vtopo.kinds.leases import UNKNOWN_CLIENT, Lease, leases_text
from vtopo.kinds.settings import setting
from vtopo.kinds.trust import BUILTIN_IMAGE, image_path, image_problem
from vtopo.kinds.vlans import EXAMPLE as VLANS_EXAMPLE, HIGHEST_VLAN, LOWEST_VLAN, parse_port, port_vlans
from vtopo.model.problems import ConsentRequest, Problem, Severity
from vtopo.model.rules import subinterface_name
from vtopo.ops import (DEFAULT_VLAN, DOMAIN_XMLNS, INTERNAL_PORT, LIBVIRT_QEMU_RUN_DIR, VHOST_DEVICE, AddAddress,
                       AddRoute, ConfigureLink, CreateBridge, CreateNamespace, CreateVeth, LoadConfig, MakeDirectory,
                       MoveLink, Op, OvsAddBridge, OvsAddFlows, OvsAddPort, OvsAddSubinterface, OvsVlanMode,
                       ResumeDomain, SetBridgeVlans, SetMaster, SetSysctl, SetTxChecksum, StartDomain, StartProcess,
                       WriteFile, WriteScript, addresses_resource, dev_resource, drop_privileges, up_resource)

__all__ = [
    "BUILTIN_IMAGE", "DEFAULT_VLAN", "DOMAIN_XMLNS", "ECHO_SERVER", "HIGHEST_VLAN", "INTERNAL_PORT", "IPERF3_SERVER",
    "KVM_GROUP", "LIBVIRT_QEMU_RUN_DIR", "LOWEST_VLAN", "MAX_INTERFACE_NAME", "SWITCH_PORT", "UNKNOWN_CLIENT",
    "VLANS_EXAMPLE",
    "AddAddress", "AddRoute", "CannotRunInside", "CheckType", "ConfigCheck", "ConfigureLink", "ConsentRequest",
    "CreateBridge", "CreateNamespace", "CreateVeth", "EmptySettings", "EndContext", "FileReader", "HostFacts", "Lease",
    "LabContext", "LabNames",
    "LoadConfig", "LoopProtection", "MachineProcess", "MakeDirectory", "MoveLink", "NodeContext", "NodeFiles", "NodeImage",
    "NodeKind", "Op", "OvsAddBridge", "OvsAddFlows", "OvsAddPort", "OvsAddSubinterface", "OvsVlanMode", "PortSpec", "PortVlans", "Probe",
    "Problem", "Reader", "ResumeDomain", "Role", "SavedState", "SegmentKind", "SetBridgeVlans", "SetMaster",
    "SetSysctl", "SetTxChecksum", "Severity", "StartDomain", "StartProcess", "VHOST_DEVICE", "Verdict", "WriteFile",
    "WriteScript", "addresses_resource", "dev_resource", "drop_privileges", "image_path", "image_problem", "parse_port",
    "leases_text", "port_vlans", "setting", "subinterface_name", "svi_name", "up_resource",
    "with_cause",
]
