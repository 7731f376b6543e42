"""`vtopo import` and `vtopo export`: labs from containerlab and GNS3, and back out to containerlab or to a diagram."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from vtopo.cli.common import Command

if TYPE_CHECKING:
    from vtopo.model.topology import Topology

EXIT_OK, EXIT_BAD_LAB = 0, 2
DIAGRAMS = {"drawio": ".drawio", "dot": ".dot"}  # format -> the file's suffix


def cmd_import(args: argparse.Namespace) -> int:
    from vtopo.host.facts import probe_for
    from vtopo.interop.importing import import_lab
    from vtopo.lab import registry, validated
    from vtopo.model import io
    from vtopo.model.problems import LabError, Problem, errors_in

    imported = import_lab(args.file, registry(), frozenset(args.allow_outside))
    topology = imported.topology
    target = args.output or args.file.with_name(f"{topology.name}.vtopo")
    if target.exists() and not args.force:
        raise LabError([Problem(f"{target} exists; choose another with -o, or --force to replace it")])
    io.save(topology, target)
    for notice in imported.notices:
        print(f"note: {notice}")
    print(f"imported {args.file} as {target}: {len(topology.nodes)} nodes, {len(topology.links)} links")
    try:
        problems = validated(topology, probe_for(topology, registry()))
    except LabError as error:
        problems = error.problems
    to_fix = [problem for problem in errors_in(problems) if problem.consent is None]  # consent comes at deploy
    for problem in problems:
        if problem in to_fix or problem.consent is None:
            print(problem, file=sys.stderr)
        else:
            print(f"note: {problem.subject}: {problem.message}")
    warnings = [problem for problem in problems if problem not in errors_in(problems)]
    said = f", and {len(warnings)} warning(s) say what will differ" if warnings else ""
    if to_fix:
        print(f"{target} needs {len(to_fix)} fix(es) before it deploys{said} (vtopo validate {target})",
              file=sys.stderr)
        return EXIT_BAD_LAB
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from vtopo.lab import open_lab

    topology = open_lab(args.file).topology
    if args.to in DIAGRAMS:
        return _export_diagram(topology, args)
    return _export_containerlab(topology, args)


def _export_diagram(topology: Topology, args: argparse.Namespace) -> int:
    from vtopo.interop.diagram import to_dot, to_drawio
    from vtopo.model.io import write_atomically

    written = to_drawio(topology) if args.to == "drawio" else to_dot(topology)
    target = args.output or args.file.with_name(f"{topology.name}{DIAGRAMS[args.to]}")
    write_atomically(target, written)
    print(f"exported {args.file} to {target}" + (" (draw it at the canvas's positions: neato -Tsvg -O FILE)"
                                                 if args.to == "dot" else " (open it in draw.io)"))
    return EXIT_OK


def _export_containerlab(topology: Topology, args: argparse.Namespace) -> int:
    from vtopo.interop.export import to_containerlab
    from vtopo.lab import registry

    exported = to_containerlab(topology, registry(), args.image, args.router_image)
    directory = args.output or args.file.with_name(f"{topology.name}.clab")
    exported.write(directory)
    for notice in exported.notices:
        print(f"note: {notice}")
    print(f"exported {args.file} to {directory / exported.topology_file} ({len(exported.files)} files); deploy it "
          f"with: containerlab deploy -t {directory / exported.topology_file}")
    return EXIT_OK


def add_commands(command: Command) -> None:
    sub = command("import", cmd_import, "read a containerlab topology (.clab.yml) or a GNS3 project (.gns3) into a "
                  "vtopo lab, saying node by node what did not come over")
    sub.add_argument("file", type=Path)
    sub.add_argument("-o", "--output", type=Path, metavar="LAB.vtopo", help="where to write the lab (default: the "
                     "topology's name, beside it)")
    sub.add_argument("--force", action="store_true", help="replace the output file if it exists")
    sub.add_argument("--allow-outside", action="append", default=[], type=Path, metavar="PATH",
                     help="let the import read this file (or the files in this folder) although it lies outside "
                          "the topology's folder, or is reached through a symlink")
    sub = command("export", cmd_export, "write a lab as a containerlab topology, with each router's frr.conf, or as "
                  "a draw.io or Graphviz diagram for handouts")
    sub.add_argument("file", type=Path)
    sub.add_argument("--to", choices=("containerlab", *DIAGRAMS), default="containerlab",
                     help="the format: containerlab (a folder), drawio or dot (one file keeping the canvas's "
                          "positions, names, addresses and VLANs)")
    sub.add_argument("-o", "--output", type=Path, metavar="PATH", help="the folder (containerlab) or file to write "
                     "(default: LAB.clab, LAB.drawio or LAB.dot beside the lab)")
    sub.add_argument("--image", default="alpine:3", help="the image of containers (default: alpine:3)")
    sub.add_argument("--router-image", default="quay.io/frrouting/frr:10.5.1",
                     help="the image of routers (default: FRR's quay.io/frrouting/frr:10.5.1)")
