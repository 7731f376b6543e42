"""Where vtopo's shipped files live: icons, the JSON schema, templates, the guest recipe."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESOURCES = ROOT / "resources"
TOPOLOGIES = ROOT / "topologies"


def icon(file_name: str) -> Path:
    return RESOURCES / "icons" / file_name
