"""How a link is made (its medium), and what keeps its impairment from being applied: what resolving a lab decides of
its links, before lowering makes their ops (vtopo.compile.links)."""
from __future__ import annotations

from vtopo.kinds.contract import SWITCH_PORT, EndContext, ForwardsInUserspace, Role, SegmentKind
from vtopo.lab_terms import HostFacts
from vtopo.model.topology import IMPAIRMENT_LIMITS, Impairment

BRIDGED_TAPS = "bridged tap"
"""The medium of a link from a VM to another VM, a container or a router: the VM's tap, and the other VM's tap or a
veth into the node, joined by the link's own bridge (LabNames.link_bridge)."""


def medium_for(a: EndContext, b: EndContext, deployed: str | None = None) -> str | None:
    """veth, a switch port, macvlan, macvtap, tap or bridged taps; None when these two roles cannot be linked. A link with an
    impairment stays a veth: its qdiscs go on both ends, and a switch's own port has none. So does a link to the
    host's own namespace, which has no namespace to move a port into. A deployed link is what its deploy made of it
    (`deployed`, its medium then), whatever its impairment is now: a rate set live, or set back to 0, changes no
    medium."""
    roles = {a.kind.role, b.kind.role}
    if roles == {Role.NAMESPACE, Role.SWITCH}:
        switch, node = (a, b) if a.kind.role is Role.SWITCH else (b, a)
        shaped = deployed == "veth" if deployed in (SWITCH_PORT, "veth") else a.link.impairment.active
        makes_port = (isinstance(switch.kind, ForwardsInUserspace) and switch.kind.makes_namespace_ports(switch.owner)
                      and not shaped and node.kind.netns(node.owner) is not None)
        return SWITCH_PORT if makes_port else "veth"
    if roles <= {Role.NAMESPACE, Role.SWITCH}:
        return "veth"
    if Role.SEGMENT in roles and len(roles) == 2:
        segment = a if a.kind.role is Role.SEGMENT else b
        child = b if segment is a else a
        if not isinstance(segment.kind, SegmentKind):
            return None
        return segment.kind.child_media.get(child.kind.role)
    if roles == {Role.MACHINE, Role.NAMESPACE}:
        node = a if a.kind.role is Role.NAMESPACE else b
        return "tap" if node.kind.netns(node.owner) is None else BRIDGED_TAPS  # the host holds the tap itself
    if roles == {Role.MACHINE, Role.SWITCH}:
        return "tap"
    if roles == {Role.MACHINE}:
        return BRIDGED_TAPS
    return None


def impairment_problem(impairment: Impairment, facts: HostFacts) -> str | None:
    """What keeps `impairment` from being applied on a host with `facts` (at a deploy or live), or None."""
    outside = [f"{key} {low:g} to {high:g}" for key, (low, high) in IMPAIRMENT_LIMITS.items()
               if not low <= getattr(impairment, key) <= high]
    if outside:
        return f"impairments must be within their ranges: {', '.join(outside)}"
    if (impairment.delay_ms or impairment.jitter_ms or impairment.loss_pct) and not facts.netem and facts.probed:
        return ("delay, jitter and loss need the kernel's netem qdisc (sch_netem), which this kernel does not have; "
                "only a rate limit (tbf) can be applied here")
    return None
