"""The rules a lab must keep, each a function of the lab resolved so far that yields what is wrong with it, naming the
node, link or field. `resolve` runs them in its stages (vtopo.compile.resolve)."""
from __future__ import annotations

import ipaddress
import re
from collections import Counter
from typing import Any, Iterator

from vtopo.compile.addresses import address_clashes, host_namespace_addresses
from vtopo.compile.analysis import interface_networks, switching_loops
from vtopo.compile.broadcast_domains import domain_problems, parsed_interface
from vtopo.compile.media import impairment_problem
from vtopo.compile.resolving import Resolving, error, warning
from vtopo.compile.startup import startup_problems
from vtopo.compile.subinterfaces import named_problems, subinterface_problems
from vtopo.compile.vlan_rules import stranded_by_vlans, vlan_problems
from vtopo.kinds.contract import EndContext, NodeContext, ProtectsLoops, Role, image_of, resources_of
from vtopo.kinds.trust import host_address_problem
from vtopo.lab_terms import MAX_INTERFACE_NAME, OWN_IMAGES, VM_BACKENDS, image_reference
from vtopo.model.problems import Problem
from vtopo.model.rules import INTERFACE_NAME, MAC_ADDRESS, subinterface_name

PREFIX = re.compile(r"[a-z][a-z0-9]{1,6}")


def prefix_rule(state: Resolving) -> Iterator[Problem]:
    if not PREFIX.fullmatch(state.lab.names.prefix):
        yield error("the prefix must be 2 to 7 lowercase letters or digits, starting with a letter", "lab",
                    path="$.lab.prefix")


def vm_backend_rule(state: Resolving) -> Iterator[Problem]:
    if state.topology.vm_backend not in VM_BACKENDS:
        yield error(f"vm_backend must be one of {', '.join(b for b in VM_BACKENDS if b)}, not "
                    f"{state.topology.vm_backend!r}", "lab", path="$.lab.vm_backend")


def interface_rule(state: Resolving) -> Iterator[Problem]:
    """Each end's MAC, MTU and addresses (checked before any kind's check meets an address it cannot parse), then its
    subinterfaces."""
    for end in state.lab.ends:
        yield from _interface_problems(end)
        yield from subinterface_problems(end)


def _interface_problems(end: EndContext) -> Iterator[Problem]:
    interface = end.end.interface
    subject = f"link {end.link_name}"
    side = f"{end.node.name}:{end.end.port}"
    if interface.mac and not MAC_ADDRESS.fullmatch(interface.mac):
        yield error(f"{side}: MAC {interface.mac!r} is not of the form 02:00:00:00:00:01", subject, end.link.id)
    if interface.mtu and not 68 <= interface.mtu <= 65535:
        yield error(f"{side}: MTU {interface.mtu} is outside 68..65535", subject, end.link.id)
    if interface.addresses and not end.kind.ports_take_addresses:
        yield error(f"{side}: a {end.kind.name} port takes no address; give the address to the node at the other end"
                    + (f", or {end.kind.address_hint}" if end.kind.address_hint else ""), subject, end.link.id)
    if interface.dhcp and not end.kind.dhcp_client:
        yield error(f"{side}: a {end.kind.name} runs no DHCP client; set dhcp on a container's or a router's port",
                    subject, end.link.id)
    yield from _address_problems(side, interface.addresses, end)
    for sub in interface.subinterfaces:
        yield from _address_problems(subinterface_name(side, sub.vlan), sub.addresses, end)


def _address_problems(side: str, addresses: list[str], end: EndContext) -> Iterator[Problem]:
    subject = f"link {end.link_name}"
    for address in addresses:
        if "/" not in address:
            yield error(f"{side}: address {address!r} needs a prefix length, e.g. {address}/24", subject, end.link.id)
            continue
        interface_address = parsed_interface(address)
        if interface_address is None:
            yield error(f"{side}: {address!r} is not an IPv4 or IPv6 address with prefix", subject, end.link.id)
            continue
        if _is_broadcast(interface_address):
            network = interface_address.network
            yield error(f"{side}: {address} is the broadcast address of {network}, which no host can hold: the kernel "
                        "refuses it as a route's gateway ('Nexthop has invalid gateway') and sends packets for it to "
                        f"every host on the wire. Use one of {network.network_address + 1}.."
                        f"{network.broadcast_address - 1}", subject, end.link.id)


