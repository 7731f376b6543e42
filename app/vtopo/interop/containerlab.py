"""containerlab topologies (`*.clab.yml`) as vtopo labs.

A node's properties are resolved as containerlab resolves them: the node's own, then its group's, then its kind's,
then the defaults'; lists (exec, binds) add up from the defaults to the node, labels merge. Kinds become:

    linux                      a container (a router when its image is FRR's, configured from its bound frr.conf)
    frr                        a router carrying its startup-config verbatim and extras.frr.daemons
    bridge, ovs-bridge         a Linux bridge, an Open vSwitch switch
    host                       the host node
    generic_vm, vr-*           a VM on vtopo's built-in guest
    anything else              left out, with its links, saying so

A container's exec lines that vtopo does itself (an address on one of its links, the link up, its default route)
become its interface addresses and settings; the others become startup commands, run only with the user's consent.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from vtopo.interop import frr, untrusted_yaml
from vtopo.interop.building import (HOST_FRR, HOST_PROGRAMS, RUNS_IMAGE, End, Imported, LabBuilder, image_here,
                                   is_interface_name)
from vtopo.interop.folder import Missing, TopologyFolder, Unreadable, unreadable
from vtopo.interop.losses import loss, unread
from vtopo.kinds.registry import Registry
from vtopo.model.io import Reader
from vtopo.model.problems import LabError, Problem
from vtopo.model.topology import COORDINATE, Position
from vtopo.model.untrusted_json import child_path

FRR_IMAGE = re.compile(r"(?:^|/)frr[^/:@]*(?:[:@]|$)")  # frr, frrouting/frr:10.5.1, quay.io/frrouting/frr@sha256:...
SPECIAL_NODES = ("host", "macvlan", "mgmt-net")  # endpoint names that are no node of the topology
MULTILINE = re.compile(r'.*\["startup-config"\]')  # an inline configuration
VM_KIND = re.compile(r"generic_vm|vr[-_].+")
POSITION_LABELS = ("graph-posX", "graph-posY")  # as containerlab's graph and TopoViewer write them
CARRIED = frozenset({"kind", "group", "image", "labels", "exec"})
"""The fields of a node every kind carries (labels: the position; exec: as the kind can, saying what it cannot)."""
CARRIED_BY = {"router": CARRIED | {"startup-config", "binds", "extras"}, "container": CARRIED | {"sysctls"}}
"""A router also carries its FRR configuration and daemons, from its startup-config, its binds and extras.frr; a
container its sysctls."""
LAB_CARRIED = frozenset({"name", "topology"})
LAB_NOT_CARRIED = {"mgmt": "vtopo makes no management network (`vtopo exec LAB NODE -- CMD` reaches a node)",
                   "prefix": "vtopo names its devices after the lab's own prefix"}
TOPOLOGY_CARRIED = frozenset({"nodes", "links", "kinds", "groups", "defaults"})
LINK_CARRIED = frozenset({"endpoints", "endpoint", "type", "mtu", "ipv4", "ipv6", "host-interface", "mode"})
ENDPOINT_CARRIED = frozenset({"node", "interface", "mac", "ipv4", "ipv6"})
NOT_CARRIED = {
    "network-mode": "the node gets a network namespace of its own, with only its own links",
    "mgmt-ipv4": "vtopo makes no management network (`vtopo exec LAB NODE -- CMD` reaches the node)",
    "mgmt-ipv6": "vtopo makes no management network (`vtopo exec LAB NODE -- CMD` reaches the node)",
    "env": "the node's commands run with vtopo's environment; set a variable in a startup command (`export NAME=...`)",
    "env-files": "the node's commands run with vtopo's environment, and vtopo reads no file the topology names for it",
    "binds": "a vtopo node sees the host's own files, and nothing is mounted into it",
    "ports": "nothing is published on the host's ports; `vtopo exec LAB NODE -- CMD` or a terminal reaches the node",
    "stages": "vtopo brings nodes up in its own order (links, then daemons, then startup commands), waiting for no "
              "other node",
    "startup-delay": "vtopo brings nodes up in its own order, without waiting",
    "wait-for": "vtopo brings nodes up in its own order, waiting for no other node",
    "cmd": "a vtopo node runs no main process of an image; its startup commands run, with consent",
    "entrypoint": "a vtopo node runs no main process of an image; its startup commands run, with consent",
    "startup-config": "only a router takes a configuration file",
    "memory": "vtopo sets no memory limit on a namespace node",
    "cpu": "vtopo sets no CPU limit on a namespace node",
    "cpu-set": "vtopo pins no node to CPUs",
    "sysctls": "the node keeps the kernel's defaults; set one in a startup command (`sysctl -w KEY=VALUE`)",
    "publish": "nothing is published outside the host",
    "user": "startup commands run as the lab's owner in the node",
    "dns": "the node uses the host's resolver",
}


@dataclass
class NodeSource:
    """A node's definition with its group, kind and defaults behind it."""

    name: str
    layers: list[tuple[str, dict[str, Any]]]  # (JSON path, definition), the node first
    kind: str

    def scalar(self, key: str) -> tuple[Any, str]:
        """The first value set from the node outwards, and where it was set."""
        for path, definition in self.layers:
            if definition.get(key) not in (None, ""):
                return definition[key], child_path(path, key)
        return None, ""

    def merged(self, key: str) -> Iterator[tuple[Any, str]]:
        """Every item of a list from the defaults inwards, each once, with where it was written."""
        seen: list[Any] = []
        for path, definition in reversed(self.layers):
            items = definition.get(key)
            for index, item in enumerate(items if isinstance(items, list) else []):
                if item not in seen:
                    seen.append(item)
                    yield item, f"{child_path(path, key)}[{index}]"


