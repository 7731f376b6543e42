"""FRR's own files as other tools carry them: the integrated frr.conf and the daemons file of /etc/frr."""
from __future__ import annotations

import re

CONFIG_FILE = "/etc/frr/frr.conf"
DAEMONS_FILE = "/etc/frr/daemons"
DAEMON = re.compile(r"[a-z][a-z0-9]{0,15}d")  # zebra is the one daemon whose name ends otherwise
ALWAYS = "zebra"
ROUTER_DAEMONS = ("zebra", "staticd", "ospfd", "ospf6d", "bgpd", "ripd", "ripngd", "isisd", "bfdd")
"""The daemons a vtopo router runs. A daemons file that turns them all on leaves the choice to vtopo (all of them, its
default), as `vtopo export` writes it; a daemon with nothing to do in the configuration idles."""
_DAEMON_LINE = re.compile(r"\s*(?P<daemon>[a-z][a-z0-9]*)\s*=\s*(?P<on>yes|no)\s*(?:#.*)?")
_INTERFACE = re.compile(r"interface (?P<name>\S+)(?: vrf \S+)?")
_ADDRESS = re.compile(r"ipv?6? address (?P<address>[0-9A-Fa-f.:]+/\d{1,3})")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def daemons_in(text: str) -> list[str]:
    """The daemons a daemons file turns on (`ospfd=yes`), in its order."""
    found = []
    for line in text.splitlines():
        match = _DAEMON_LINE.fullmatch(line)
        if match and match.group("on") == "yes" and (match.group("daemon") == ALWAYS or
                                                     DAEMON.fullmatch(match.group("daemon"))):
            found.append(match.group("daemon"))
    return found


def chosen_daemons(listed: list[str]) -> tuple[list[str], list[str]]:
    """(the daemons a router should run, or [] for vtopo's choice; those of `listed` a vtopo router does not run)."""
    kept = [daemon for daemon in listed if daemon in ROUTER_DAEMONS]
    dropped = [daemon for daemon in listed if daemon not in ROUTER_DAEMONS]
    return ([] if set(kept) | {ALWAYS} == set(ROUTER_DAEMONS) else kept), dropped


def daemons_file(daemons: list[str]) -> str:
    """A daemons file that turns on `daemons` (zebra always runs) and vtysh's integrated configuration."""
    lines = [f"{daemon}=yes" for daemon in daemons if daemon != ALWAYS]
    return "\n".join(["# written by vtopo export", *lines, "vtysh_enable=yes", ""])


def interface_addresses(config: str) -> dict[str, list[str]]:
    """The addresses an integrated configuration gives each interface (`interface eth1` / ` ip address ...`)."""
    found: dict[str, list[str]] = {}
    interface = ""
    for line in config.splitlines():
        stripped = line.strip()
        header = _INTERFACE.fullmatch(stripped)
        if header and not line[:1].isspace():
            interface = header.group("name")
            continue
        if not line[:1].isspace() or stripped in ("exit", "!"):
            interface = ""
            continue
        address = _ADDRESS.fullmatch(stripped)
        if interface and address:
            found.setdefault(interface, []).append(address.group("address"))
    return found


def normalised(config: str) -> str:
    """A configuration as a lab file keeps it: Unix line ends and spaces for tabs, as FRR reads them alike.
    ValueError names any other control character, which no configuration holds."""
    text = config.replace("\r\n", "\n").replace("\t", " ")
    control = _CONTROL.search(text)
    if control:
        line = text.count("\n", 0, control.start()) + 1
        raise ValueError(f"line {line} holds the control character U+{ord(control.group()):04X}")
    return text if text.endswith("\n") or not text else text + "\n"