def _is_broadcast(interface: ipaddress.IPv4Interface | ipaddress.IPv6Interface) -> bool:
    """An IPv4 subnet's broadcast address given as an interface's own (/31 and /32 have none: RFC 3021)."""
    network = interface.network
    return network.version == 4 and network.prefixlen < 31 and interface.ip == network.broadcast_address


def device_name_rule(state: Resolving) -> Iterator[Problem]:
    """Each device's name fits the kernel's rules, once in its namespace; a bridge's own name fits too."""
    by_place: Counter[tuple[str, str]] = Counter()
    for end in state.lab.ends:
        if not end.device or (end.medium == "tap" and end.kind.role is not Role.MACHINE):
            continue
        by_place[(end.netns or "", end.device)] += 1  # "": the host's namespace
        subject = f"node {end.node.name}"
        if len(end.device) > MAX_INTERFACE_NAME:
            where = "in the host namespace" if end.netns is None else f"in namespace {end.netns}"
            yield error(f"port {end.end.port} needs an interface named {end.device!r} {where}, which is "
                        f"{len(end.device)} characters; the kernel allows {MAX_INTERFACE_NAME}. Use a shorter node "
                        "name" + (" or interface name." if end.netns else " or a shorter lab prefix."),
                        subject, end.node.id)
        elif not INTERFACE_NAME.fullmatch(end.device):
            yield error(f"interface name {end.device!r} may hold only letters, digits, '.', '-' and '_'",
                        subject, end.node.id)
    for (place, device), count in sorted(by_place.items()):
        if count > 1:
            yield error(f"{count} links want an interface named {device!r} in the same namespace",
                        f"namespace {place}" if place else "the host's namespace")
    for node in state.lab.nodes.values():
        own = node.kind.role is Role.SWITCH and node.names.node_device(node.node.name)
        if own and len(own) > MAX_INTERFACE_NAME:
            yield error(f"the bridge device would be named {own!r} ({len(own)} characters; the kernel allows "
                        f"{MAX_INTERFACE_NAME}). Use a shorter node name.", f"node {node.node.name}", node.node.id)


def named_rule(state: Resolving) -> Iterator[Problem]:
    """What naming the ends found wrong with their subinterfaces."""
    for end in state.lab.ends:
        yield from named_problems(end)


def impairment_rule(state: Resolving) -> Iterator[Problem]:
    topology = state.topology
    for link in topology.links.values():
        problem = impairment_problem(link.impairment, state.lab.facts)
        if problem is not None:
            yield error(problem, f"link {topology.describe_link(link)}", link.id)


def segment_address_rule(state: Resolving) -> Iterator[Problem]:
    """No address twice on one L2 segment."""
    for domain in state.lab.domains:
        owners: dict[str, str] = {}
        for end in domain:
            try:
                addresses = interface_networks(end)
            except ValueError:
                continue
            for address in addresses:
                key = str(address.ip)
                here = f"{end.node.name}:{end.end.port}"
                if key in owners:
                    yield error(f"address {key} is used twice on one segment ({owners[key]} and {here})",
                                f"link {end.link_name}", end.link.id)
                owners[key] = here


def domain_rule(state: Resolving) -> Iterator[Problem]:
    """What the broadcast domains say: a node stranded by its VLANs, VLANs that do not match, addresses that clash
    across the lab."""
    yield from domain_problems(state.lab, stranded_by_vlans(state.lab, state.domains), state.domains)
    yield from vlan_problems(state.lab, state.domains)
    yield from address_clashes(state.domains)