@dataclass
class _Node:
    """What the node becomes, gathered while its definition is read."""

    kind: str
    facts: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)
    exec_lines: list[tuple[str, str]] = field(default_factory=list)  # (line, where)
    config: str = ""
    losses: list[str] = field(default_factory=list)  # a line each for what is not carried


def read_containerlab(text: str, folder: TopologyFolder, registry: Registry, default_name: str) -> Imported:
    """The lab a containerlab topology describes. Raises LabError naming the node, link and field of every problem."""
    document = untrusted_yaml.parse(text, lambda path: MULTILINE.fullmatch(path) is not None)
    return _Reading(document, folder, registry, default_name).imported()


class _Reading:
    def __init__(self, document: Any, folder: TopologyFolder, registry: Registry, default_name: str) -> None:
        self.reader = Reader()
        self.folder = folder
        if not isinstance(document, dict) or not isinstance(document.get("topology"), dict):
            raise LabError([Problem("not a containerlab topology: the top level must be an object with a topology "
                                    "(name: ..., topology: {nodes: ..., links: ...})", path="$")])
        name = self.reader.field(document, "name", (str, int), "$", "") or default_name
        self.builder = LabBuilder(str(name), registry)
        self.document = document
        topology = document["topology"]
        self.defaults = self._definition(topology, "defaults", "$.topology", "defaults")
        self.kinds = self._definitions(topology, "kinds")
        self.groups = self._definitions(topology, "groups")
        self.nodes = self._definitions(topology, "nodes")
        self.links = self.reader.field(topology, "links", list, "$.topology", [])
        self.made: dict[str, _Node] = {}

    def imported(self) -> Imported:
        for field_name in unread(self.document, LAB_CARRIED):
            self.builder.notify("", loss(field_name, self.document[field_name], LAB_NOT_CARRIED))
        for field_name in unread(self.document["topology"], TOPOLOGY_CARRIED):
            self.builder.notify("", loss(f"topology.{field_name}", self.document["topology"][field_name], {}))
        sources = [self._source(name, definition) for name, definition in self.nodes.items()]
        for source in sources:
            made = self._node(source)
            if made is not None:
                self.made[source.name] = made
        for index, raw in enumerate(self.links):
            self._link(raw, f"$.topology.links[{index}]")
        if self.reader.problems:
            raise LabError(self.reader.problems)
        for key, made in self.made.items():
            self._finish(key, made)
        if self.reader.problems:
            raise LabError(self.reader.problems)
        return self.builder.build()

    # ------------------------------------------------------------ definitions

    def _definition(self, parent: dict[str, Any], key: str, path: str, subject: str) -> dict[str, Any]:
        value = parent.get(key)
        if value is None:
            return {}
        return value if self.reader.typed(value, dict, child_path(path, key), key, subject) else {}

    def _definitions(self, topology: dict[str, Any], key: str) -> dict[str, dict[str, Any]]:
        entries = self._definition(topology, key, "$.topology", key)
        path = child_path("$.topology", key)
        return {name: self._definition(entries, name, path, f"{key[:-1]} {name}") for name in entries}

    def _source(self, name: str, definition: dict[str, Any]) -> NodeSource:
        subject = f"node {name}"
        path = child_path("$.topology.nodes", name)
        group_name = self.reader.field(definition, "group", str, path, "", subject)
        group = self.groups.get(group_name, {})
        if group_name and group_name not in self.groups:
            self.reader.fail(f"{path}.group", f"group {group_name!r} is not defined under topology.groups", subject)
        kind = (self.reader.field(definition, "kind", str, path, "", subject)
                or self.reader.field(group, "kind", str, child_path("$.topology.groups", group_name), "", subject)
                or self.reader.field(self.defaults, "kind", str, "$.topology.defaults", "", subject))
        layers = [(path, definition), (child_path("$.topology.groups", group_name), group),
                  (child_path("$.topology.kinds", kind), self.kinds.get(kind, {})),
                  ("$.topology.defaults", self.defaults)]
        return NodeSource(name, layers, kind)

    def _text(self, source: NodeSource, key: str) -> str:
        value, path = source.scalar(key)
        if value is None:
            return ""
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            self.reader.fail(path, f"{key} must be a string", f"node {source.name}")
            return ""
        return str(value)

    def _texts(self, source: NodeSource, key: str) -> list[tuple[str, str]]:
        for path, definition in source.layers:
            if definition.get(key) is not None and not isinstance(definition[key], list):
                self.reader.fail(child_path(path, key), f"{key} must be a list", f"node {source.name}")
        items = []
        for item, path in source.merged(key):
            if self.reader.typed(item, str, path, f"each of {key}", f"node {source.name}"):
                items.append((item, path))
        return items

    # ------------------------------------------------------------ nodes

    def _node(self, source: NodeSource) -> _Node | None:
        subject, kind, image = f"node {source.name}", source.kind, self._text(source, "image")
        what = f"{kind or 'no kind'}{f', {image}' if image else ''}"
        if not kind:
            self.reader.fail(child_path(source.layers[0][0], "kind"), "the node has no kind (nor its group, nor the "
                             "defaults)", subject)
            return None
        here = image_here(image)
        if kind == "frr" or (kind == "linux" and FRR_IMAGE.search(image)):
            made = _Node("router", [f"a router ({what}){RUNS_IMAGE if here else HOST_FRR if image else ''}"])
            self._router(source, made)
        elif kind == "linux":
            made = _Node("container", [f"a container ({what}){RUNS_IMAGE if here else HOST_PROGRAMS}"])
            self._sysctls(source, made)
        elif kind == "bridge":
            made = _Node("bridge", ["a Linux bridge, which vtopo creates (containerlab expects it made beforehand)"])
        elif kind == "ovs-bridge":
            made = _Node("ovs", ["an Open vSwitch switch, which vtopo creates (containerlab expects it made "
                                 "beforehand)"])
        elif kind == "host":
            made = _Node("host", ["the host node"])
        elif VM_KIND.fullmatch(kind):
            made = _Node("vm", [f"a VM on vtopo's built-in guest, not {image or 'its image'}: vtopo boots its small "
                                "Linux guest (iperf3, ping) in its place"])
        else:
            self.builder.notify(subject, f"left out: kind {what} is a system vtopo cannot run (it runs Linux "
                                "namespaces, FRR, bridges, Open vSwitch and VMs on its own guest); its links are left "
                                "out too")
            return None
        if here and made.kind in ("router", "container"):
            made.settings["image"] = image
        if made.kind in ("container", "router", "host"):
            made.exec_lines = self._texts(source, "exec")
        elif self._texts(source, "exec"):
            made.losses.append("exec is not carried: the node has no shell vtopo runs its lines in")
        self.builder.add_node(source.name, made.kind, position=self._position(source))
        self._losses(source, made)
        return made

    def _losses(self, source: NodeSource, made: _Node) -> None:
        """A line for each field of the node's definition (or its group's, kind's, defaults') that is not carried;
        network-mode none is what a vtopo node is anyway (no management interface)."""
        carried = CARRIED_BY.get(made.kind, CARRIED)
        for field_name in dict.fromkeys(key for _, definition in source.layers for key in definition):
            value, where = source.scalar(field_name)
            if field_name in carried or value is None or (field_name == "network-mode" and value == "none"):
                continue
            own = where == child_path(source.layers[0][0], field_name)
            made.losses.append(loss(field_name, value, NOT_CARRIED, "" if own else where))
        labels = {key: value for _, definition in reversed(source.layers)
                  if isinstance(definition.get("labels"), dict) for key, value in definition["labels"].items()}
        for key, value in labels.items():
            if key not in POSITION_LABELS:
                made.losses.append(loss(f"label {key}", value, {}))
        extras, _ = source.scalar("extras")
        if isinstance(extras, dict) and made.kind == "router":  # extras.frr.daemons is carried
            for key, value in extras.items():
                if key == "frr" and isinstance(value, dict):
                    made.losses += [loss(f"extras.frr.{inner}", item, {}) for inner, item in value.items()
                                    if inner != "daemons"]
                else:
                    made.losses.append(loss(f"extras.{key}", value, {}))

    def _sysctls(self, source: NodeSource, made: _Node) -> None:
        """A container's sysctls, which its kind sets in its namespace (the kind says which it refuses)."""
        sysctls, where = source.scalar("sysctls")
        if sysctls is None:
            return
        if isinstance(sysctls, dict) and all(isinstance(v, (str, int, float)) for v in sysctls.values()):
            made.settings["sysctls"] = {str(key): str(value) for key, value in sysctls.items()}
        else:
            self.reader.fail(where, "sysctls must be an object of names and values", f"node {source.name}")

    def _router(self, source: NodeSource, made: _Node) -> None:
        subject = f"node {source.name}"
        config, config_where = source.scalar("startup-config")
        if config not in (None, ""):
            if not isinstance(config, str):
                self.reader.fail(config_where, "startup-config must be a file name or the configuration itself",
                                 subject)
            elif "\n" in config:
                made.config = config
            else:
                made.config = self._file(config, config_where, subject, "startup-config")
        for bind, path in self._texts(source, "binds"):
            host_path, _, inside = bind.partition(":")
            inside = inside.split(":")[0].rstrip("/")
            if inside == frr.CONFIG_DIR:  # the whole directory: its frr.conf, and its daemons file if it has one
                config_file, daemons_file = f"{host_path}/frr.conf", f"{host_path}/daemons"
            elif inside in (frr.CONFIG_FILE, frr.DAEMONS_FILE):
                config_file = host_path if inside == frr.CONFIG_FILE else ""
                daemons_file = host_path if inside == frr.DAEMONS_FILE else ""
            else:
                made.losses.append(loss("binds", bind, NOT_CARRIED))
                continue
            if config_file and made.config:
                made.losses.append(loss("binds", bind, {"binds": "the router's configuration is its startup-config"}))
            elif config_file:
                made.config, config_where = self._file(config_file, path, subject, "bind"), path
            if daemons_file:
                self._daemons(daemons_file, path, subject, made, optional=inside == frr.CONFIG_DIR)
        extras, where = source.scalar("extras")
        listed: Any = extras.get("frr", {}).get("daemons") if isinstance(extras, dict) and \
            isinstance(extras.get("frr"), dict) else None
        if listed is not None:
            if isinstance(listed, list) and all(isinstance(d, str) and frr.DAEMON.fullmatch(d) for d in listed):
                made.settings["daemons"] = list(listed)  # as the file says: validation names any vtopo cannot run
            else:
                self.reader.fail(f"{where}.frr.daemons", "extras.frr.daemons must be a list of FRR daemon names "
                                 "(ospfd, bgpd, ...)", subject)
        if not made.settings.get("daemons", True):
            del made.settings["daemons"]
        if made.config:
            try:
                made.settings["config"] = made.config = frr.normalised(made.config)
            except ValueError as error:
                self.reader.fail(config_where, f"the FRR configuration cannot be kept: {error}", subject)
            made.facts.append("its FRR configuration is kept verbatim")
        else:
            made.facts.append("no FRR configuration found: vtopo's OSPF on every link")

    def _daemons(self, name: str, where: str, subject: str, made: _Node, optional: bool) -> None:
        """The daemons, and the OSPF instance, a router's daemons file turns on; a bound /etc/frr may have none."""
        try:
            read = frr.read_daemons(self.folder.read(name))
        except Unreadable as error:
            if not (optional and isinstance(error, Missing)):
                self.reader.problems.append(unreadable(subject, where, "bind", name, error))
            return
        made.settings["daemons"], _ = read.chosen()
        if read.ospf_instance():
            made.settings["ospf_instance"] = read.ospf_instance()
        made.losses += read.losses(name)

    def _file(self, name: str, where: str, subject: str, field_name: str) -> str:
        try:
            return self.folder.read(name)
        except Unreadable as error:
            self.reader.problems.append(unreadable(subject, where, field_name, name, error))
            return ""

    def _position(self, source: NodeSource) -> Position | None:
        labels: dict[str, Any] = {}
        for path, definition in reversed(source.layers):
            value = definition.get("labels")
            if isinstance(value, dict):
                labels.update(value)
            elif value is not None:
                self.reader.fail(child_path(path, "labels"), "labels must be an object", f"node {source.name}")
        try:
            x, y = (float(labels[key]) for key in POSITION_LABELS)
        except (KeyError, TypeError, ValueError):
            return None
        low, high = COORDINATE
        return Position(x, y) if low <= x <= high and low <= y <= high else None

    # ------------------------------------------------------------ links

    def _link(self, raw: Any, path: str) -> None:
        subject = f"link {path.rsplit('[', 1)[-1].rstrip(']')}"
        if not self.reader.typed(raw, dict, path, "link", subject):
            return
        link_type = self.reader.field(raw, "type", str, path, "", subject)
        mtu = self.reader.number(raw, "mtu", path, 0, (0, 65535), subject, whole=True) if "mtu" in raw else 0
        for field_name in unread(raw, LINK_CARRIED):
            self.builder.notify(subject, loss(field_name, raw[field_name], {}))
        if link_type in ("", "veth", "brief"):
            ends = self._ends(raw, path, subject)
            if ends is not None:
                self._connect(ends, int(mtu), subject, path)
        elif link_type in ("host", "macvlan"):
            self._host_link(raw, path, subject, link_type, int(mtu))
        else:
            self.builder.notify(subject, f"left out: a {link_type} link has no vtopo counterpart")

    def _ends(self, raw: dict[str, Any], path: str, subject: str) -> list[End] | None:
        endpoints = self.reader.field(raw, "endpoints", list, path, None, subject)
        if endpoints is None or len(endpoints) != 2:
            self.reader.fail(f"{path}.endpoints", "a link needs two endpoints, e.g. [\"r1:eth1\", \"r2:eth1\"]",
                             subject)
            return None
        ends = []
        for index, endpoint in enumerate(endpoints):
            where = f"{path}.endpoints[{index}]"
            end = self._end(endpoint, where, subject)
            if end is None:
                return None
            for family in ("ipv4", "ipv6"):  # the brief format: one list per family, in the order of the endpoints
                addresses = raw.get(family)
                if isinstance(addresses, list) and index < len(addresses) and addresses[index]:
                    end.addresses.append(str(addresses[index]))
            ends.append(end)
        return ends

    def _end(self, endpoint: Any, where: str, subject: str) -> End | None:
        if isinstance(endpoint, str):
            node, separator, interface = endpoint.partition(":")
            if not separator or not node or not interface:
                self.reader.fail(where, f"endpoint {endpoint!r} must be written node:interface", subject)
                return None
            return End(node, interface)
        if not self.reader.typed(endpoint, dict, where, "endpoint", subject):
            return None
        node = self.reader.field(endpoint, "node", str, where, "", subject)
        interface = self.reader.field(endpoint, "interface", str, where, "", subject)
        if not node or not interface:
            self.reader.fail(where, "an endpoint needs a node and an interface", subject)
            return None
        end = End(node, interface, self.reader.field(endpoint, "mac", str, where, "", subject))
        for field_name in unread(endpoint, ENDPOINT_CARRIED):
            self.builder.notify(subject, loss(f"{node}:{interface} {field_name}", endpoint[field_name], {}))
        for family in ("ipv4", "ipv6"):
            address = self.reader.field(endpoint, family, str, where, "", subject)
            if address:
                end.addresses.append(address)
        return end

    def _host_link(self, raw: dict[str, Any], path: str, subject: str, link_type: str, mtu: int) -> None:
        end = self._end(raw.get("endpoint"), f"{path}.endpoint", subject)
        host_interface = self.reader.field(raw, "host-interface", str, path, "", subject)
        if end is None or not host_interface:
            if end is not None:
                self.reader.fail(f"{path}.host-interface", f"a {link_type} link needs a host-interface", subject)
            return
        if link_type == "host":
            self._connect([end, End("host", host_interface)], mtu, subject, path)
            return
        mode = self.reader.field(raw, "mode", str, path, "bridge", subject)
        self._connect([end, End(f"macvlan:{host_interface}:{mode}", host_interface)], mtu, subject, path)

    def _connect(self, ends: list[End], mtu: int, subject: str, path: str) -> None:
        for end in ends:
            if end.node in self.made:
                continue
            if end.node == "host" and "host" not in self.nodes:
                declared = next((key for key, made in self.made.items() if made.kind == "host"), None)
                if declared is not None:
                    end.node = declared
                    continue
                self.builder.add_node("host", "host")
                self.made["host"] = _Node("host", ["the host itself (links to `host:IF` in the source)"])
            elif end.node.startswith("macvlan:") or end.node == "macvlan":
                self._macvlan(end)
            elif end.node == "mgmt-net":
                self.builder.notify(subject, "left out: vtopo makes no management network")
                return
            elif end.node in self.nodes:
                self.builder.notify(subject, f"left out with node {end.node}")
                return
            else:
                self.reader.fail(f"{path}.endpoints", f"endpoint {end.node}:{end.interface} names node {end.node!r}, which the "
                                 "topology does not define", subject)
                return
        for end in ends:
            if not is_interface_name(end.interface):
                self.builder.notify(subject, f"interface {end.interface!r} of {end.node} is named by vtopo instead "
                                    "(an interface name holds letters, digits, '.', '-' and '_')")
                end.interface = ""
        self.builder.add_link(ends[0], ends[1], mtu)

    def _macvlan(self, end: End) -> None:
        """A macvlan link's host side: a macvlan segment on that host interface, which needs the user's consent."""
        if end.node == "macvlan":  # the brief form "macvlan:eth0"
            end.node = f"macvlan:{end.interface}:bridge"
        if end.node in self.made:
            return
        _, lower, mode = end.node.split(":", 2)
        self.builder.add_node(end.node, "macvlan", {"lower": lower, "mode": mode}, name=f"mvl-{lower}")
        self.made[end.node] = _Node("macvlan", [f"a macvlan segment on the host's {lower} ({mode} mode), for the "
                                                f"macvlan links of the source: deploy asks for --allow-host-device "
                                                f"{lower}"])

    # ------------------------------------------------------------ after the links

    def _finish(self, key: str, made: _Node) -> None:
        node = self.builder.node(key)
        assert node is not None
        ends = {end.interface: end for end in self.builder.ends_of(key) if end.interface}
        if made.config:
            for interface, addresses in frr.interface_addresses(made.config).items():
                if interface in ends:
                    ends[interface].addresses += [a for a in addresses if a not in ends[interface].addresses]
        absorbed = 0
        for line, where in made.exec_lines:
            effect = self._exec(line, ends, made)
            if effect is None:
                made.commands.append(line)
            else:
                absorbed += 1
        if absorbed:
            made.facts.append(f"{absorbed} of its exec lines became its addresses and settings (vtopo brings links "
                              "up itself)")
        if made.commands:
            made.facts.append(f"{len(made.commands)} exec line(s) became startup commands, run only with consent "
                              f"(vtopo deploy --allow-commands {node.name})")
        node.settings.update(made.settings)
        node.startup_commands = made.commands
        self.builder.notify(f"node {node.name}", "; ".join(made.facts))
        for line in made.losses:
            self.builder.notify(f"node {node.name}", line)

    @staticmethod
    def _exec(line: str, ends: dict[str, End], made: _Node) -> str | None:
        """What an exec line becomes when vtopo does it itself ("address", "up", "gateway"), or None."""
        address = ADDRESS_LINE.fullmatch(line.strip())
        if address and address.group("dev") in ends:
            ends[address.group("dev")].addresses.append(address.group("address"))
            return "address"
        up = LINK_UP_LINE.fullmatch(line.strip())
        if up and up.group("dev") in ends:
            return "up"
        gateway = DEFAULT_ROUTE_LINE.fullmatch(line.strip())
        if gateway and made.kind == "container" and "default_route" not in made.settings:
            made.settings["default_route"] = gateway.group("gateway")
            return "gateway"
        if DELETE_DEFAULT_LINE.fullmatch(line.strip()) and made.kind == "container":
            return "management route"  # containerlab's default route via eth0, which a vtopo node never has
        return None


ADDRESS_LINE = re.compile(r"ip (?:-[46] )?a(?:ddr(?:ess)?)? add (?P<address>[0-9A-Fa-f.:]+/\d{1,3}) "
                          r"dev (?P<dev>\S+)")
LINK_UP_LINE = re.compile(r"ip link set (?:dev )?(?P<dev>\S+) up")
DEFAULT_ROUTE_LINE = re.compile(r"ip (?:-4 )?r(?:oute)? (?:add|replace) default via (?P<gateway>[0-9.]+)(?: dev \S+)?")
DELETE_DEFAULT_LINE = re.compile(r"ip (?:-4 )?r(?:oute)? del(?:ete)? default(?: via \S+)?(?: dev \S+)?")
