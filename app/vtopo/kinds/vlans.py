"""A switch's VLANs port by port, as its VLANs setting writes them: `access 10`, `trunk 10,20`,
`trunk 10,20 native 1`. One reading and one writing of that text, for the switch kinds, the designer's controls and
its labels alike."""
from __future__ import annotations

import re
from functools import cache
from vtopo.kinds.contract import PortVlans
from vtopo.kinds.settings import setting_fields
from vtopo.model.rules import DEFAULT_VLAN

LOWEST_VLAN, HIGHEST_VLAN = 1, 4094  # 0 is a frame without a VLAN, 4095 is reserved
EXAMPLE = "p1 = access 10, p3 = trunk 10,20 native 1"
PORT_TEXT = re.compile(r"\s*(access|trunk)\s+(\d+(?:\s*,\s*\d+)*)(?:\s+native\s+(\d+))?\s*")


def parse_port(text: str) -> tuple[PortVlans, list[int]]:
    """A port's VLANs from its setting's text, with every VLAN number it names; ValueError when it is neither
    `access N` nor `trunk N,N [native N]`."""
    match = PORT_TEXT.fullmatch(text)
    if match is None or (match.group(1) == "access" and ("," in match.group(2) or match.group(3))):
        raise ValueError(text)
    numbers = [int(number) for number in match.group(2).split(",")]
    if match.group(1) == "access":
        return PortVlans(numbers[0]), numbers
    native = int(match.group(3)) if match.group(3) else None
    return PortVlans(native, tuple(sorted(set(numbers) - {native}))), numbers + ([native] if native else [])


def port_vlans(vlans: dict[str, str], port: str) -> PortVlans | None:
    """The VLANs of `port` on a switch with the VLANs setting `vlans`: None where it sets none (the switch passes
    every frame as it came), VLAN 1 untagged for a port it does not list (or lists wrongly: the check says so)."""
    if not vlans:
        return None
    try:
        return parse_port(vlans[port])[0]
    except (KeyError, ValueError):
        return PortVlans(DEFAULT_VLAN)


def port_label(vlans: PortVlans) -> str:
    """The VLANs as a link shows them on the canvas: `v10` for an access port, `10,20` for a trunk (with `native 1`
    where it has one)."""
    if not vlans.trunk:
        return f"v{vlans.untagged}"
    native = f" native {vlans.untagged}" if vlans.untagged is not None else ""
    return f"{','.join(map(str, vlans.tagged))}{native}"


@cache
def vlans_setting_name(settings_type: type) -> str:
    """The name of the setting of a kind's settings that holds its VLANs port by port; "" where it has none."""
    return next((spec.name for spec in setting_fields(settings_type) if spec.info.port_vlans), "")

