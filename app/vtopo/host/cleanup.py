"""Recovery after a crash: destroy every lab the journal knows, then remove stray objects found by their tags.

Tags: host interfaces carry the alias `vtopo:<prefix>`, each lab namespace's `lo` carries it too, OVS
bridges carry external_ids:vtopo-lab, libvirt domains carry vtopo's element in their <metadata>, nftables tables
are named vtopo-<prefix>, daemons run with their config under /run/vtopo/<prefix>, the user, mount and UTS
namespaces of labs are kept in a directory per lab under /run/vtopo/ns, and nodes from images are runc's containers
named vtopo-<netns> (its state in /run/vtopo/runc), with their bundles under /run/vtopo/oci and their cgroups under
vtopo/.
Nothing without one of these marks is touched. The image stores of users who are no longer members go too.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from vtopo.host import libvirt_domains
from vtopo.host import facts as host_facts
from vtopo.host import netns as namespaces
from vtopo.host import image_store, namespace_maker, nftables, oci_engine, ovs, owned_files, processes
from vtopo.host.deployer import Deployer, DestroyError
from vtopo.host.libvirtd import answers
from vtopo.host.netlink import Netlink, NetlinkError
from vtopo.lab_terms import namespaces_root
from vtopo.model.rules import LAB_TAG_PREFIX, OVS_LAB_KEY
from vtopo.reports import Progress, ProgressCallback

RUN_ROOT = Path("/run/vtopo")


@dataclass
class CleanupReport:
    labs: list[str] = field(default_factory=list)
    strays: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def cleanup(deployer: Deployer, progress: ProgressCallback, run_root: Path = RUN_ROOT) -> CleanupReport:
    report = CleanupReport()
    for record in list(deployer.store.labs()):
        name = record.name
        progress(Progress("cleanup", 0, 0, f"destroying lab {name} from its journal"))
        try:
            deployer.destroy(record, progress)
            report.labs.append(name)
        except DestroyError as error:
            report.errors.append(str(error))
    uri = host_facts.libvirt_uri()
    report.strays += _destroy_stray_domains(uri)
    report.strays += _stop_stray_processes(run_root)
    report.strays += _stop_orphaned_probes()
    report.strays += _delete_stray_ovs_bridges()
    report.strays += _delete_stray_nft_tables()
    with Netlink() as netlink:
        report.strays += _delete_stray_links(netlink)
        report.strays += _delete_stray_namespaces(netlink)
    report.strays += oci_engine.remove_leftovers(str(run_root))
    report.strays += _remove_namespace_files(namespaces_root(str(run_root)))
    for directory in sorted(run_root.glob("*/")) if run_root.is_dir() else []:  # not the agent's socket
        shutil.rmtree(directory, ignore_errors=True)
        report.strays.append(f"directory {directory}")
    owned_files.remove_if_empty(run_root)
    report.strays += [f"service {label} (started by vtopo)" for label in deployer.services.release_unused()]
    report.strays += image_store.forget_departed()
    return report


def _remove_namespace_files(root: str) -> list[str]:
    """The user, mount and UTS namespaces of labs whose journal is lost: every directory in the namespaces root is a
    lab's, and every file there (one kept before labs had a directory each)."""
    try:
        entries = sorted(Path(root).iterdir())
    except FileNotFoundError:
        return []
    removed = []
    for entry in entries:
        if entry.is_dir():
            removed += [f"namespace {path}" for path in sorted(entry.iterdir())]
            namespace_maker.remove_lab_directory(str(entry))
        else:
            removed.append(f"namespace {entry}")
            namespace_maker.remove([str(entry)])
    namespace_maker.release_directory(root)
    return removed


def _destroy_stray_domains(uri: str) -> list[str]:
    if not answers(uri):
        return []
    strays = libvirt_domains.lab_domains(uri)
    for domain in strays:
        libvirt_domains.destroy(uri, domain.name)
    return [f"libvirt domain {domain.name} (lab {domain.lab})" for domain in strays]


def _stop_stray_processes(run_root: Path) -> list[str]:
    stopped = []
    for pid_file in sorted(run_root.glob("*/**/*.pid")) if run_root.is_dir() else []:
        try:
            pid = int(owned_files.read_small_file(pid_file).split()[0])  # a lab's user may write there
        except (OSError, ValueError, IndexError):
            continue
        lab_dir = str(pid_file.parent)
        node_netns = f"{pid_file.parent.parent.name}-{pid_file.parent.name}"  # a router's is RUN_ROOT/PREFIX/NODE
        if processes.process_alive(pid, lab_dir):  # its command line names the lab's run directory
            processes.stop_process(pid, lab_dir)
        elif processes.runs_in(pid, node_netns) and processes.process_alive(pid, pid_file.stem):  # a node's daemon
            processes.stop_process(pid, pid_file.stem, netns=node_netns)
        else:
            continue
        stopped.append(f"process {pid} ({pid_file.stem})")
    return stopped


def _stop_orphaned_probes() -> list[str]:
    stopped = []
    for pid in host_facts.orphaned_probes():
        processes.stop_process(pid, host_facts.PROBE_NAME)
        stopped.append(f"process {pid} (a KVM probe whose vtopo was killed)")
    return stopped


def _delete_stray_ovs_bridges() -> list[str]:
    if not ovs.OvsService().running():
        return []
    listing = json.loads(ovs.vsctl([["--columns=name,external_ids", "list", "Bridge"]], options=["--format=json"]))
    tagged = [row[0] for row in listing["data"] if any(key == OVS_LAB_KEY for key, _ in row[1][1])]
    if tagged:
        ovs.vsctl([["--if-exists", "del-br", name] for name in tagged])
    return [f"OVS bridge {name}" for name in tagged]


def _delete_stray_nft_tables() -> list[str]:
    if shutil.which("nft") is None:
        return []
    stray = nftables.tables()
    for table in stray:
        nftables.delete_table(table)
    return [f"nftables table {table}" for table in stray]


def _delete_stray_links(netlink: Netlink) -> list[str]:
    deleted = []
    for link in netlink.links(None):
        if (link.alias or "").startswith(LAB_TAG_PREFIX):
            try:
                netlink.delete_link(link.name, None)
                deleted.append(f"interface {link.name}")
            except NetlinkError:
                continue  # already gone with its veth peer
    return deleted


def _delete_stray_namespaces(netlink: Netlink) -> list[str]:
    deleted = []
    for name in namespaces.list_netns():
        try:
            links = netlink.links(name)
        except NetlinkError:
            continue
        lo = next((link for link in links if link.name == "lo"), None)
        if lo is None or not (lo.alias or "").startswith(LAB_TAG_PREFIX):
            netlink.release(name)
            continue
        namespaces.end_processes_in({name})
        _delete_links_of(netlink, name, [link.name for link in links if link is not lo])
        netlink.release(name)
        namespaces.delete_netns(name)
        deleted.append(f"namespace {name}")
    return deleted


def _delete_links_of(netlink: Netlink, netns: str, names: list[str]) -> None:
    """Delete a lab namespace's interfaces before the namespace: a veth takes its host end with it at once, which
    the namespace's own death would do only later, from a kernel worker (a host end not yet tagged when the
    deploy was killed has no other mark)."""
    for name in names:
        try:
            netlink.delete_link(name, netns)
        except NetlinkError:
            continue  # gone with its veth peer, or a device its owner alone may delete (an OVS internal port)
