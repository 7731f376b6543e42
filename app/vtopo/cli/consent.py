"""Consent on the command line: what a lab may reach outside its own objects is named by the user, never the file."""
from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtopo.lab_terms import Trust


def add_consent_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--allow-host-device", action="append", default=[], metavar="NAME",
                        help="let the lab hang macvlan/macvtap segments on this host interface (in passthru mode it "
                             "leaves the host while the lab runs)")
    parser.add_argument("--allow-image", action="append", default=[], metavar="PATH",
                        help="let the lab's VMs boot this disk image (a regular file; QEMU gets it read-only, as a "
                             "snapshot)")
    parser.add_argument("--allow-commands", action="append", default=[], metavar="NODE",
                        help="let the lab run the startup commands the file gives this node, inside it as the user "
                             "who deploys (a member of the vtopo group is root of their lab's user namespace there, "
                             "and of nothing else; only root may allow the host node's), "
                             "after the deploy (`vtopo show` lists them)")
    parser.add_argument("--allow-site", action="append", default=[], metavar="SITE",
                        help="let vtopo connect to this site of the lab over ssh, with the destination, port, identity "
                             "file and known hosts file the lab gives it (docs/sites.md)")


def consent_of(args: argparse.Namespace) -> Trust:
    from vtopo.lab_terms import Trust

    return Trust(host_devices=frozenset(args.allow_host_device),
                 images=frozenset(os.path.abspath(path) for path in args.allow_image),
                 startup_commands=frozenset(args.allow_commands))
