"""A node's 802.1Q subinterfaces (eth0.10): how each one is made on this host, and what is wrong with them
(vtopo.compile.links makes their ops).

Where the kernel has 802.1Q VLAN devices (8021q), a subinterface is one, on its interface. Where it has not, the switch
the interface is linked to makes it if it can: Open vSwitch adds an internal port in the subinterface's VLAN and moves
it into the node under the subinterface's name. Either way the node, FRR and the student see the same interface, with
the same addresses, in the same VLAN. A VM's built-in guest makes its own, as kernel VLAN devices in the guest's
kernel, on the trunk its NIC is linked to (vtopo_kinds.vm).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from vtopo.kinds.contract import EndContext, MakesTaggedPorts, Role
from vtopo.lab_terms import MAX_INTERFACE_NAME
from vtopo.model.problems import Problem
from vtopo.model.rules import subinterface_name

NO_VLAN_DEVICES = "the kernel's 802.1Q VLAN devices (8021q, CONFIG_VLAN_8021Q), which this kernel does not have"


def subinterface_problems(end: EndContext) -> Iterator[Problem]:
    """What the lab itself says wrong of the subinterfaces at this end, before anything is named: a kind that has
    none, and a VLAN given twice."""
    subinterfaces = end.end.interface.subinterfaces
    if not subinterfaces:
        return
    side, subject = f"{end.node.name}:{end.end.port}", f"link {end.link_name}"
    if end.kind.role not in (Role.NAMESPACE, Role.MACHINE):  # a VM's guest makes its own (vtopo_kinds.vm)
        yield Problem(f"{side}: a {end.kind.name} port has no subinterfaces; give them to the node at the other end"
                      + (f", or {end.kind.address_hint}" if end.kind.address_hint else ""), subject, "", end.link.id)
    for vlan, count in sorted(Counter(sub.vlan for sub in subinterfaces).items()):
        if count > 1:
            yield Problem(f"{side}: VLAN {vlan} has {count} subinterfaces; give {subinterface_name(end.end.port, vlan)} "
                          "all its addresses", subject, "", end.link.id)


def made_by_switch(end: EndContext) -> bool:
    """Whether this end's subinterfaces are ports of the switch at the other end: the kernel makes no VLAN devices
    (as far as the host was probed) and the switch can."""
    return not end.owner.facts.vlan_devices and end.peer is not None and isinstance(end.other.kind, MakesTaggedPorts)


def named_problems(end: EndContext) -> Iterator[Problem]:
    """Once the ends are named: a subinterface name too long for the kernel, and a subinterface that neither the
    kernel nor the switch at the other end can make on this host."""
    subinterfaces = end.end.interface.subinterfaces
    if not subinterfaces or end.kind.role is not Role.NAMESPACE or not end.device:
        return
    side, subject = f"{end.node.name}:{end.end.port}", f"node {end.node.name}"
    for sub in subinterfaces:
        name = subinterface_name(end.device, sub.vlan)
        if len(name) > MAX_INTERFACE_NAME:
            yield Problem(f"{side}: subinterface {name!r} is {len(name)} characters; the kernel allows "
                          f"{MAX_INTERFACE_NAME}. Give {end.end.port} a shorter interface name", subject, "",
                          end.node.id)
    if end.owner.facts.probed and not end.owner.facts.vlan_devices and not made_by_switch(end):
        names = ", ".join(subinterface_name(end.end.port, sub.vlan) for sub in subinterfaces)
        what = (f"subinterface {names} needs" if len(subinterfaces) == 1 else f"subinterfaces {names} need")
        yield Problem(f"{side}: {what} {NO_VLAN_DEVICES}, and {end.end.port} is linked to {end.other.node.name}, a "
                      f"{end.other.kind.label}, which cannot make them as tagged ports: link {end.end.port} to an Open "
                      "vSwitch switch (kind ovs), which makes them on every host", subject, "", end.node.id)
