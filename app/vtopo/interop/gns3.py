"""GNS3 projects (`*.gns3`, JSON, format revision 5 and later) as vtopo labs.

Nodes become:

    vpcs                           a container, with the address and gateway of its saved startup.vpc
    docker                         a container, with the static addresses of its saved /etc/network/interfaces;
                                   Open vSwitch images an OVS switch; FRR and Quagga images a router with the
                                   frr.conf saved in the project's folder
    ethernet_switch, ethernet_hub  a Linux bridge; an Ethernet switch whose ports set VLANs an OVS switch with
                                   those VLANs (a dot1q port a trunk)
    qemu                           a VM on vtopo's built-in guest (a router when its disk is FRR's or Quagga's)
    anything else                  left out, with its links, saying so

Drawings become notes (the text of an SVG <text>) and rectangles. Saved files are read from the project's folder
only (project-files/<type>/<node id>/...), as any file a topology names.
"""
from __future__ import annotations

import html
import ipaddress
import re
from dataclasses import dataclass
from typing import Any

from vtopo.interop import frr
from vtopo.interop.building import HOST_PROGRAMS, RUNS_IMAGE, End, Imported, LabBuilder, Notice, image_here
from vtopo.interop.folder import Missing, TopologyFolder, Unreadable, unreadable
from vtopo.interop.losses import loss, unread
from vtopo.kinds.registry import Registry
from vtopo.model.io import Reader
from vtopo.model.problems import LabError, Problem
from vtopo.model.topology import ANNOTATION_SIZE, COORDINATE, Annotation, Position
from vtopo.model.untrusted_json import parse, readable

MULTILINE = re.compile(r".*\.(svg|startup_script|start_command|environment|extra_hosts|usage|text)")
OVS_IMAGE = re.compile(r"openvswitch|ovs", re.IGNORECASE)
ROUTER_IMAGE = re.compile(r"frr|quagga", re.IGNORECASE)
SWITCHES = {"ethernet_switch": "an Ethernet switch", "ethernet_hub": "an Ethernet hub"}
LEFT_OUT = {"dynamips": "a Cisco IOS router (Dynamips)", "iou": "a Cisco IOU device", "cloud": "a cloud (a host "
            "interface)", "nat": "a NAT node (the host's internet connection)", "virtualbox": "a VirtualBox VM",
            "vmware": "a VMware VM", "frame_relay_switch": "a Frame Relay switch", "atm_switch": "an ATM switch"}
VPCS_IP = re.compile(r"ip (?P<address>[0-9.]+)(?:/(?P<prefix>\d{1,2}))?(?P<rest>(?: [0-9.]+){0,2})")
"""VPCS's `ip ADDRESS[/PREFIX] [GATEWAY] [PREFIX or MASK]`, as its startup.vpc saves it (ip 10.0.0.2 10.0.0.1 24)."""
SVG_TEXT = re.compile(r"<text\b[^>]*>(?P<text>.*?)</text>", re.DOTALL)
SVG_SIZE = re.compile(r"<svg\b[^>]*?\bwidth=\"(?P<width>[0-9.]+)\"[^>]*?\bheight=\"(?P<height>[0-9.]+)\"|"
                      r"<svg\b[^>]*?\bheight=\"(?P<height2>[0-9.]+)\"[^>]*?\bwidth=\"(?P<width2>[0-9.]+)\"")


GNS3_OWN = frozenset({"compute_id", "console", "console_type", "console_auto_start", "console_host", "console_http_path",
                      "console_http_port", "console_resolution", "aux", "aux_type", "symbol", "label", "z", "locked",
                      "port_name_format", "port_segment_size", "first_port_name", "template_id", "status",
                      "node_directory", "command_line", "qemu_path", "platform", "process_priority", "linked_clone",
                      "on_close", "legacy_networking", "replicate_network_connection_state", "create_config_disk",
                      "boot_priority", "link_style", "drawing_grid_size", "grid_size", "show_grid", "snap_to_grid",
                      "show_interface_labels", "show_layers", "zoom", "scene_width", "scene_height", "auto_open",
                      "auto_close", "auto_start", "supplier", "revision", "version", "project_id", "computes",
                      "type"})
