"""`vtopo import` and `vtopo export`: labs from containerlab and GNS3, and back out to containerlab."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vtopo.cli.common import Command

EXIT_OK, EXIT_BAD_LAB = 0, 2


def cmd_import(args: argparse.Namespace) -> int:
    from vtopo.interop.importing import import_lab
    from vtopo.lab import problems_of, registry
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
        problems = problems_of(topology)
    except LabError as error:
        problems = error.problems
    to_fix = [problem for problem in errors_in(problems) if problem.consent is None]  # consent comes at deploy
    for problem in problems:
        if problem in to_fix or problem.consent is None:
            print(problem, file=sys.stderr)
        else:
            print(f"note: {problem.subject}: {problem.message}")
    if to_fix:
        print(f"{target} needs {len(to_fix)} fix(es) before it deploys (vtopo validate {target})", file=sys.stderr)
        return EXIT_BAD_LAB
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from vtopo.interop.export import to_containerlab
    from vtopo.lab import open_lab, registry

    topology = open_lab(args.file).topology
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
    sub = command("export", cmd_export, "write a lab as a containerlab topology, with each router's frr.conf")
    sub.add_argument("file", type=Path)
    sub.add_argument("--to", choices=("containerlab",), default="containerlab", help="the format (containerlab)")
    sub.add_argument("-o", "--output", type=Path, metavar="DIR", help="the folder to write (default: LAB.clab "
                     "beside the lab)")
    sub.add_argument("--image", default="alpine:3", help="the image of containers (default: alpine:3)")
    sub.add_argument("--router-image", default="quay.io/frrouting/frr:10.5.1",
                     help="the image of routers (default: FRR's quay.io/frrouting/frr:10.5.1)")
