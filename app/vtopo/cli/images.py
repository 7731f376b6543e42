"""`vtopo image`: the OCI images nodes run from (docs/architecture.md, "Nodes from images"): build vtopo's own from
Debian's packages, load an OCI or docker archive, and list what is here and who may use it."""
from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from vtopo.cli.common import Command

if TYPE_CHECKING:
    from vtopo.protocol import ImageEntry

EXIT_OK, EXIT_FAILED = 0, 1
BUILD_ROOT_ONLY = ("vtopo image build: vtopo's own images are every lab's, built by root: run `sudo vtopo image build`; "
                   "an image of your own is loaded with `vtopo image load FILE`")


def add_commands(command: Command) -> None:
    sub = command("image", cmd_image, "OCI images for containers and routers: build vtopo's own, load an archive, "
                  "list them, remove one")
    verbs = sub.add_subparsers(dest="verb", required=True, metavar="VERB")
    build = verbs.add_parser("build", help="make vtopo's own images from Debian's packages (no registry needed): "
                             "toolbox (a shell, iproute2, ping, iperf3, tcpdump) and frr (the same with FRR)")
    build.add_argument("names", nargs="*", default=["toolbox", "frr"], metavar="NAME")
    build.add_argument("--rebuild", action="store_true", help="build again an image that is here already")
    load = verbs.add_parser("load", help="load an OCI archive or a docker archive (docker save, skopeo copy ... "
                            "oci-archive:FILE)")
    load.add_argument("file")
    load.add_argument("--name", default="", help="the reference labs name it by (default: the one the archive names)")
    verbs.add_parser("list", help="the images here: reference, digest, and who may use each")
    remove = verbs.add_parser("rm", help="take an image out of the store (running labs keep their nodes)")
    remove.add_argument("reference")


def cmd_image(args: argparse.Namespace) -> int:
    """Root works on the store itself; a member through the agent, into a store of their own (their archive read
    by their own processes: vtopo.host.image_store.load_own)."""
    from vtopo.host import image_build, image_store
    from vtopo.protocol import ImageEntry

    if os.geteuid() != 0:
        if args.verb == "build":
            print(BUILD_ROOT_ONLY)
            return EXIT_FAILED
        return member_image(args)
    if args.verb == "build":
        for name in args.names:
            image, built = image_build.build(name, args.rebuild)
            print(f"{'built' if built else 'kept'} {image.reference} {image.digest}")
    elif args.verb == "rm":
        image = image_store.remove(args.reference, os.geteuid())
        print(f"removed {image.reference} {image.digest}")
    elif args.verb == "load":
        image = image_store.load(args.file, args.name)
        print(f"loaded {image.reference} {image.digest} for {image.who_may_use}")
    else:
        shown([ImageEntry(image.reference, image.digest, image.who_may_use) for image in image_store.images()])
    return EXIT_OK


def member_image(args: argparse.Namespace) -> int:
    """`vtopo image load|list|rm` of a member, through the agent."""
    from vtopo.client.agent_client import AgentClient

    client = AgentClient()
    if args.verb == "load":
        image = client.load_image(args.file, args.name)
        print(f"loaded {image.reference} {image.digest} for {image.who_may_use}")
    elif args.verb == "rm":
        image = client.remove_image(args.reference)
        print(f"removed {image.reference} {image.digest}")
    else:
        shown(client.images())
    return EXIT_OK


def shown(found: list[ImageEntry]) -> None:
    for image in found:
        print(f"{image.reference:<32} {image.digest}  {image.who_may_use}")
    if not found:
        print("no image is here: `vtopo image build` makes vtopo's own, `vtopo image load FILE` loads one")
