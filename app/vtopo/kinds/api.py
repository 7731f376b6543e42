"""Everything a node-kind plugin may use, built-in or third-party: import from here and nowhere else in vtopo.

A plugin declares a `NodeKind` subclass, its settings dataclass (fields made with `setting`), and yields ops
from its hooks. The rest of vtopo can change shape; this module keeps its names.
"""
from __future__ import annotations

from vtopo.kinds.check_types import CheckType, Probe, Verdict
from vtopo.kinds.contract import (ECHO_SERVER, IPERF3_SERVER, CannotRunInside, EmptySettings, EndContext, LabContext,
                                  LoopProtection, NodeContext, NodeKind, PortSpec, Role, SegmentKind)
from vtopo.kinds.environment import MAX_INTERFACE_NAME, HostFacts, LabNames
from vtopo.kinds.settings import setting
from vtopo.kinds.trust import BUILTIN_IMAGE, image_path, image_problem
from vtopo.model.problems import ConsentRequest, Problem, Severity
from vtopo.ops import (AddAddress, AddRoute, ConfigureLink, CreateBridge, CreateNamespace, CreateVeth, MakeDirectory,
                       Op, OvsAddBridge, OvsAddFlows, OvsAddPort, SetMaster, SetSysctl, SetTxChecksum, StartProcess,
                       WriteFile, addresses_resource, dev_resource, up_resource)

__all__ = [
    "BUILTIN_IMAGE", "ECHO_SERVER", "IPERF3_SERVER", "MAX_INTERFACE_NAME", "AddAddress", "AddRoute", "CannotRunInside", "CheckType",
    "ConfigureLink", "ConsentRequest", "CreateBridge", "CreateNamespace", "CreateVeth", "EmptySettings",
    "EndContext", "HostFacts", "LabContext", "LabNames", "LoopProtection", "MakeDirectory", "NodeContext",
    "NodeKind", "Op", "OvsAddBridge", "OvsAddFlows", "OvsAddPort", "PortSpec", "Probe", "Problem", "Role",
    "SegmentKind", "SetMaster", "SetSysctl", "SetTxChecksum", "Severity", "StartProcess", "Verdict", "WriteFile",
    "addresses_resource", "dev_resource", "image_path", "image_problem", "setting", "up_resource",
]
