"""Links between sites: each becomes a VXLAN tunnel, whose end on this site is the device the link would have had
here (a node's interface, or a switch's port), with the MTU the tunnel leaves."""
from __future__ import annotations

from collections.abc import Iterator

from vtopo.kinds.contract import EndContext, LabContext, Role
from vtopo.model.sites import TUNNEL_MTU, VXLAN_OVERHEAD, VXLAN_PORT, SitePart
from vtopo.ops import CreateVxlan, Op

TUNNEL = "vxlan tunnel"  # the medium of a link between sites
TUNNEL_ROLES = {Role.NAMESPACE, Role.SWITCH}  # what a tunnel may end in: a node's interface or a switch's port


def lower_tunnel_mtus(lab: LabContext, crossing: set[str]) -> None:
    """Lower the MTU of every interface on a segment a tunnel is part of (the link's own two ends, or a switch's
    whole segment), so that no frame is too large for the tunnel."""
    tunnel_ends = [end for end in lab.ends if end.link.id in crossing]
    segments = [domain for domain in lab.domains if any(end.link.id in crossing for end in domain)]
    for end in tunnel_ends + [end for domain in segments for end in domain]:
        interface = end.end.interface
        interface.mtu = min(interface.mtu or TUNNEL_MTU, TUNNEL_MTU)


def tunnel_end(end: EndContext, part: SitePart) -> Iterator[Op]:
    """The VXLAN device of this site's end of a link between sites."""
    tunnel = part.tunnel(end.link.id)
    assert tunnel is not None, "the compiler checks that the site's part has every tunnel of its nodes' links"
    yield CreateVxlan(owner=f"link {end.link_name}", name=end.device, netns=end.netns, vni=tunnel.vni,
                      local=part.address, remote=tunnel.remote, port=VXLAN_PORT, mtu=end.end.interface.mtu,
                      overhead=VXLAN_OVERHEAD)
