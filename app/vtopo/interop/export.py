"""A vtopo lab as a containerlab topology: a `.clab.yml` and each router's frr.conf and daemons, which containerlab
deploys as they are.

Containers become `linux` nodes on a small image, their addresses and default route `exec` lines, their startup
commands after them; routers become `linux` nodes on FRR's image with their configuration bound to /etc/frr;
bridges and OVS switches become `bridge` and `ovs-bridge` nodes, which containerlab expects to exist before it
deploys. What containerlab has no place for (VMs on vtopo's guest, macvlan and macvtap segments, impairments, each
setting of a switch, such as its STP, VLANs or OpenFlow rules) is said node by node, one line each, with the commands
that do it where there are some.

What a lab holds besides its network (its notes, the canvas's notes and rectangles, its checks, an exercise's stages,
an experiment, its sites) is not carried: containerlab has no place for it, and a field of vtopo's own in the topology
would be refused by containerlab or lost by the next tool that writes the file. Each is said instead, one line each,
so that a round trip back through `vtopo import` loses nothing unsaid: the .vtopo file stays the one that holds them.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from vtopo.compile.resolve import resolve
from vtopo.interop import frr
from vtopo.interop.building import Notice
from vtopo.interop.losses import shown
from vtopo.kinds.contract import EndContext, KeepsVlansApart, NodeContext, generated_settings_of
from vtopo.lab_terms import HostFacts, Trust
from vtopo.kinds.registry import Registry
from vtopo.model.io import write_atomically
from vtopo.model.topology import Topology
from vtopo.ops import OvsVlanMode

CONTAINER_IMAGE = "alpine:3"
ROUTER_IMAGE = "quay.io/frrouting/frr:10.5.1"
MAX_HOST_INTERFACE = 15
LINUX_KINDS = ("container", "router")


@dataclass(frozen=True)
class Exported:
    files: dict[str, str]  # relative path -> text
    notices: list[Notice]

    @property
    def topology_file(self) -> str:
        return next(name for name in self.files if name.endswith(".clab.yml"))

    def write(self, directory: Path) -> list[Path]:
        written = []
        for name, text in self.files.items():
            path = directory / name
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, text)
            written.append(path)
        return written


def to_containerlab(topology: Topology, registry: Registry, image: str = CONTAINER_IMAGE,
                    router_image: str = ROUTER_IMAGE) -> Exported:
    """The containerlab topology of a lab. Raises LabError when the lab does not compile. Exporting runs nothing, so
    the startup commands need no consent: they become `exec` lines, each node's with a notice."""
    commands = frozenset(node.name for node in topology.nodes.values() if node.startup_commands)
    lab = resolve(topology, registry, HostFacts(netem=True),  # for another host: its impairments are said
                  Trust(startup_commands=commands)).valid().lab
    return _Export(topology, image, router_image).run(lab.nodes.values())