"""GNS3's own bookkeeping, nothing of the lab: its consoles, symbols and labels, where it keeps its files, how its
canvas and its emulators are set up."""
NODE_CARRIED = GNS3_OWN | {"node_id", "name", "node_type", "properties", "x", "y", "width", "height"}
PROPERTIES_CARRIED = GNS3_OWN | {"image", "hda_disk_image", "ports_mapping", "adapters", "startup_script_path"}
"""A node's properties read: its image or disk, a switch's ports, its saved startup script, and how many adapters it
has (its links say which it uses, and a vtopo node has an interface for each link)."""
NOT_CARRIED = {
    "custom_adapters": "vtopo names a node's interfaces and picks their MAC addresses itself",
    "environment": "the node's commands run with vtopo's environment; set a variable in a startup command",
    "start_command": "a vtopo node runs no main process of an image; its startup commands run, with consent",
    "extra_hosts": "vtopo writes each node's /etc/hosts with the lab's names",
    "extra_volumes": "a vtopo node sees the host's own files, and nothing is mounted into it",
    "usage": "the template's usage text; put it in the lab's notes",
    "ram": "a router or a container runs as a namespace on this host, with no memory of a VM's (a vtopo VM takes "
           "64 MiB to 1 TiB)",
    "cpus": "a router or a container runs as a namespace on this host, with no CPUs of a VM's",
    "adapter_type": "a router or a container has veth interfaces, and a vtopo VM virtio or e1000 NICs",
    "options": "vtopo starts QEMU with its own options",
    "mac_address": "vtopo picks the node's MAC addresses",
    "suspend": "the link is up in vtopo; `vtopo link LAB A B down` takes it down once deployed",
    "variables": "vtopo has no project variables",
    "rotation": "vtopo draws the note unrotated",
}
VM_PROPERTIES = {"ram": "memory_mb", "cpus": "vcpus", "adapter_type": "nic_model"}
"""A qemu node's properties a vtopo VM takes, as its settings."""
NIC_MODELS = {"virtio-net-pci": "virtio", "e1000": "e1000"}
MEMORY_MB, VCPUS = (64, 1_048_576), (1, 64)


def _vm_settings(properties: dict[str, Any]) -> dict[str, Any]:
    """A qemu node's memory, CPUs and NIC model as a vtopo VM's settings, where they are ones it takes."""
    settings: dict[str, Any] = {}
    for key, (low, high) in (("ram", MEMORY_MB), ("cpus", VCPUS)):
        value = properties.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            settings[VM_PROPERTIES[key]] = value
    adapter_type = properties.get("adapter_type")
    if isinstance(adapter_type, str) and adapter_type in NIC_MODELS:
        settings["nic_model"] = NIC_MODELS[adapter_type]
    return settings


DEFAULT_VLAN = 1
PORT_TYPES = ("access", "dot1q", "qinq")


@dataclass(frozen=True)
class GnsPort:
    """A port of a GNS3 Ethernet switch: `type` access, dot1q (a trunk) or qinq, and its VLAN."""

    type: str
    vlan: int


def read_gns3(text: str, folder: TopologyFolder, registry: Registry, default_name: str) -> Imported:
    """The lab a GNS3 project describes. Raises LabError naming the node, link and field of every problem."""
    document = parse(text, lambda path: MULTILINE.fullmatch(path) is not None)
    if not isinstance(document, dict) or document.get("type") != "topology" or \
            not isinstance(document.get("topology"), dict):
        raise LabError([Problem('not a GNS3 project: the top level must be an object with "type": "topology" and a '
                                "topology", path="$")])
    return _Reading(document, folder, registry, default_name).imported()


