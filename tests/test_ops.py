"""The op classes register themselves, and every op survives the journal's JSON round trip."""
from __future__ import annotations

from vtopo import ops as o
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import open_lab, registry
from vtopo.resources import TOPOLOGIES


def test_every_op_class_registers_itself_and_no_abstract_base_does():
    assert "DeviceOp" not in o.OP_TYPES and "FileOp" not in o.OP_TYPES
    assert {"CreateVeth", "OvsAddFlows", "WriteFile", "StartProcess", "StopProcess"} <= set(o.OP_TYPES)
    assert all(issubclass(cls, o.Op) and cls.__name__ == name for name, cls in o.OP_TYPES.items())


def test_ops_of_every_shipped_lab_round_trip_through_json():
    for lab_file in sorted(TOPOLOGIES.glob("*.vtopo")):
        for op in compile_plan(resolve(open_lab(lab_file).topology, registry())).ops:
            assert o.op_from_json(op.to_json()) == op
            inverse = op.inverse()
            assert inverse is None or o.op_from_json(inverse.to_json()) == inverse