class _Export:
    def __init__(self, topology: Topology, image: str, router_image: str) -> None:
        self.topology = topology
        self.image, self.router_image = image, router_image
        self.files: dict[str, str] = {}
        self.notices: list[Notice] = []
        self.nodes: dict[str, dict[str, Any]] = {}
        self.interfaces: dict[int, str] = {}  # id of an EndContext -> its interface name in containerlab

    def run(self, nodes: Any) -> Exported:
        contexts: list[NodeContext[Any]] = list(nodes)
        for node in contexts:
            for end in node.ends:
                self.interfaces[id(end)] = self._interface(node, end)
        for node in contexts:
            definition = self._node(node)
            if definition is not None:
                self.nodes[node.node.name] = definition
        links = [link for node in contexts for end in node.ends if (link := self._link(node, end)) is not None]
        self._lab_losses()
        document = {"name": self.topology.name, "topology": {"nodes": self.nodes, "links": links}}
        header = f"# {self.topology.name}, exported by vtopo for containerlab (containerlab deploy -t THIS FILE)\n"
        header += "".join(f"# {notice}\n" for notice in self.notices)
        self.files[f"{self.topology.name}.clab.yml"] = header + yaml.safe_dump(document, sort_keys=False, width=1000)
        return Exported(dict(sorted(self.files.items(), key=lambda item: not item[0].endswith(".clab.yml"))),
                        self.notices)

    def notify(self, subject: str, message: str) -> None:
        self.notices.append(Notice(subject, message))

    def _lab_losses(self) -> None:
        """A line for each thing of the lab a containerlab topology has no place for."""
        topology, kept = self.topology, "containerlab has no place for it; the .vtopo file keeps it"
        if topology.notes.strip():
            self.notify("", f"the lab's notes ({shown(topology.notes)}) are not carried: {kept}")
        for annotation in topology.annotations.values():
            what = f"note {shown(annotation.text)!r}" if annotation.shape == "note" else "rectangle"
            self.notify(f"annotation {annotation.id}", f"the canvas's {what} is not carried: {kept}")
        for check in topology.checks:
            self.notify(f"check {check.name}", f"the {check.type} check is not carried: {kept} (`vtopo check LAB` runs "
                        "it on the lab vtopo deploys)")
        for stage in topology.stages:
            self.notify(f"stage {stage.title}", f"the exercise's stage is not carried: {kept}")
        if not topology.experiment.empty:
            self.notify("", f"the lab's experiment ({len(topology.experiment.tests)} test(s) on "
                        f"{len(topology.experiment.pairs)} pair(s)) is not carried: {kept}")
        for site in topology.sites:
            self.notify(f"site {site}", "the site is not carried: containerlab deploys the whole lab on one machine")

    def _kept(self, node: NodeContext[Any]) -> bool:
        return node.node.kind in (*LINUX_KINDS, "bridge", "ovs", "host")

    # ------------------------------------------------------------ nodes

    def _node(self, node: NodeContext[Any]) -> dict[str, Any] | None:
        kind, name = node.node.kind, node.node.name
        subject = node.subject
        definition: dict[str, Any]
        if kind == "container":
            definition = {"kind": "linux", "image": node.settings.image or self.image, "exec": self._exec(node, set())}
            if node.settings.sysctls:
                definition["sysctls"] = dict(node.settings.sysctls)
        elif kind == "router":
            config = node.node.settings.get("config") or generated_settings_of(node).get("config", "")
            daemons = node.node.settings.get("daemons") or list(frr.ROUTER_DAEMONS)
            self.files[f"{name}/frr.conf"] = config
            self.files[f"{name}/daemons"] = frr.daemons_file(daemons, node.node.settings.get("ospf_instance", 0))
            in_config = {a for addresses in frr.interface_addresses(config).values() for a in addresses}
            definition = {"kind": "linux", "image": node.settings.image or self.router_image,
                          "binds": [f"{name}/frr.conf:{frr.CONFIG_FILE}", f"{name}/daemons:{frr.DAEMONS_FILE}"],
                          "exec": self._exec(node, in_config)}
        elif kind in ("bridge", "ovs"):
            return self._switch(node)
        elif kind == "host":
            return None  # containerlab's links name the host as `host:IF`; it is no node of the topology
        else:
            self.notify(subject, f"left out: containerlab has no counterpart of a {node.kind.label} "
                        f"({'it runs vendor images, not vtopo' + chr(39) + 's built-in guest' if kind == 'vm' else kind})"
                        "; its links are left out too")
            return None
        if not definition["exec"]:
            del definition["exec"]
        if any(self.interfaces[id(end)] == "eth0" for end in node.ends):
            definition["network-mode"] = "none"  # eth0 is containerlab's management interface otherwise
        definition["labels"] = {"graph-posX": str(round(node.node.position.x)),
                                "graph-posY": str(round(node.node.position.y))}
        return definition

    def _exec(self, node: NodeContext[Any], configured: set[str]) -> list[str]:
        lines = []
        for end in sorted(node.ends, key=lambda e: e.end.port):
            for address in end.end.interface.addresses:
                if address not in configured:
                    family = "-6 " if ipaddress.ip_interface(address).version == 6 else ""
                    lines.append(f"ip {family}addr add {address} dev {self.interfaces[id(end)]}")
        for gateway in node.kind.default_gateways(node) or []:  # over containerlab's own, through eth0
            address, _, port = gateway.partition("%")
            family = "-6 " if ":" in address else ""
            out = next((f" dev {self.interfaces[id(end)]}" for end in node.ends if end.end.port == port), "")
            lines.append(f"ip {family}route replace default via {address}{out}")
        for route in node.settings.routes if node.node.kind == "container" else []:
            destination, _, gateway = route.partition(" via ")
            family = "-6 " if ":" in gateway else ""
            lines.append(f"ip {family}route add {destination.strip()} via {gateway.strip()}")
        if node.node.startup_commands:
            lines += node.node.startup_commands
            self.notify(node.subject, f"its {len(node.node.startup_commands)} startup command(s) became `exec` lines, "
                        "which containerlab runs in the node once it is up, with no consent asked")
        return lines

    def _switch(self, node: NodeContext[Any]) -> dict[str, Any]:
        name = node.node.name
        if node.node.kind == "bridge":
            self.notify(node.subject, f"a bridge node: containerlab expects the bridge made before it deploys: "
                        f"ip link add {name} type bridge && ip link set {name} up")
            definition: dict[str, Any] = {"kind": "bridge"}
        else:
            self.notify(node.subject, f"an ovs-bridge node: containerlab expects it made before it deploys: "
                        f"ovs-vsctl add-br {name}")
            definition = {"kind": "ovs-bridge"}
        defaults = type(node.settings)()
        for field in fields(node.settings):
            value = getattr(node.settings, field.name)
            if value != getattr(defaults, field.name):
                self.notify(node.subject, f"{field.name} = {value!r} is not carried: a containerlab "
                            f"{definition['kind']} is made by you, not by the topology"
                            f"{self._made_by(node, field.name, value)}")
        if len(name) > MAX_HOST_INTERFACE:
            self.notify(node.subject, f"containerlab names the host's switch after the node, and {name!r} is longer "
                        f"than the kernel's {MAX_HOST_INTERFACE} characters: rename it before deploying")
        definition["labels"] = {"graph-posX": str(round(node.node.position.x)),
                                "graph-posY": str(round(node.node.position.y))}
        return definition

    def _made_by(self, node: NodeContext[Any], field: str, value: Any) -> str:
        """The commands that set a switch's field on the switch containerlab expects, once it has deployed."""
        name = node.node.name
        if field == "vlans":
            return "; once deployed: " + " && ".join(self._vlan_commands(node))
        if field == "flows":
            return f"; once deployed: ovs-ofctl add-flow {name} RULE for each of {value}"
        if field == "stp":
            return f"; ip link set {name} type bridge stp_state {int(bool(value))}"
        if field == "host_addresses":
            return "; " + " && ".join(f"ip address add {address} dev {name}" for address in value)
        return ""

    def _vlan_commands(self, node: NodeContext[Any]) -> list[str]:
        name = node.node.name
        commands = [] if node.node.kind != "bridge" else [f"ip link set {name} type bridge vlan_filtering 1"]
        for end in sorted(node.ends, key=lambda e: e.end.port):
            vlans = node.kind.port_vlans(node, end) if isinstance(node.kind, KeepsVlansApart) else None
            port = self.interfaces[id(end)]
            if vlans is None:
                continue
            if node.node.kind != "bridge":
                mode = (OvsVlanMode.ACCESS if not vlans.trunk else
                        OvsVlanMode.TRUNK if vlans.untagged is None else OvsVlanMode.NATIVE_UNTAGGED)
                trunks = f" trunks={','.join(map(str, vlans.tagged))}" if vlans.trunk else ""
                tag = f" tag={vlans.untagged}" if vlans.untagged is not None else ""
                commands.append(f"ovs-vsctl set port {port} vlan_mode={mode}{tag}{trunks}")
                continue
            commands.append(f"bridge vlan del dev {port} vid 1")
            if vlans.untagged is not None:
                commands.append(f"bridge vlan add dev {port} vid {vlans.untagged} pvid untagged")
            commands += [f"bridge vlan add dev {port} vid {vid}" for vid in vlans.tagged]
        return commands

    # ------------------------------------------------------------ links

    def _interface(self, node: NodeContext[Any], end: EndContext) -> str:
        """The end's name in containerlab: the interface inside a container or router, a host interface (which must
        be unique on the host) on a switch or the host."""
        if node.node.kind in LINUX_KINDS:
            return end.device
        owner = node.node.name if node.node.kind != "host" else end.other.node.name
        port = end.end.port if node.node.kind != "host" else end.other.end.port
        return f"{owner[:MAX_HOST_INTERFACE - len(port) - 1]}-{port}"

    def _link(self, node: NodeContext[Any], end: EndContext) -> dict[str, Any] | None:
        other = end.other
        if end.end is not end.link.a:
            return None  # each link once, from its first end
        if not (self._kept(node) and self._kept(other.owner)):
            return None
        link = end.link
        names = [self._endpoint(e) for e in (end, other)]
        definition: dict[str, Any] = {"endpoints": names}
        mtu = max(end.end.interface.mtu, other.end.interface.mtu)
        if mtu:
            definition["mtu"] = mtu
        if any(e.end.interface.mac for e in (end, other)):
            definition = {"type": "veth", "endpoints": [
                {"node": n.split(":")[0], "interface": n.split(":")[1], **({"mac": e.end.interface.mac}
                                                                        if e.end.interface.mac else {})}
                for n, e in zip(names, (end, other))], **({"mtu": mtu} if mtu else {})}
        if link.impairment.active:
            impairment = link.impairment
            options = " ".join(f"--{flag} {value}" for flag, value in (
                ("delay", f"{impairment.delay_ms:g}ms" if impairment.delay_ms else ""),
                ("jitter", f"{impairment.jitter_ms:g}ms" if impairment.jitter_ms else ""),
                ("loss", f"{impairment.loss_pct:g}" if impairment.loss_pct else ""),
                ("rate", f"{impairment.rate_mbit * 1000:g}" if impairment.rate_mbit else "")) if value)
            target = next((e for e in (end, other) if e.owner.node.kind in LINUX_KINDS), None)
            command = (f": containerlab tools netem set -n clab-{self.topology.name}-{target.owner.node.name} "
                       f"-i {self.interfaces[id(target)]} {options}") if target is not None else ""
            self.notify(f"link {self.topology.describe_link(link)}", f"its impairment is not part of a containerlab "
                        f"topology; set it once deployed{command}")
        return definition

    def _endpoint(self, end: EndContext) -> str:
        node = "host" if end.owner.node.kind == "host" else end.owner.node.name
        return f"{node}:{self.interfaces[id(end)]}"
