"""Where vtopo's shipped files live: icons, the JSON schema, the teaching labs, the guest recipe, the systemd units.

They are package data of vtopo (share/ in the package; in a checkout, links to resources/ and topologies/ at its
top), found through importlib.resources, so an installed vtopo finds them wherever it was installed.
"""
from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def _shipped() -> Path:
    share = files("vtopo") / "share"
    if not isinstance(share, Path):  # QEMU, the guest recipe and the tests need real files
        raise RuntimeError(f"vtopo's files are not on disk ({share}): install vtopo unzipped")
    return share


RESOURCES = (_shipped() / "resources").resolve()
TOPOLOGIES = (_shipped() / "topologies").resolve()
GUEST_RECIPE = RESOURCES / "guest"
SYSTEMD_UNITS = RESOURCES / "systemd"


def icon(file_name: str) -> Path:
    return RESOURCES / "icons" / file_name
