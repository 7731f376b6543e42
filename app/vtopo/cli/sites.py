"""`vtopo place`, and what `vtopo deploy`, `destroy`, `status` and `plan --explain` do for a lab spread over sites.
Each of the *_spread functions returns None for a lab on this machine alone, which the command then handles itself."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit, urlunsplit

from vtopo.cli.common import Command, agent_client

if TYPE_CHECKING:  # the CLI builds its parser with this module: the rest, the model too, loads when a command runs
    from vtopo.client.agent_client import AgentClient
    from vtopo.lab_terms import HostFacts, Trust
    from vtopo.model.sites import Site
    from vtopo.model.topology import Topology
    from vtopo.reports import ProgressCallback

EXIT_OK, EXIT_FAILED, EXIT_BAD_LAB = 0, 1, 2
PLACE_HELP = ("suggest how to split a lab over two sites: VM memory balanced, few links between them (Kernighan-Lin "
              "bisection); --write puts it in the file")


def add_commands(command: Command) -> None:
    sub = command("place", cmd_place, PLACE_HELP)
    sub.add_argument("file", type=Path)
    sub.add_argument("--sites", required=True, metavar="A,B", help="the two sites, named as in the lab ('' or the "
                     "site without destination: this machine)")
    sub.add_argument("--write", action="store_true", help="give each node its suggested site in the file")


def cmd_place(args: argparse.Namespace) -> int:
    from vtopo.compile.resolve import resolve
    from vtopo.lab import registry
    from vtopo.model import io
    from vtopo.sites.place import suggest

    topology = io.load(args.file)
    names = args.sites.split(",")
    unknown = [name for name in names if name and name not in topology.sites]
    if len(names) != 2 or unknown:
        print(f"error: --sites names two of the lab's sites ({', '.join(topology.sites) or 'it names none'})"
              + (f"; it has no {', '.join(unknown)}" if unknown else ""), file=sys.stderr)
        return EXIT_BAD_LAB
    placement = suggest(resolve(topology, registry()).valid().lab, names[0], names[1])
    for node_id, site in placement.sites.items():
        print(f"  {topology.nodes[node_id].name:<24} {site or 'this machine'}")
    print(f"{placement.crossing} link(s) between the sites; VM memory "
          + ", ".join(f"{name or 'this machine'} {mb:,} MiB" for name, mb in placement.memory_mb.items()))
    if args.write:
        for node_id, site in placement.sites.items():
            topology.update_node(node_id, site=site)
        io.save(topology, args.file)
        print(f"wrote the sites into {args.file}")
    return EXIT_OK


def deploy_spread(args: argparse.Namespace, text: str, consent: Trust, progress: ProgressCallback) -> int | None:
    """Deploy a lab spread over sites, or with --update bring a running lab in line with its file where either is
    spread over sites. `text` is the lab file's: a lab that declares no sites is not built here, but read by the one
    that deploys it only."""
    from vtopo.model.lab_text import declares_sites

    if args.file.suffix != ".vtopo" or not (args.update or declares_sites(text)):
        return None
    from vtopo.model import io
    from vtopo.model.placement import sites_used, spread_over_sites
    from vtopo.sites import spread as s

    topology = io.loads(text, args.file.stem)
    running = s.deployed_topology(topology.name, agent_client()) if args.update else None
    if not spread_over_sites(topology) and (running is None or not spread_over_sites(running)):
        return None
    refused = s.not_allowed(topology, frozenset(args.allow_site), running=running)
    if refused:
        print("\n".join(f"error: {line}" for line in refused), file=sys.stderr)
        return EXIT_FAILED
    try:
        updated = s.update(running, topology, consent, agent_client(), progress, str(args.file.resolve()))
    except s.SitesFailed as error:
        print(f"error: the {'update' if running else 'deploy'} of lab {topology.name} failed:\n{error}",
              file=sys.stderr)
        return EXIT_FAILED
    ran = sites_used(running) if running else []
    for site, report in updated.parts:
        for notice in report.notices:
            print(f"note: [{s.site_label(site)}] {notice}")
        print(f"{'updated' if site in ran else 'deployed'} site {s.site_label(site)}'s part of lab {report.lab} "
              f"(prefix {report.prefix}): {report.ops} operations in {report.seconds:.2f} s")
    for site, count in updated.dropped.items():
        print(f"destroyed site {s.site_label(site)}'s part of lab {topology.name}, which the edit moved off it: "
              f"{count} operations")
    return EXIT_OK


def destroy_spread(lab: str, agent: AgentClient, progress: ProgressCallback) -> int | None:
    from vtopo.model.placement import spread_over_sites
    from vtopo.sites import spread as s

    if (topology := s.deployed_topology(lab, agent)) is None or not spread_over_sites(topology):
        return None
    try:
        steps = s.destroy(topology, agent, progress)
    except s.SitesFailed as error:
        print(f"error: the destroy of lab {lab} failed:\n{error}", file=sys.stderr)
        return EXIT_FAILED
    for site, count in steps.items():
        print(f"destroyed site {s.site_label(site)}'s part of lab {lab}: {count} operations" if count else
              f"site {s.site_label(site)} had nothing left of lab {lab}")
    return EXIT_OK


def status_spread(lab: str, agent: AgentClient) -> int | None:
    from vtopo.model.placement import spread_over_sites
    from vtopo.model.sites import LOCAL
    from vtopo.reports import user_name
    from vtopo.sites import spread as s

    if (topology := s.deployed_topology(lab, agent)) is None or not spread_over_sites(topology):
        return None
    from vtopo.lab import site_plans  # the compiler: a status of a lab on this machine alone stays light

    up = True
    runs = {site: {op.owner for op in plan.ops} for site, plan in site_plans(topology).items()}
    for site in s.status(topology, agent):
        label = s.site_label(site.site)
        if site.error or not site.labs:
            print(f"site {label}: {site.error or 'its part is not deployed'}")
            up = False
        for summary in site.labs:
            print(f"site {label}: lab {summary.lab}, owner {user_name(summary.owner)}: {summary.state}")
            for kind, parts in (("node", summary.nodes), ("link", summary.links)):
                for part in parts:
                    if f"{kind} {part.name}" in runs.get(site.site, set()):  # what this site builds of the lab
                        print(f"  {kind} {part.name:<24} {part.state}{part.detail}")
            up = up and summary.up
        if site.labs and site.site != LOCAL:
            for line in _domains_of(topology, site.site):
                print(line)
    return EXIT_OK if up else EXIT_FAILED


def _domains_of(topology: Topology, site: str) -> list[str]:
    """For each VM that runs as a libvirt domain on `site` (another machine), how to open it from here with virsh
    (or virt-manager -c): the domain at the URI of that site's libvirtd, reached over ssh. Asks the site how its part
    runs only when the lab places a VM there."""
    from vtopo.client.agent_client import AgentClient
    from vtopo.deployed import DeployedLab
    from vtopo.kinds.contract import Role, RunsMachine
    from vtopo.kinds.registry import installed_kinds
    from vtopo.sites import spread as s

    kinds = installed_kinds()
    if not any(node.site == site and (kind := kinds.get(node.kind)) is not None and kind.role is Role.MACHINE
               for node in topology.nodes.values()):
        return []
    where = topology.sites[site]
    try:
        deployed = DeployedLab.of_deployment(AgentClient(where).deployment(topology.name))
    except s.FAILURES as error:
        return [f"  (site {site} does not say how its VMs run: {error})"]
    lines = []
    for node in deployed.context.nodes.values():
        if not isinstance(node.kind, RunsMachine) or node.node.site != site:
            continue
        machine = node.kind.machine(node)
        if machine.backend == "libvirt":
            lines.append(f"  vm {node.node.name:<26} libvirt domain {machine.domain}: "
                         f"virsh -c '{remote_libvirt_uri(machine.uri, where)}' dominfo {machine.domain}")
    if lines and where.known_hosts:
        lines.append(f"  (libvirt's ssh checks site {site}'s host key in your ~/.ssh/known_hosts, not in "
                     f"{where.known_hosts})")
    return lines


def remote_libvirt_uri(uri: str, site: Site) -> str:
    """`uri`, the libvirt URI a site's agent uses there (qemu:///system), as this machine reaches it through ssh:
    qemu+ssh://user@host:port/system, with the site's key file when it names one. A URI that names a transport or a
    host already is the site's own choice, and stays as it is."""
    parts = urlsplit(uri)
    if parts.netloc or "+" in parts.scheme:
        return uri
    user, _, host = site.destination.rpartition("@")
    netloc = f"{user}@" if user else ""
    netloc += f"[{host}]:{site.port}" if ":" in host else f"{host}:{site.port}"
    query = [parts.query] if parts.query else []
    if site.identity:
        query.append(f"keyfile={quote(site.identity, safe='/')}")
    return urlunsplit((f"{parts.scheme}+ssh", netloc, parts.path, "&".join(query), ""))


def explain_spread(topology: Topology, facts: HostFacts | None, consent: Trust, owners: set[str] | None) -> str | None:
    """The script of each site's part, one after the other."""
    from dataclasses import replace

    from vtopo.model.placement import spread_over_sites

    if not spread_over_sites(topology):
        return None
    from vtopo.lab import explain_sites, site_plans
    from vtopo.sites.spread import tunnel_vnis

    return explain_sites(topology, site_plans(topology, facts, replace(consent, tunnel_vnis=tunnel_vnis())), owners)
