"""Whether this host can make the difference a comparison is about. Two cells whose VMs the lab asks to differ in
vhost-net compare nothing when the host gives both the same: the line says so where the ratio would be."""
from __future__ import annotations

from vtopo.deployed import DeployedLab
from vtopo.host.vhost import VHOST_DEVICE, VhostState
from vtopo.model.measurements import Pair


def not_measurable(lab: DeployedLab, cell: Pair, versus: Pair) -> str:
    """Why the two pairs cannot show the difference the lab draws between them here; "" when they can."""
    return vhost_unmade([_vhost_states(lab, pair) for pair in (cell, versus)])


def vhost_unmade(sides: list[list[VhostState]]) -> str:
    """Why two sides (each the VMs of a pair) that the lab asks to differ in vhost-net do not differ here."""
    asked = [any(state.asked for state in side) for side in sides]
    if not all(sides) or asked[0] == asked[1]:
        return ""  # the lab draws no vhost-net difference between them
    in_effect = [_in_effect(side) for side in sides]
    if None in in_effect or in_effect[0] != in_effect[1]:
        return ""
    if in_effect[0]:
        return "both guests use vhost-net"
    state = next(state for side in sides for state in side if state.asked)
    why = ("this host's kernel has no vhost-net" if not state.kernel_has_vhost else
           f"QEMU, pid {state.pid}, does not hold {VHOST_DEVICE}")
    return f"neither guest uses vhost-net ({why})"


def _vhost_states(lab: DeployedLab, pair: Pair) -> list[VhostState]:
    states = (lab.vhost_state(name) for name in (pair.source, pair.destination))
    return [state for state in states if state is not None]


def _in_effect(side: list[VhostState]) -> bool | None:
    """Whether vhost-net moves the packets of any VM of the pair; None when this process cannot tell."""
    known = [state.in_effect for state in side]
    return True if True in known else None if None in known else False
