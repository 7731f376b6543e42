"""Typed host operations, in a package by what they act on: namespaces, netdev, ovs, files, process, domains, tunnels
(base: what all share). Each applies itself to a Host (host: the actions), which does it (vtopo.host.kernel_host) or
writes it as a script (script).

Import them from here: `from vtopo import ops as o`, then `o.CreateVeth(...)`.
"""
from __future__ import annotations

from vtopo.ops.base import HOST, OP_TYPES, Op, addresses_resource, dev_resource, ns_resource, op_from_json, up_resource
from vtopo.ops.vm_domain_ops import DOMAIN_XMLNS, LIBVIRT_QEMU_RUN_DIR, DestroyDomain, ResumeDomain, StartDomain
from vtopo.ops.firewall import ContainForwarding, RemoveNftTable
from vtopo.ops.files import (FileOp, MakeDirectory, RemoveDirectory, RemoveFile, WriteFile, WriteHostsFile,
                             WriteScript)
from vtopo.ops.images import RemoveImageContainer, RunImage
from vtopo.privileges import as_account, drop_privileges
from vtopo.model.rules import DEFAULT_VLAN, NETNS_DIR, NODE_FILES_DIR, NODE_TMPFS, Place, ovs_lab_tag
from vtopo.ops.namespaces import (CreateNamespace, CreateUserNamespace, DeleteNamespace, IsolateNode,
                                  RemoveNamespaceFiles, node_resource, user_resource)
from vtopo.ops.netdev import (ROUTE_PROTOCOL, TBF_LATENCY_MS, AddAddress, AddRoute, ConfigureLink,
                              CreateBridge, CreateLinkBridge, CreateMacvlan, CreateMacvtap, CreateTap, CreateVeth,
                              CreateVlan, DeleteAddress, DeleteLink, DeleteRoute, DeviceOp, LinkType, MacvlanMode, MoveLink, SetBridgeVlans, SetImpairment,
                              SetLinkState, SetMaster, SetSysctl, SetTxChecksum, Tool, bridge_port_resource, own_arp_only,
                              tbf_burst, tbf_rate)
from vtopo.ops.host import USER_HZ, Host, RouteProtocol, clock_t
from vtopo.ops.ovs import (INTERNAL_PORT, OvsAddBridge, OvsAddFlows, OvsAddPort, OvsAddSubinterface, OvsDeleteBridge,
                           OvsVlanMode)
from vtopo.ops.process import (VHOST_DEVICE, LoadConfig, ReadState, RunCommand, Signal, SignalProcesses,
                               StartProcess, StopProcess)
from vtopo.ops.script import ScriptHost, comment, script_of
from vtopo.ops.tunnels import CreateVxlan

__all__ = [
    "AddAddress", "AddRoute", "ConfigureLink", "ContainForwarding", "CreateBridge", "CreateLinkBridge", "CreateMacvlan",
    "CreateMacvtap", "CreateNamespace", "CreateTap", "CreateUserNamespace", "CreateVeth", "CreateVlan", "CreateVxlan",
    "DEFAULT_VLAN", "DOMAIN_XMLNS", "DeleteAddress", "DeleteLink", "DeleteRoute", "DeleteNamespace", "DestroyDomain", "DeviceOp", "FileOp", "HOST", "Host",
    "INTERNAL_PORT", "IsolateNode", "LIBVIRT_QEMU_RUN_DIR", "LinkType", "LoadConfig", "MacvlanMode", "MakeDirectory",
    "MoveLink", "NETNS_DIR", "NODE_FILES_DIR", "NODE_TMPFS", "OP_TYPES", "Op", "OvsAddBridge", "OvsAddFlows",
    "OvsAddPort", "OvsAddSubinterface", "OvsDeleteBridge", "OvsVlanMode", "Place", "ROUTE_PROTOCOL", "RemoveDirectory", "RemoveFile",
    "ReadState", "RemoveImageContainer", "RemoveNamespaceFiles", "RemoveNftTable", "ResumeDomain", "RouteProtocol",
    "RunCommand",
    "RunImage", "ScriptHost", "Signal", "SignalProcesses",
    "SetBridgeVlans", "SetImpairment", "SetLinkState", "SetMaster", "SetSysctl", "SetTxChecksum", "StartDomain", "StartProcess",
    "StopProcess", "TBF_LATENCY_MS", "Tool", "USER_HZ", "VHOST_DEVICE", "WriteFile", "WriteHostsFile",
    "WriteScript", "addresses_resource", "as_account", "bridge_port_resource", "clock_t", "comment", "dev_resource", "drop_privileges",
    "node_resource", "ns_resource", "op_from_json", "own_arp_only", "ovs_lab_tag", "script_of", "tbf_burst", "tbf_rate",
    "up_resource", "user_resource",
]
