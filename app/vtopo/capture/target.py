"""Where a capture listens: a device of a deployed lab and the namespace it lives in, named the way a user names it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vtopo.compile.analysis import host_routed_legs, path_between
from vtopo.kinds.contract import EndContext, LabContext, NodeContext, Role
from vtopo.model.placement import Unreachable, remote_site
from vtopo.model.sites import Site


class CaptureError(Exception):
    """A capture could not start or failed; the message names the node or interface and what to do."""


@dataclass(frozen=True)
class CaptureTarget:
    label: str
    """What the user called it: "c1:eth0", or "br0" for a whole bridge."""
    device: str
    netns: str | None
    """The namespace the device lives in; None for the host's own (bridge ports, taps, macvtaps, bridges)."""
    link_id: str | None = None
    """The link this device is an end of; None for a whole bridge."""
    lab: str = ""
    """The deployed lab's name: a user who is not root captures through the vtopo agent, which finds the device
    again from the lab and the label."""
    site: Site | None = None
    """The site the device is on, when that is another machine: the capture runs there, over ssh, and the device is
    found there from the lab and the label."""


def end_target(end: EndContext) -> CaptureTarget:
    lab = end.owner.lab
    return CaptureTarget(f"{end.node.name}:{end.end.port}", end.device, end.netns, end.link.id, lab.topology.name,
                         _site(lab, end.node.name))


def resolve(lab: LabContext, spec: str) -> CaptureTarget:
    """The target of "NODE", "NODE:PORT" or "NODE:IFACE" in a deployed lab; CaptureError says what exists."""
    name, _, port = spec.partition(":")
    node = lab.node_named(name)
    if node is None:
        raise CaptureError(lab.no_node_named(name))
    if port:
        end = next((e for e in node.ends if port in (e.end.port, e.end.interface.name, e.device)), None)
        if end is None:
            raise CaptureError(f"{name} has no port {port!r} (it has: {_ports(node)})")
        return _with_device(end)
    if node.kind.role is Role.SWITCH:
        return CaptureTarget(name, node.names.node_device(name), None, lab=lab.topology.name,
                             site=_site(lab, name))
    if len(node.ends) == 1:
        return _with_device(node.ends[0])
    if not node.ends:
        raise CaptureError(f"{name} has no link to capture on")
    raise CaptureError(f"{name} has several ports ({_ports(node)}): name one, e.g. {name}:{node.ends[0].end.port}")


def link_targets(lab: LabContext, link_id: str) -> list[CaptureTarget]:
    """Both ends of a link that have a device to listen on."""
    return [end_target(end) for end in lab.ends if end.link.id == link_id and _listenable(end)]


def path_targets(lab: LabContext, source: str, destination: str) -> list[CaptureTarget]:
    """One capture point on each link of the shortest path between two nodes, in path order."""
    src, dst = lab.node_named(source), lab.node_named(destination)
    if src is None or dst is None:
        raise CaptureError(f"lab {lab.topology.name} has no node {source if src is None else destination!r}")
    path = path_between(lab, src.node.id, dst.node.id)
    if not path and (legs := host_routed_legs(lab, src.node.id, dst.node.id)) is not None:
        path = [*legs[0], *legs[1]]  # the host routes between the two legs, with no link in the drawing
    if not path:
        raise CaptureError(f"{source} and {destination} are not linked in the drawing, and no host route joins them")
    return [end_target(end if _listenable(end) else end.other) for end in path]


def _listenable(end: EndContext) -> bool:
    """Whether the end has a device of its own, here or on its site."""
    try:
        return bool(end.device) or _site(end.owner.lab, end.node.name) is not None
    except Unreachable:
        return False


def _site(lab: LabContext, node_name: str) -> Site | None:
    """The site a node runs on, when another machine than this one."""
    return remote_site(lab.topology, node_name, lab.trust.site)


def _with_device(end: EndContext) -> CaptureTarget:
    if not _listenable(end):
        raise CaptureError(f"{end.node.name}:{end.end.port} is a {end.medium} segment's end with no device of its own; "
                           f"capture on the other end, {end.other.node.name}:{end.other.end.port}")
    return end_target(end)


def _ports(node: NodeContext[Any]) -> str:
    return ", ".join(e.end.port for e in node.ends) or "none"
