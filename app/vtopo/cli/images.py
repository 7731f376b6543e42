"""`vtopo image`: the OCI images nodes run from (docs/architecture.md, "Nodes from images"): build vtopo's own from
Debian's packages, load an OCI or docker archive, and list what is here and who may use it."""
from __future__ import annotations

import argparse
import os

from vtopo.cli.common import Command

EXIT_OK, EXIT_FAILED = 0, 1
ROOT_ONLY = ("the image store is root's: run `sudo vtopo image {verb}` (an administrator's images are every lab's); "
             "a member's own images are not yet loaded through the agent")


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
    from vtopo.host import image_build, image_store

    if args.verb != "list" and os.geteuid() != 0:
        print(f"vtopo image {args.verb}: " + ROOT_ONLY.format(verb=args.verb))
        return EXIT_FAILED
    if args.verb == "build":
        for name in args.names:
            image, built = image_build.build(name, args.rebuild)
            print(f"{'built' if built else 'kept'} {image.reference} {image.digest}")
    elif args.verb == "rm":
        image = image_store.remove(args.reference, os.geteuid())
        print(f"removed {image.reference} {image.digest}")
    elif args.verb == "load":
        image = image_store.load(args.file, os.geteuid(), args.name)
        print(f"loaded {image.reference} {image.digest} for {image.who_may_use}")
    else:
        found = image_store.images(None if os.geteuid() == 0 else os.geteuid())  # a member: what their labs may run
        for image in found:
            print(f"{image.reference:<32} {image.digest}  {image.who_may_use}")
        if not found:
            print("no image is here: `vtopo image build` makes vtopo's own, `vtopo image load FILE` loads one")
    return EXIT_OK
