"""Every node with a namespace of its own is a lightweight container, and a lab lives in a user namespace of its own:
the ops that make them, ahead of what the kinds lower."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from vtopo.compile.addresses import routable_ips
from vtopo.kinds.contract import (LabContext, NodeContext, Role, RoutesBetweenVlans, RunsAsContainer, image_of,
                                  vlan_interfaces_of)
from vtopo.kinds.running import NodeFiles
from vtopo.lab_terms import image_reference
from vtopo.ops import CreateNamespace, CreateUserNamespace, IsolateNode, Op, RunImage, WriteHostsFile

LOOPBACK_HOSTS = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"


def containers(lab: LabContext) -> list[tuple[NodeContext[Any], str]]:
    """The nodes that get namespaces of their own (containers and routers, not the host), with their netns."""
    return [(node, netns) for node in lab.nodes.values()
            if node.kind.role is Role.NAMESPACE and (netns := node.kind.netns(node))]


def container_ops(lab: LabContext, hosts: str = "") -> Iterator[Op]:
    """The lab's user namespace, its hosts file (`hosts`, or its nodes' names and addresses), and each
    container's namespaces."""
    names, owner = lab.names, lab.trust.owner
    nodes = containers(lab)
    if not nodes and not any(isinstance(node.kind, RoutesBetweenVlans) and node.kind.own_namespace(node)
                             for node in lab.nodes.values()):
        return
    userns = lab.user_namespace
    if owner.ids is not None:
        yield CreateUserNamespace(owner="lab", path=userns, uid=owner.ids[0], gid=owner.ids[1])
    yield WriteHostsFile(owner="lab", path=names.hosts_file, content=hosts or hosts_text(lab))
    for node, netns in nodes:
        name, image = node.node.name, image_of(node)
        own = node.kind.own_files(node) if isinstance(node.kind, RunsAsContainer) else NodeFiles()
        yield CreateNamespace(owner=node.subject, name=netns, userns=userns)
        if image is None:
            yield IsolateNode(owner=node.subject, netns=netns, hostname=name, hosts_file=names.hosts_file,
                              mount_ns=names.node_namespace(name, "mnt"), uts_ns=names.node_namespace(name, "uts"),
                              userns=userns, binds=own.binds, files=own.files, host_read_only=own.host_read_only)
            continue
        digest, store = lab.facts.oci_image(image.reference) or ("", 0)
        yield RunImage(owner=node.subject, netns=netns, hostname=name, hosts_file=names.hosts_file,
                       mount_ns=names.node_namespace(name, "mnt"), uts_ns=names.node_namespace(name, "uts"),
                       pid_ns=names.node_namespace(name, "pid"), image=image_reference(image.reference),
                       digest=digest, run_root=names.run_root, image_owner=store, userns=userns, ids=owner.ids,
                       binds=own.binds, files=own.files, memory_mb=image.memory_mb, cpus=image.cpu_percent / 100,
                       disk_mb=image.disk_mb)


def hosts_text(lab: LabContext) -> str:
    """/etc/hosts for the lab's nodes: each address of each node with the node's name (IPv4 first, so that `ping h3`
    picks the address a student expects)."""
    entries: list[tuple[int, str, str]] = []
    for node in sorted(lab.nodes.values(), key=lambda n: n.node.name):
        for interface in sorted(node.interfaces(), key=lambda i: (i.end.end.port, i.vlan or 0)):
            entries += [(ip.version, str(ip), node.node.name) for ip in routable_ips(interface.addresses)]
        for _, addresses in sorted(vlan_interfaces_of(node).items()):
            entries += [(ip.version, str(ip), node.node.name) for ip in routable_ips(addresses)]
    return LOOPBACK_HOSTS + "".join(f"{ip}\t{name}\n" for _, ip, name in sorted(entries, key=lambda e: e[0]))