def host_address_rule(state: Resolving) -> Iterator[Problem]:
    """An address the lab gives the host's own namespace must not be in a network the host has."""
    for address, subject, subject_id in host_namespace_addresses(state.lab):
        try:
            problem = host_address_problem(address, state.lab.trust.host_networks)
        except ValueError:
            continue  # not an address at all: the node's own check says so
        if problem:
            yield error(problem, subject, subject_id)


def resource_rule(state: Resolving) -> Iterator[Problem]:
    """The VMs' memory must fit in the host's (this site's, of a lab spread over sites), or the lab is refused
    before anything starts."""
    facts = state.lab.facts
    taken = [resources_of(node) for node_id, node in state.lab.nodes.items() if state.here(node_id)]
    memory, cpus = sum(m for m, _ in taken), sum(c for _, c in taken)
    if facts.memory_mb and memory > facts.memory_mb:
        yield error(f"the lab's VMs need {memory:,} MiB of memory together and this host has {facts.memory_mb:,} MiB; "
                    "give them less memory or run fewer VMs", "lab")
    elif facts.memory_mb and memory > facts.memory_mb * 3 // 4:
        yield warning(f"the lab's VMs take {memory:,} of the host's {facts.memory_mb:,} MiB of memory", "lab")
    if facts.cpus and cpus > facts.cpus:
        yield warning(f"the lab's VMs have {cpus} vCPUs together and this host has {facts.cpus} CPUs; they will share "
                      "them and run slower", "lab")


def image_rule(state: Resolving) -> Iterator[Problem]:
    """Each image a node of this site names must be here for the lab's owner, where the host was probed (a node on
    another site runs what that site has)."""
    if not state.lab.facts.probed:
        return
    for node_id, node in state.lab.nodes.items():
        image = image_of(node) if state.here(node_id) else None
        if image is not None and state.lab.facts.oci_image(image.reference) is None:
            yield error(missing_image(node, image.reference), node.subject, node_id)


def missing_image(node: NodeContext[Any], reference: str) -> str:
    """What to say of a node whose image this host lacks (for its owner): one line, with how to get it."""
    name = image_reference(reference).rsplit(":", 1)[0]
    load = (f"`vtopo image load FILE --name {reference}` loads it from an OCI or docker archive (`docker save`, "
            "`skopeo copy ... oci-archive:FILE`)")
    build = f"vtopo image build {name.removeprefix('vtopo/')}"
    if name not in OWN_IMAGES:
        how = load
    elif node.lab.trust.owner.confined:  # a member: root builds vtopo's own images, for every lab
        how = f"root's `sudo {build}` makes it for every lab, or {load.replace('loads it', 'loads your own')}"
    else:
        how = f"`{build}` makes it"
    return (f"image {reference} is not on this host, among the images this lab may run (the shared ones and its "
            f"owner's own: `vtopo image list`); {how}")


def loop_rule(state: Resolving) -> Iterator[Problem]:
    for loop in switching_loops(state.lab):
        yield from _unprotected_loop([state.lab.nodes[n] for n in loop])


def _unprotected_loop(loop: list[NodeContext[Any]]) -> Iterator[Problem]:
    unprotected = [node for node in loop
                   if not (isinstance(node.kind, ProtectsLoops) and node.kind.protects_loops(node))]
    if not unprotected:
        return
    names = ", ".join(node.node.name for node in loop)
    without = [node.node.name for node in unprotected if not isinstance(node.kind, ProtectsLoops)]
    advice = (f"{', '.join(without)} cannot run STP: take a link out of the loop." if without else
              "Turn STP on for these bridges.")
    yield warning(f"the switches {names} form a loop and not all of them run STP; broadcasts will circle forever. "
                  f"{advice}", f"node {loop[0].node.name}", loop[0].node.id)


def kind_rule(state: Resolving) -> Iterator[Problem]:
    """Each node's kind checks the node."""
    for node in state.lab.nodes.values():
        yield from node.kind.check(node)


def startup_rule(state: Resolving) -> Iterator[Problem]:
    for index, node_id in enumerate(state.topology.nodes):
        if node_id in state.lab.nodes:
            yield from startup_problems(state.lab.nodes[node_id], f"$.nodes[{index}].startup_commands")
