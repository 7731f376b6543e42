"""FRR's own files as other tools carry them: the integrated frr.conf and the daemons file of /etc/frr."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from vtopo.interop.losses import shown

CONFIG_DIR = "/etc/frr"
CONFIG_FILE = "/etc/frr/frr.conf"
DAEMONS_FILE = "/etc/frr/daemons"
DAEMON = re.compile(r"[a-z][a-z0-9]{0,15}d")  # zebra is the one daemon whose name ends otherwise
ALWAYS = ("zebra", "staticd")
"""What FRR's own service starts whatever the daemons file says (frrcommon.sh), and so does a vtopo router."""
ROUTER_DAEMONS = ("zebra", "staticd", "ospfd", "ospf6d", "bgpd", "ripd", "ripngd", "isisd", "bfdd")
"""The daemons a vtopo router runs. A daemons file that turns them all on leaves the choice to vtopo (all of them, its
default), as `vtopo export` writes it; a daemon with nothing to do in the configuration idles."""
_ASSIGNMENT = re.compile(r"\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?P<value>.*?)\s*")
_SWITCH = re.compile(r"(?P<on>yes|no)\s*(?:#.*)?")
OSPF_INSTANCES = "ospfd_instances"  # `ospfd_instances=1`: ospfd runs as instance 1 (`router ospf 1`)
MAX_INSTANCE = 65535
SHELL_SETTINGS = ("vtysh_enable",)
"""Settings of a daemons file a vtopo router follows anyway: vtysh loads the integrated frr.conf."""
_INTERFACE = re.compile(r"interface (?P<name>\S+)(?: vrf \S+)?")
_ADDRESS = re.compile(r"ipv?6? address (?P<address>[0-9A-Fa-f.:]+/\d{1,3})")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass
class DaemonsFile:
    """What a daemons file (/etc/frr/daemons) says: the daemons it turns on, in its order, and its other settings
    (`ospfd_instances=1`, `zebra_options="..."`) by name, with their values."""

    on: list[str] = field(default_factory=list)
    settings: dict[str, str] = field(default_factory=dict)

    def chosen(self) -> tuple[list[str], list[str]]:
        """(the daemons a router should run, or [] for vtopo's choice; those turned on that a vtopo router does
        not run). zebra and staticd run whatever the file says, as under FRR's own service."""
        kept = [daemon for daemon in self.on if daemon in ROUTER_DAEMONS]
        dropped = [daemon for daemon in self.on if daemon not in ROUTER_DAEMONS]
        return ([] if set(kept) | set(ALWAYS) == set(ROUTER_DAEMONS) else kept), dropped

    def losses(self, name: str) -> list[str]:
        """A line for each thing of the file `name` a vtopo router does not do: a daemon it does not run, an
        instance number, the options of the daemons it runs (one line), any other setting. The options of daemons
        the file leaves off start nothing, and vtysh's setting is what vtopo does anyway."""
        _, dropped = self.chosen()
        lines = [f"its daemons file {name} turns on {', '.join(dropped)}, which a vtopo router does not run: the "
                 "lines of its configuration for them are skipped"] if dropped else []
        running = {*self.on, *ALWAYS} & set(ROUTER_DAEMONS)
        options = [key for key in self.settings if key.endswith("_options") and key.removesuffix("_options") in running]
        for key, value in self.settings.items():
            if key == OSPF_INSTANCES and self.ospf_instance():
                others = value.split(",")[1:]
                if others:
                    lines.append(f"{key}={shown(value)} in its daemons file {name} is carried in part: ospfd runs as "
                                 f"instance {self.ospf_instance()} alone, and the lines for instance(s) "
                                 f"{shown(', '.join(others))} are skipped")
            elif not key.endswith("_options") and key not in SHELL_SETTINGS:
                lines.append(f"{key}={shown(value)} in its daemons file {name} is not carried: vtopo starts FRR's daemons "
                             "itself, without FRR's service script that reads it")
        if options:
            lines.append(f"{', '.join(options)} in its daemons file {name} are not carried: vtopo starts each daemon "
                         "with its own options (its vty on a socket inside the router only, no TCP port)")
        return lines


    def ospf_instance(self) -> int:
        """The instance number ospfd runs as (the first of ospfd_instances), or 0 for none."""
        first = self.settings.get(OSPF_INSTANCES, "").split(",")[0].strip()
        return int(first) if first.isdigit() and 0 < int(first) <= MAX_INSTANCE else 0


def read_daemons(text: str) -> DaemonsFile:
    """A daemons file's switches (`ospfd=yes`) and settings; comments and blank lines say nothing."""
    read = DaemonsFile()
    for line in text.splitlines():
        assignment = _ASSIGNMENT.fullmatch(line)
        if assignment is None or line.lstrip().startswith("#"):
            continue
        name, value = assignment.group("name"), assignment.group("value")
        switch = _SWITCH.fullmatch(value)
        if switch and (name in ALWAYS or DAEMON.fullmatch(name)):
            if switch.group("on") == "yes":
                read.on.append(name)
        else:
            read.settings[name] = value.strip("\"'")
    return read


def daemons_file(daemons: list[str], ospf_instance: int = 0) -> str:
    """A daemons file that turns on `daemons` (zebra always runs), ospfd as `ospf_instance` if any, and vtysh's
    integrated configuration."""
    lines = [f"{daemon}=yes" for daemon in daemons if daemon != "zebra"]
    instance = [f"{OSPF_INSTANCES}={ospf_instance}"] if ospf_instance else []
    return "\n".join(["# written by vtopo export", *lines, *instance, "vtysh_enable=yes", ""])


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