class _Reading:
    def __init__(self, document: dict[str, Any], folder: TopologyFolder, registry: Registry,
                 default_name: str) -> None:
        self.reader = Reader()
        self.folder = folder
        name = self.reader.field(document, "name", str, "$", "") or default_name
        self.builder = LabBuilder(name, registry)
        self.document = document
        topology = document["topology"]
        self.nodes = self.reader.field(topology, "nodes", list, "$.topology", [])
        self.links = self.reader.field(topology, "links", list, "$.topology", [])
        self.drawings = self.reader.field(topology, "drawings", list, "$.topology", [])
        self.names: dict[str, str] = {}  # node_id -> name
        self.types: dict[str, str] = {}  # node_id -> node_type
        self.kept: set[str] = set()  # node ids that became a vtopo node
        self.addresses: dict[str, dict[str, list[str]]] = {}  # node id -> interface -> addresses, from saved files
        self.switch_ports: dict[str, dict[str, GnsPort]] = {}  # node id of a switch with VLANs -> its ports
        self.losses: dict[str, list[str]] = {}  # node id -> a line each for what its saved files say and is not carried

    def imported(self) -> Imported:
        for key in unread(self.document, GNS3_OWN | {"name", "topology"}):
            if self.document[key]:
                self.builder.notify("", loss(key, self.document[key], NOT_CARRIED))
        for key in unread(self.document["topology"], GNS3_OWN | {"nodes", "links", "drawings"}):
            self.builder.notify("", loss(f"topology.{key}", self.document["topology"][key], NOT_CARRIED))
        for index, raw in enumerate(self.nodes):
            self._node(raw, f"$.topology.nodes[{index}]")
        for index, raw in enumerate(self.links):
            self._link(raw, f"$.topology.links[{index}]")
        self._port_vlans()
        if self.reader.problems:
            raise LabError(self.reader.problems)
        imported = self.builder.build()
        for index, raw in enumerate(self.drawings):
            self._drawing(raw, f"$.topology.drawings[{index}]", imported)
        if self.reader.problems:
            raise LabError(self.reader.problems)
        return imported

    # ------------------------------------------------------------ nodes

    def _node(self, raw: Any, path: str) -> None:
        if not self.reader.typed(raw, dict, path, "node"):
            return
        node_id = self.reader.field(raw, "node_id", str, path, "")
        name = self.reader.field(raw, "name", str, path, "")
        subject = f"node {name or node_id}"
        node_type = self.reader.field(raw, "node_type", str, path, "", subject)
        properties = self.reader.field(raw, "properties", dict, path, {}, subject)
        if not node_id or not name or not node_type:
            self.reader.fail(path, "a node needs a node_id, a name and a node_type", subject)
            return
        if node_id in self.names:
            self.reader.fail(f"{path}.node_id", f"node_id {node_id} is also {self.names[node_id]}'s", subject)
            return
        self.names[node_id], self.types[node_id] = name, node_type
        image = str(properties.get("image") or properties.get("hda_disk_image") or "")
        kind, settings, facts, commands = self._mapped(node_id, node_type, image, properties, subject)
        if kind is None:
            self.builder.notify(subject, f"left out: {facts[0]}; its links are left out too")
            return
        position = self._position(raw, path, subject)
        node = self.builder.add_node(node_id, kind, settings, position, commands, name=name)
        self.kept.add(node_id)
        self.builder.notify(f"node {node.name}", "; ".join(facts))
        lost = [loss(key, raw[key], NOT_CARRIED) for key in unread(raw, NODE_CARRIED) if raw[key]]
        carried = PROPERTIES_CARRIED | {key for key, name in VM_PROPERTIES.items() if kind == "vm" and name in settings}
        lost += [loss(key, properties[key], NOT_CARRIED) for key in unread(properties, carried) if properties[key]]
        for line in [*self.losses.get(node_id, []), *lost]:
            self.builder.notify(f"node {node.name}", line)

    def _mapped(self, node_id: str, node_type: str, image: str, properties: dict[str, Any], subject: str
                ) -> tuple[str | None, dict[str, Any], list[str], list[str]]:
        """(vtopo kind or None, settings, what to tell the user, startup commands) of a GNS3 node."""
        if node_type == "vpcs":
            return self._vpcs(node_id, subject)
        if node_type == "docker" and OVS_IMAGE.search(image):
            return "ovs", {}, [f"an Open vSwitch switch (Docker image {image})"], []
        if node_type in ("docker", "qemu") and ROUTER_IMAGE.search(image):
            return self._router(node_id, node_type, image, subject)
        if node_type == "docker":
            settings, facts = self._docker_addresses(node_id, subject)
            here = image_here(image)
            facts.insert(0, f"a container (Docker image {image or 'unnamed'}){RUNS_IMAGE if here else HOST_PROGRAMS}")
            return "container", {**settings, **({"image": image} if here else {})}, facts, []
        if node_type in SWITCHES:
            return self._switch(node_id, node_type, properties, subject)
        if node_type == "qemu":
            return "vm", _vm_settings(properties), [f"a VM on vtopo's built-in guest, not {image or 'its disk image'}: "
                                                    "vtopo boots its small Linux guest (iperf3, ping) in its place"], []
        return None, {}, [f"{LEFT_OUT.get(node_type, f'a {node_type} node')} is not something vtopo runs"], []

    def _switch(self, node_id: str, node_type: str, properties: dict[str, Any], subject: str
                ) -> tuple[str, dict[str, Any], list[str], list[str]]:
        """A Linux bridge, or an Open vSwitch switch for an Ethernet switch whose ports set VLANs: OVS keeps VLANs apart
        on every host, where a Linux bridge needs a kernel that filters VLANs. Its ports' VLANs are set once the links
        are known (_port_vlans)."""
        mapping = properties.get("ports_mapping")
        ports: dict[str, GnsPort] = {}
        for index, raw in enumerate(mapping if isinstance(mapping, list) and node_type == "ethernet_switch" else []):
            where = f"ports_mapping[{index}]"
            if not isinstance(raw, dict) or not isinstance(raw.get("port_number"), int):
                self.reader.fail("", f"{where} needs a port_number", subject)
                continue
            vlan = raw.get("vlan", DEFAULT_VLAN)
            port_type = raw.get("type", "access")
            if not isinstance(vlan, int) or port_type not in PORT_TYPES:
                self.reader.fail("", f"{where}: a port is of type {', '.join(PORT_TYPES)} with a whole-number vlan, "
                                 f"not {port_type!r} with vlan {vlan!r}", subject)
                continue
            ports[f"p{raw['port_number'] + 1}"] = GnsPort(port_type, vlan)
        if all(port == GnsPort("access", DEFAULT_VLAN) for port in ports.values()):
            return "bridge", {}, [f"a Linux bridge ({SWITCHES[node_type]})"], []
        self.switch_ports[node_id] = ports
        return "ovs", {}, [f"an Open vSwitch switch ({SWITCHES[node_type]} with VLANs: OVS keeps VLANs apart on every "
                           "host, a Linux bridge only where the kernel filters VLANs)"], []

    def _port_vlans(self) -> None:
        """Each linked port of a switch with VLANs as a vtopo VLANs setting: an access port as it is, a dot1q port (in
        GNS3 a trunk of every VLAN, untagged in its own) a trunk of every VLAN the project's switches name, native
        its own. A QinQ port has no counterpart."""
        used = sorted({port.vlan for ports in self.switch_ports.values() for port in ports.values()})
        for node_id, ports in self.switch_ports.items():
            node = self.builder.node(node_id)
            if node is None:
                continue
            linked = {end.interface for end in self.builder.ends_of(node_id)}
            vlans: dict[str, str] = {}
            for name, port in sorted(ports.items()):
                if name not in linked:
                    continue
                others = [vlan for vlan in used if vlan != port.vlan]
                if port.type == "qinq":
                    self.builder.notify(f"node {node.name}", f"port {name} is a QinQ tunnel port (outer VLAN "
                                        f"{port.vlan}), which vtopo's switches do not make: it is an access port in "
                                        f"VLAN {port.vlan}, which drops frames that come tagged instead of tagging "
                                        "them again")
                vlans[name] = (f"trunk {','.join(map(str, others))} native {port.vlan}"
                               if port.type == "dot1q" and others else f"access {port.vlan}")
            node.settings["vlans"] = vlans
            if any(port.type == "dot1q" for name, port in ports.items() if name in linked):
                self.builder.notify(f"node {node.name}", f"its dot1q ports carry the VLANs the project's switches name "
                                    f"({', '.join(map(str, used))}), not every VLAN 1-4094 as in GNS3: tagged frames "
                                    "of any other VLAN are dropped")

    def _saved(self, node_type: str, node_id: str, *names: str) -> tuple[str, str]:
        """The first of a node's files saved in the project (project-files/<type>/<id>/<name>) that exists, with its
        name; ("", "") when none does."""
        for name in names:
            relative = f"project-files/{node_type}/{node_id}/{name}"
            try:
                return self.folder.read(relative), relative
            except Missing:
                continue
            except Unreadable as error:
                self.reader.problems.append(unreadable(f"node {self.names[node_id]}", "", "saved file", relative,
                                                       error))
        return "", ""

    def _vpcs(self, node_id: str, subject: str) -> tuple[str, dict[str, Any], list[str], list[str]]:
        script, name = self._saved("vpcs", node_id, "startup.vpc")
        settings: dict[str, Any] = {}
        facts = ["a container (a VPCS)"]
        for line in script.splitlines():
            match = VPCS_IP.fullmatch(line.strip())
            if not match:
                continue
            prefix, gateway = match.group("prefix") or "24", ""
            for word in match.group("rest").split():
                if "." in word and not word.startswith("255."):
                    gateway = word
                else:
                    prefix = word
            try:
                address = ipaddress.ip_interface(f"{match.group('address')}/{prefix}")
            except ValueError:
                self.reader.fail("", f"{name}: {line.strip()!r} is not an address vtopo understands", subject)
                continue
            self.addresses.setdefault(node_id, {}).setdefault("eth0", []).append(address.with_prefixlen)
            if gateway:
                settings["default_route"] = gateway
            facts.append(f"address {address.with_prefixlen}{' via ' + gateway if gateway else ''} from its {name}")
        return "container", settings, facts, []

    def _docker_addresses(self, node_id: str, subject: str) -> tuple[dict[str, Any], list[str]]:
        """Static addresses and the gateway from a Docker node's saved /etc/network/interfaces."""
        text, name = self._saved("docker", node_id, "etc/network/interfaces")
        settings: dict[str, Any] = {}
        interface, netmask = "", ""
        for line in text.splitlines():
            words = line.split()
            if words[:1] == ["iface"] and len(words) >= 2:
                interface, netmask = words[1], ""
            elif words[:1] == ["address"] and len(words) == 2 and interface:
                self.addresses.setdefault(node_id, {}).setdefault(interface, []).append(words[1])
            elif words[:1] == ["netmask"] and len(words) == 2:
                netmask = words[1]
                own = self.addresses.get(node_id, {}).get(interface, [])
                if own and "/" not in own[-1]:
                    own[-1] = f"{own[-1]}/{netmask}"
            elif words[:1] == ["gateway"] and len(words) == 2:
                settings["default_route"] = words[1]
        for interface, addresses in self.addresses.get(node_id, {}).items():
            try:
                addresses[:] = [ipaddress.ip_interface(a if "/" in a else f"{a}/32").with_prefixlen for a in addresses]
            except ValueError as error:
                self.reader.fail("", f"{name}: {error}", subject)
        return settings, [f"addresses from its saved {name}"] if name else []

    def _router(self, node_id: str, node_type: str, image: str, subject: str
                ) -> tuple[str, dict[str, Any], list[str], list[str]]:
        facts = [f"a router ({node_type} image {image})"]
        config, name = self._saved(node_type, node_id, "etc/frr/frr.conf", "frr.conf", "etc/quagga/Quagga.conf")
        if not config:
            facts.append("no saved FRR configuration in the project (a VM keeps it inside its disk): vtopo's OSPF on "
                         "every link")
            return "router", {}, facts, []
        try:
            config = frr.normalised(config)
        except ValueError as error:
            self.reader.fail("", f"{name}: the FRR configuration cannot be kept: {error}", subject)
            return "router", {}, facts, []
        self.addresses[node_id] = frr.interface_addresses(config)
        daemons_text, daemons_name = self._saved(node_type, node_id, "etc/frr/daemons")
        settings: dict[str, Any] = {"config": config}
        read = frr.read_daemons(daemons_text)
        daemons, _ = read.chosen()
        if daemons:
            settings["daemons"] = daemons
        if read.ospf_instance():
            settings["ospf_instance"] = read.ospf_instance()
        self.losses.setdefault(node_id, []).extend(read.losses(daemons_name))
        facts.append(f"its FRR configuration {name} is kept verbatim")
        return "router", settings, facts, []

    def _position(self, raw: dict[str, Any], path: str, subject: str) -> Position:
        x = self.reader.number(raw, "x", path, 0, COORDINATE, subject)
        y = self.reader.number(raw, "y", path, 0, COORDINATE, subject)
        width = self.reader.number(raw, "width", path, 0, ANNOTATION_SIZE, subject)
        height = self.reader.number(raw, "height", path, 0, ANNOTATION_SIZE, subject)
        return Position(x + width / 2, y + height / 2)  # GNS3 places a symbol's corner, vtopo a node's centre

    # ------------------------------------------------------------ links

    def _link(self, raw: Any, path: str) -> None:
        subject = f"link {raw.get('link_id', path) if isinstance(raw, dict) else path}"
        if not self.reader.typed(raw, dict, path, "link", subject):
            return
        sides = self.reader.field(raw, "nodes", list, path, [], subject)
        if len(sides) != 2 or not all(isinstance(side, dict) for side in sides):
            self.reader.fail(f"{path}.nodes", "a link joins two nodes", subject)
            return
        ends = []
        for index, side in enumerate(sides):
            where = f"{path}.nodes[{index}]"
            node_id = self.reader.field(side, "node_id", str, where, "", subject)
            adapter = self.reader.number(side, "adapter_number", where, 0, (0, 4096), subject, whole=True)
            port = self.reader.number(side, "port_number", where, 0, (0, 4096), subject, whole=True)
            if node_id not in self.names:
                self.reader.fail(f"{where}.node_id", f"the link names node {node_id!r}, which the project does not "
                                 "have", subject)
                return
            ends.append(self._end(node_id, int(adapter), int(port)))
        left_out = [self.names[end.node] for end in ends if end.node not in self.kept]
        if left_out:
            self.builder.notify(subject, f"{self.names[ends[0].node]} - {self.names[ends[1].node]}: left out with "
                                f"{' and '.join(left_out)}")
            return
        if self.reader.field(raw, "filters", dict, path, {}, subject):
            self.builder.notify(subject, "its packet filters (delay, loss...) are not carried; set them as the "
                                "link's impairment")
        for key in unread(raw, GNS3_OWN | {"link_id", "nodes", "filters"}):
            if raw[key] and not (key == "link_type" and raw[key] == "ethernet"):
                self.builder.notify(subject, loss(key, raw[key], NOT_CARRIED))
        self.builder.add_link(ends[0], ends[1])

    def _end(self, node_id: str, adapter: int, port: int) -> End:
        node_type = self.types[node_id]
        if node_type in SWITCHES:
            return End(node_id, f"p{port + 1}")  # the switch's Ethernet0 is vtopo's p1
        interface = f"eth{adapter}"
        return End(node_id, interface, addresses=list(self.addresses.get(node_id, {}).get(interface, [])))

    # ------------------------------------------------------------ drawings

    def _drawing(self, raw: Any, path: str, imported: Imported) -> None:
        if not self.reader.typed(raw, dict, path, "drawing"):
            return
        svg = self.reader.field(raw, "svg", str, path, "")
        drawing_id = self.reader.field(raw, "drawing_id", str, path, "") or f"drawing-{path}"
        for key in unread(raw, GNS3_OWN | {"drawing_id", "svg", "x", "y"}):
            if raw[key]:
                imported.notices.append(Notice(f"drawing {drawing_id}", loss(key, raw[key], NOT_CARRIED)))
        position = Position(self.reader.number(raw, "x", path, 0, COORDINATE),
                            self.reader.number(raw, "y", path, 0, COORDINATE))
        size = SVG_SIZE.search(svg)
        width, height = (200.0, 100.0)
        if size:
            width = float(size.group("width") or size.group("width2"))
            height = float(size.group("height") or size.group("height2"))
        width, height = (min(max(value, 0.0), ANNOTATION_SIZE[1]) for value in (width, height))
        text = SVG_TEXT.search(svg)
        annotation_id = f"note-{len(imported.topology.annotations) + 1}"
        if text:
            content = readable(html.unescape(re.sub(r"<[^>]*>", "", text.group("text"))).strip())
            imported.topology.annotations[annotation_id] = Annotation(annotation_id, "note", content, position,
                                                                      width, height)
        elif "<rect" in svg or "<ellipse" in svg:
            imported.topology.annotations[annotation_id] = Annotation(annotation_id, "rect", "", position, width,
                                                                      height)
        else:
            imported.notices.append(Notice(f"drawing {drawing_id}", "left out: only text, rectangles and ellipses "
                                           "come over"))

