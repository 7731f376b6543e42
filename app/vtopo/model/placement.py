"""Where a lab's nodes run and which of its links cross sites: each site's part, and what is wrong with the sites."""
from __future__ import annotations

from vtopo.model.problems import Problem
from vtopo.model.rules import stable_digest
from vtopo.model.sites import (LOCAL, DEFAULT_VNIS, DESTINATION, SITE_NAME, SITE_NAME_RULE, Site, SitePart, Tunnel,
                               is_address)
from vtopo.model.topology import Link, Node, Topology


def site_of(topology: Topology, node: Node) -> str:
    """The site a node runs on: LOCAL for the machine vtopo runs on, whatever name the lab gives that site."""
    site = topology.sites.get(node.site)
    return LOCAL if site is None or site.local else site.name


class Unreachable(Exception):
    """A node of the lab that this site cannot reach: it runs where the lab was deployed from."""


def remote_site(topology: Topology, node_name: str, here: str = LOCAL) -> Site | None:
    """The site a node runs on when that is another machine than `here` (the site this machine is in the lab: LOCAL
    where the lab was deployed from); None for a node of `here`. Unreachable for a node of the machine the lab was
    deployed from, seen from another site: the lab gives no way back there."""
    node = topology.node_named(node_name)
    site = site_of(topology, node) if node is not None else here
    if site == here:
        return None
    if site == LOCAL:
        raise Unreachable(f"{node_name} runs on the machine lab {topology.name} was deployed from; run this there")
    return topology.sites[site]


def sites_used(topology: Topology) -> list[str]:
    """The sites with nodes on them, the local one first (always there: it keeps the lab's record)."""
    used = {site_of(topology, node) for node in topology.nodes.values()}
    return [LOCAL] + sorted(used - {LOCAL})


def spread_over_sites(topology: Topology) -> bool:
    """Whether the lab places nodes on another site than this machine."""
    return len(sites_used(topology)) > 1


def crossing(topology: Topology, link: Link) -> tuple[str, str] | None:
    """The sites of a link's ends when they differ, else None."""
    a, b = (topology.nodes.get(end.node) for end in link.ends)
    if a is None or b is None:
        return None
    sites = (site_of(topology, a), site_of(topology, b))
    return sites if sites[0] != sites[1] else None


def underlay_of(topology: Topology, site: str) -> str:
    if site == LOCAL:
        return next((s.underlay for s in topology.sites.values() if s.local), "")
    return topology.sites[site].underlay


def vni_of(lab_name: str, link_id: str, vnis: tuple[int, int], taken: set[int]) -> int:
    """The link's VNI: from a hash of the lab's name and the link's id, so that every site computes the same and two
    labs rarely meet; the next free one when another link of the lab has it."""
    first, last = vnis
    size = last - first + 1
    start = int(stable_digest(f"{lab_name}\n{link_id}"), 16) % size
    for step in range(size):
        vni = first + (start + step) % size
        if vni not in taken:
            return vni
    raise ValueError(f"the VNI range {first}-{last} has no VNI left for this lab's tunnels")


def site_parts(topology: Topology, vnis: tuple[int, int] = DEFAULT_VNIS) -> dict[str, SitePart]:
    """Each site's part of the lab, with its ends of the tunnels, for every site with nodes."""
    ends: dict[str, list[Tunnel]] = {site: [] for site in sites_used(topology)}
    taken: set[int] = set()
    for link in topology.links.values():
        sites = crossing(topology, link)
        if sites is None:
            continue
        vni = vni_of(topology.name, link.id, vnis, taken)
        taken.add(vni)
        for here, there in (sites, sites[::-1]):
            ends[here].append(Tunnel(link.id, vni, underlay_of(topology, there)))
    return {site: SitePart(site, underlay_of(topology, site), tuple(tunnels)) for site, tunnels in ends.items()}


def site_problems(topology: Topology) -> list[Problem]:
    """What is wrong with the lab's sites and the nodes' places, each naming the site or node and its field."""
    problems: list[Problem] = []
    for index, site in enumerate(topology.sites.values()):
        path, subject = f"$.lab.sites[{index}]", f"site {site.name}"
        if not SITE_NAME.fullmatch(site.name):
            problems.append(Problem(SITE_NAME_RULE, subject, f"{path}.name"))
        if site.destination and not DESTINATION.fullmatch(site.destination):
            problems.append(Problem(f"destination {site.destination!r} is not of the form user@host",
                                    subject, f"{path}.destination"))
        if not 1 <= site.port <= 65535:
            problems.append(Problem(f"port {site.port} is outside 1..65535", subject, f"{path}.port"))
        for field in ("identity", "known_hosts"):
            value = getattr(site, field)
            if value and (not value.startswith("/") or any(c in value for c in "\n\r\0")):
                problems.append(Problem(f"{field} must be an absolute file path, not {value!r}", subject,
                                        f"{path}.{field}"))
        if site.address and not is_address(site.address):
            problems.append(Problem(f"address {site.address!r} is not an IPv4 or IPv6 address", subject,
                                    f"{path}.address"))
    local = [site.name for site in topology.sites.values() if site.local]
    if len(local) > 1:
        problems.append(Problem(f"sites {', '.join(local)} have no destination: only one site (this machine) may "
                                "go without one", "lab", "$.lab.sites"))
    for index, node in enumerate(topology.nodes.values()):
        if node.site and node.site not in topology.sites:
            known = ", ".join(topology.sites) or "none"
            problems.append(Problem(f"site {node.site!r} is not one of the lab's sites ({known})",
                                    f"node {node.name}", f"$.nodes[{index}].site", node.id))
    if problems:
        return problems
    for link in topology.links.values():
        for end_site in crossing(topology, link) or ():
            if not underlay_of(topology, end_site):
                name = end_site or "this machine"
                problems.append(Problem(
                    f"the link joins two sites, and {name} has no underlay address for the tunnel: give "
                    + ("the site an address" if end_site else "the lab a site without destination (this machine) "
                       "with the address the other sites reach it at"),
                    f"link {topology.describe_link(link)}", "", link.id))
    return problems
