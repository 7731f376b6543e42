"""Reading and writing .vtopo files: versioned, stable JSON, atomic saves, clear errors."""
from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtopo.model.addressing import DEFAULT_PREFIX, AddressPool
from vtopo.model.expectations import Check, Experiment
from vtopo.model.lab_text import read_text
from vtopo.model.migrations import CURRENT_VERSION, migrate
from vtopo.model.problems import LabError, Problem
from vtopo.model.rules import CHECKPOINT_NAME, CHECKPOINT_NAME_RULE, lab_name_refusal
from vtopo.model.sites import Site
from vtopo.model.topology import (ANNOTATION_SIZE, COORDINATE, IMPAIRMENT_LIMITS, MTU, VLAN_ID, Annotation, Endpoint,
                                  Impairment, Interface, Link, Node, Position, Range, Subinterface, Topology)
from vtopo.model.untrusted_json import parse

if TYPE_CHECKING:
    from vtopo.model.checkpoints import Checkpoint
    from vtopo.model.stages import Stage

FORMAT = "vtopo"
MAX_STARTUP_COMMANDS = 32
MAX_COMMAND_LENGTH = 1000
MAX_STAGES = 100
MAX_CHECKPOINTS = 100


# ---------------------------------------------------------------- writing

def _interface_to_json(interface: Interface) -> dict[str, Any]:
    data = {key: value for key, value in asdict(interface).items() if value}
    if interface.subinterfaces:
        data["subinterfaces"] = [{key: value for key, value in asdict(sub).items() if value}
                                 for sub in interface.subinterfaces]
    return data


def _endpoint_to_json(end: Endpoint) -> dict[str, Any]:
    data: dict[str, Any] = {"node": end.node, "port": end.port}
    interface = _interface_to_json(end.interface)
    if interface:
        data["interface"] = interface
    return data


def _node_to_json(node: Node) -> dict[str, Any]:
    data = {"id": node.id, "name": node.name, "kind": node.kind, "position": asdict(node.position),
            "settings": node.settings}
    if node.startup_commands:
        data["startup_commands"] = list(node.startup_commands)
    if node.site:
        data["site"] = node.site
    return data


def _site_to_json(site: Site) -> dict[str, Any]:
    defaults = Site(site.name)
    return {"name": site.name, **{key: value for key, value in asdict(site).items()
                                  if key != "name" and value != getattr(defaults, key)}}


def to_document(topology: Topology) -> dict[str, Any]:
    lab: dict[str, Any] = {"id": topology.id, "name": topology.name}
    if topology.prefix:
        lab["prefix"] = topology.prefix
    if topology.notes:
        lab["notes"] = topology.notes
    if topology.vm_backend:
        lab["vm_backend"] = topology.vm_backend
    if topology.sites:
        lab["sites"] = [_site_to_json(site) for site in topology.sites.values()]
    if not topology.addressing.empty:
        pool = topology.addressing
        lab["addressing"] = {**({"ipv4": pool.ipv4, "ipv4_prefix": pool.ipv4_prefix} if pool.ipv4 else {}),
                             **({"ipv6": pool.ipv6, "ipv6_prefix": pool.ipv6_prefix} if pool.ipv6 else {})}
    links = []
    for link in topology.links.values():
        data: dict[str, Any] = {"id": link.id, "a": _endpoint_to_json(link.a), "b": _endpoint_to_json(link.b)}
        if link.impairment.active:
            data["impairment"] = {k: v for k, v in asdict(link.impairment).items() if v}
        links.append(data)
    document: dict[str, Any] = {
        "format": FORMAT,
        "version": CURRENT_VERSION,
        "lab": lab,
        "nodes": [_node_to_json(n) for n in topology.nodes.values()],
        "links": links,
        "annotations": [asdict(a) for a in topology.annotations.values()],
    }
    if topology.checks:
        document["checks"] = [_check_to_json(check) for check in topology.checks]
    if topology.stages:
        document["stages"] = [_stage_to_json(stage) for stage in topology.stages]
    if topology.checkpoints:
        document["checkpoints"] = [_checkpoint_to_json(checkpoint) for checkpoint in topology.checkpoints]
    if not topology.experiment.empty:
        document["experiment"] = asdict(topology.experiment)
    return document


def _checkpoint_to_json(checkpoint: Checkpoint) -> dict[str, Any]:
    data = asdict(checkpoint)
    return {key: value for key, value in data.items() if value or key in ("name", "nodes")}


CHECK_KEYS = ("name", "type", "explain", "hidden")


def _check_to_json(check: Check) -> dict[str, Any]:
    data: dict[str, Any] = {"name": check.name, "type": check.type, **check.params}
    if check.explain:
        data["explain"] = check.explain
    if check.hidden:
        data["hidden"] = True
    return data


def _stage_to_json(stage: Stage) -> dict[str, Any]:
    return {key: value for key, value in asdict(stage).items() if value or key == "title"}


def dumps(topology: Topology) -> str:
    return json.dumps(to_document(topology), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def save(topology: Topology, path: Path) -> None:
    write_atomically(Path(path), dumps(topology))


def write_atomically(path: Path, content: str | bytes, new_mode: int | None = None) -> None:
    """Write `content` to `path` so that a full disk or a crash leaves the previous file intact. The file keeps the
    mode it had, or gets `new_mode`, or else the one a plain open() would give it (a lab is a file to share, not a
    secret)."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(content.encode("utf-8") if isinstance(content, str) else content)
            tmp.flush()
            os.fchmod(tmp.fileno(), _mode_of(path, new_mode))
            os.fsync(tmp.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _mode_of(path: Path, new_mode: int | None) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        if new_mode is not None:
            return new_mode
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


# ---------------------------------------------------------------- reading

class Reader:
    """Walks a JSON document, collecting every type problem with its JSON path."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def fail(self, path: str, message: str, subject: str = "", subject_id: str = "") -> None:
        self.problems.append(Problem(message, subject=subject, path=path, subject_id=subject_id))

    def typed(self, value: Any, expected: type | tuple[type, ...], path: str, what: str, subject: str = "") -> bool:
        ok = isinstance(value, expected) and not (expected in (int, float, (int, float)) and isinstance(value, bool))
        if not ok:
            self.fail(path, f"{what} must be {_type_name(expected)}, not {_json_type(value)}", subject)
        return ok

    def field(self, obj: dict[str, Any], key: str, expected: type | tuple[type, ...], path: str, default: Any,
              subject: str = "") -> Any:
        if key not in obj:
            return default
        value = obj[key]
        return value if self.typed(value, expected, f"{path}.{key}", key, subject) else default

    def number(self, obj: dict[str, Any], key: str, path: str, default: float, limits: Range,
               subject: str = "", whole: bool = False) -> float:
        """A number within `limits` (a whole one if `whole`), or `default` and a problem."""
        value = self.field(obj, key, int if whole else (int, float), path, default, subject)
        low, high = limits
        if not low <= value <= high:
            self.fail(f"{path}.{key}", f"{key} must be between {_number(low)} and {_number(high)}, not "
                      f"{_number(value)}", subject)
            return default
        return value if whole else float(value)


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:g}"


def _type_name(expected: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", float: "a number", dict: "an object", list: "a list", bool: "true or false"}
    if isinstance(expected, tuple):
        return "a number" if set(expected) == {int, float} else " or ".join(names[t] for t in expected)
    return names[expected]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "true/false", int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__)


def _read_interface(reader: Reader, raw: Any, path: str, subject: str) -> Interface:
    if raw is None:
        return Interface()
    if not reader.typed(raw, dict, path, "interface", subject):
        return Interface()
    subinterfaces = reader.field(raw, "subinterfaces", list, path, [], subject)
    return Interface(
        name=reader.field(raw, "name", str, path, "", subject),
        mac=reader.field(raw, "mac", str, path, "", subject),
        mtu=int(reader.number(raw, "mtu", path, 0, MTU, subject, whole=True)),
        addresses=_read_addresses(reader, raw, path, subject),
        subinterfaces=[sub for i, entry in enumerate(subinterfaces)
                       if (sub := _read_subinterface(reader, entry, f"{path}.subinterfaces[{i}]", subject))],
        dhcp=reader.field(raw, "dhcp", bool, path, False, subject),
    )


def _read_addresses(reader: Reader, raw: dict[str, Any], path: str, subject: str) -> list[str]:
    addresses = reader.field(raw, "addresses", list, path, [], subject)
    for i, address in enumerate(addresses):
        reader.typed(address, str, f"{path}.addresses[{i}]", "address", subject)
    return [a for a in addresses if isinstance(a, str)]


def _read_subinterface(reader: Reader, raw: Any, path: str, subject: str) -> Subinterface | None:
    if not reader.typed(raw, dict, path, "subinterface", subject):
        return None
    if "vlan" not in raw:
        reader.fail(path, "a subinterface needs its VLAN, e.g. {\"vlan\": 10}", subject)
        return None
    vlan = int(reader.number(raw, "vlan", path, 0, VLAN_ID, subject, whole=True))
    return Subinterface(vlan, _read_addresses(reader, raw, path, subject)) if vlan else None


def _read_nodes(reader: Reader, raw_nodes: list[Any]) -> list[Node]:
    nodes: list[Node] = []
    seen_ids: dict[str, str] = {}
    seen_names: dict[str, str] = {}
    for i, raw in enumerate(raw_nodes):
        path = f"$.nodes[{i}]"
        if not reader.typed(raw, dict, path, "node"):
            continue
        node_id = reader.field(raw, "id", str, path, "")
        name = reader.field(raw, "name", str, path, "")
        subject = f"node {name or node_id or i}"
        if not node_id:
            reader.fail(f"{path}.id", "every node needs a non-empty id", subject)
            continue
        if not name:
            reader.fail(f"{path}.name", "every node needs a name", subject)
            continue
        if node_id in seen_ids:
            reader.fail(f"{path}.id", f"id {node_id!r} is also used by {seen_ids[node_id]}", subject)
            continue
        if name in seen_names:
            reader.fail(f"{path}.name", f"the name {name!r} is used twice (also at {seen_names[name]}); names must be unique",
                        subject)
        seen_ids[node_id] = path
        seen_names[name] = path
        kind = reader.field(raw, "kind", str, path, "", subject)
        if not kind:
            reader.fail(f"{path}.kind", "every node needs a kind", subject)
            continue
        position = reader.field(raw, "position", dict, path, {}, subject)
        settings = reader.field(raw, "settings", dict, path, {}, subject)
        nodes.append(Node(id=node_id, name=name, kind=kind, settings=settings,
                          position=_read_position(reader, position, f"{path}.position", subject),
                          startup_commands=_read_commands(reader, raw, f"{path}.startup_commands", subject),
                          site=reader.field(raw, "site", str, path, "", subject)))
    return nodes


def _read_commands(reader: Reader, raw: dict[str, Any], path: str, subject: str) -> list[str]:
    commands = reader.field(raw, "startup_commands", list, path.rsplit(".", 1)[0], [], subject)
    if len(commands) > MAX_STARTUP_COMMANDS:
        reader.fail(path, f"at most {MAX_STARTUP_COMMANDS} startup commands per node, not {len(commands)}", subject)
        return []
    kept = []
    for index, command in enumerate(commands):
        where = f"{path}[{index}]"
        if not reader.typed(command, str, where, "startup command", subject):
            continue
        if not command.strip():
            reader.fail(where, "a startup command is empty", subject)
        elif len(command) > MAX_COMMAND_LENGTH:
            reader.fail(where, f"a startup command is at most {MAX_COMMAND_LENGTH} characters, not {len(command)}",
                        subject)
        else:
            kept.append(command)
    return kept


def _read_links(reader: Reader, raw_links: list[Any], nodes: dict[str, Node]) -> list[Link]:
    links: list[Link] = []
    seen_ids: set[str] = set()
    port_owner: dict[tuple[str, str], str] = {}
    for i, raw in enumerate(raw_links):
        path = f"$.links[{i}]"
        if not reader.typed(raw, dict, path, "link"):
            continue
        link_id = reader.field(raw, "id", str, path, "")
        if not link_id or link_id in seen_ids:
            reader.fail(f"{path}.id", "every link needs a unique, non-empty id", f"link {link_id or i}")
            continue
        seen_ids.add(link_id)
        ends: list[Endpoint] = []
        for side in ("a", "b"):
            end_path = f"{path}.{side}"
            raw_end = raw.get(side)
            if not reader.typed(raw_end, dict, end_path, f"link end {side}", f"link {link_id}"):
                continue
            node_ref = reader.field(raw_end, "node", str, end_path, "", f"link {link_id}")
            port = reader.field(raw_end, "port", str, end_path, "", f"link {link_id}")
            if node_ref not in nodes:
                reader.fail(f"{end_path}.node", f"end {side} points at node {node_ref!r}, which does not exist",
                            f"link {link_id}", link_id)
                continue
            if not port:
                reader.fail(f"{end_path}.port", f"end {side} needs a port", f"link {link_id}", link_id)
                continue
            key = (node_ref, port)
            subject = f"link {nodes[node_ref].name}:{port}"
            if key in port_owner:
                reader.fail(f"{end_path}.port", f"port {port} of node {nodes[node_ref].name} is already used by link "
                            f"{port_owner[key]}; a port takes one link", subject, link_id)
                continue
            port_owner[key] = link_id
            interface = _read_interface(reader, raw_end.get("interface"), f"{end_path}.interface", subject)
            ends.append(Endpoint(node=node_ref, port=port, interface=interface))
        if len(ends) != 2:
            continue
        raw_impairment = reader.field(raw, "impairment", dict, path, {}, f"link {link_id}")
        impairment = Impairment(**{
            key: reader.number(raw_impairment, key, f"{path}.impairment", 0, limits, f"link {link_id}")
            for key, limits in IMPAIRMENT_LIMITS.items()
        })
        links.append(Link(id=link_id, a=ends[0], b=ends[1], impairment=impairment))
    return links


def _read_position(reader: Reader, raw: dict[str, Any], path: str, subject: str = "") -> Position:
    return Position(reader.number(raw, "x", path, 0, COORDINATE, subject),
                    reader.number(raw, "y", path, 0, COORDINATE, subject))


def _read_annotations(reader: Reader, raw_annotations: list[Any]) -> list[Annotation]:
    annotations = []
    for i, raw in enumerate(raw_annotations):
        path = f"$.annotations[{i}]"
        if not reader.typed(raw, dict, path, "annotation"):
            continue
        position = reader.field(raw, "position", dict, path, {})
        annotations.append(Annotation(
            id=reader.field(raw, "id", str, path, f"note-{i}"),
            shape=reader.field(raw, "shape", str, path, "note"),
            text=reader.field(raw, "text", str, path, ""),
            position=_read_position(reader, position, f"{path}.position"),
            width=reader.number(raw, "width", path, 200.0, ANNOTATION_SIZE),
            height=reader.number(raw, "height", path, 100.0, ANNOTATION_SIZE),
        ))
    return annotations


def _read_checks(reader: Reader, raw_checks: list[Any]) -> list[Check]:
    checks = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_checks):
        path = f"$.checks[{i}]"
        if not reader.typed(raw, dict, path, "check"):
            continue
        name = reader.field(raw, "name", str, path, "")
        subject = f"check {name or i + 1}"
        check_type = reader.field(raw, "type", str, path, "", subject)
        if not name or name in seen:
            reader.fail(f"{path}.name", "every check needs a unique, non-empty name", subject)
            continue
        seen.add(name)
        if not check_type:
            reader.fail(f"{path}.type", "every check needs a type (reach, path, route, ...)", subject)
            continue
        params = {key: value for key, value in raw.items() if key not in CHECK_KEYS}
        checks.append(Check(name, check_type, params, reader.field(raw, "explain", str, path, "", subject),
                            reader.field(raw, "hidden", bool, path, False, subject)))
    return checks


def _read_stages(reader: Reader, raw_stages: list[Any], check_names: set[str]) -> list[Stage]:
    """The lab's stages, whose class loads with the first lab that has one."""
    if not raw_stages:
        return []
    if len(raw_stages) > MAX_STAGES:
        reader.fail("$.stages", f"at most {MAX_STAGES} stages per lab, not {len(raw_stages)}")
        return []
    from vtopo.model.stages import Stage

    stages = []
    for i, raw in enumerate(raw_stages):
        path = f"$.stages[{i}]"
        if not reader.typed(raw, dict, path, "stage", f"stage {i + 1}"):
            continue
        title = reader.field(raw, "title", str, path, "", f"stage {i + 1}")
        subject = f"stage {i + 1}" + (f" ({title})" if title else "")
        if not title.strip():
            reader.fail(f"{path}.title", "every stage needs a title", subject)
            continue
        names = reader.field(raw, "checks", list, path, [], subject)
        for index, name in enumerate(names):
            where = f"{path}.checks[{index}]"
            if reader.typed(name, str, where, "a stage's check", subject) and name not in check_names:
                reader.fail(where, f"{name!r} is not the name of one of the lab's checks", subject)
        checkpoint = reader.field(raw, "checkpoint", str, path, "", subject)
        if checkpoint and not CHECKPOINT_NAME.fullmatch(checkpoint):
            reader.fail(f"{path}.checkpoint", f"{checkpoint!r}: {CHECKPOINT_NAME_RULE}", subject)
        stages.append(Stage(title, reader.field(raw, "instructions", str, path, "", subject),
                            [name for name in names if isinstance(name, str)], checkpoint,
                            reader.field(raw, "solution", str, path, "", subject)))
    return stages


def _read_checkpoints(reader: Reader, raw_checkpoints: list[Any]) -> list[Checkpoint]:
    """The lab's checkpoints, whose classes load with the first lab that has one."""
    if not raw_checkpoints:
        return []
    if len(raw_checkpoints) > MAX_CHECKPOINTS:
        reader.fail("$.checkpoints", f"at most {MAX_CHECKPOINTS} checkpoints per lab, not {len(raw_checkpoints)}")
        return []
    from vtopo.model.checkpoints import Checkpoint, NodeState

    checkpoints: list[Checkpoint] = []
    for i, raw in enumerate(raw_checkpoints):
        path = f"$.checkpoints[{i}]"
        if not reader.typed(raw, dict, path, "checkpoint", f"checkpoint {i + 1}"):
            continue
        name = reader.field(raw, "name", str, path, "", f"checkpoint {i + 1}")
        subject = f"checkpoint {name or i + 1}"
        if not CHECKPOINT_NAME.fullmatch(name) or any(kept.name == name for kept in checkpoints):
            reader.fail(f"{path}.name", f"{name!r}: every checkpoint needs a unique name; {CHECKPOINT_NAME_RULE}",
                        subject)
            continue
        nodes = {}
        for node, state in reader.field(raw, "nodes", dict, path, {}, subject).items():
            where = f"{path}.nodes.{node}"
            if reader.typed(state, dict, where, "a node's state", subject):
                addresses = reader.field(state, "addresses", dict, where, {}, subject)
                nodes[node] = NodeState(reader.field(state, "settings", dict, where, {}, subject),
                                        {port: _strings(reader, value, f"{where}.addresses.{port}", subject)
                                         for port, value in addresses.items()})
        impairments = {}
        for link, impairment in reader.field(raw, "impairments", dict, path, {}, subject).items():
            where = f"{path}.impairments.{link}"
            if reader.typed(impairment, dict, where, "a link's impairment", subject):
                impairments[link] = {key: reader.number(impairment, key, where, 0, limits, subject)
                                     for key, limits in IMPAIRMENT_LIMITS.items() if key in impairment}
        checkpoints.append(Checkpoint(
            name, reader.field(raw, "made", str, path, "", subject), nodes,
            _strings(reader, reader.field(raw, "stopped", list, path, [], subject), f"{path}.stopped", subject),
            _strings(reader, reader.field(raw, "down", list, path, [], subject), f"{path}.down", subject),
            impairments))
    return checkpoints


def _strings(reader: Reader, values: Any, path: str, subject: str) -> list[str]:
    what = path.rsplit(".", 1)[-1]
    if not reader.typed(values, list, path, what, subject):
        return []
    return [value for index, value in enumerate(values) if reader.typed(value, str, f"{path}[{index}]",
                                                                          f"each of {what}", subject)]


def _read_named(reader: Reader, raw_items: list[Any], path: str, what: str, fields: tuple[str, ...]
                ) -> list[dict[str, Any]]:
    """Objects with a unique name and the given string fields, each reported by its name when wrong."""
    items = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_items):
        where = f"{path}[{i}]"
        if not reader.typed(raw, dict, where, what):
            continue
        name = reader.field(raw, "name", str, where, "")
        subject = f"{what} {name or i + 1}"
        if not name or name in seen:
            reader.fail(f"{where}.name", f"every {what} needs a unique, non-empty name", subject)
            continue
        seen.add(name)
        values = {key: reader.field(raw, key, str, where, "", subject) for key in fields}
        missing = [key for key in fields if not values[key]]
        if missing:
            reader.fail(f"{where}.{missing[0]}", f"{what} {name} needs a {missing[0]}", subject)
            continue
        items.append({"name": name, **values, "raw": raw, "where": where, "subject": subject})
    return items


def _read_sites(reader: Reader, raw_sites: list[Any]) -> list[Site]:
    path = "$.lab.sites"
    return [Site(item["name"], **{key: reader.field(item["raw"], key, str, item["where"], "", item["subject"])
                                  for key in ("destination", "identity", "known_hosts", "address")},
                 port=reader.field(item["raw"], "port", int, item["where"], 22, item["subject"]))
            for item in _read_named(reader, raw_sites, path, "site", ())]


def _read_addressing(reader: Reader, raw: dict[str, Any]) -> AddressPool:
    path, subject = "$.lab.addressing", "lab"
    for key in sorted(set(raw) - {"ipv4", "ipv4_prefix", "ipv6", "ipv6_prefix"}):
        reader.fail(f"{path}.{key}", f"addressing has no field {key!r} (it has ipv4, ipv4_prefix, ipv6, ipv6_prefix)",
                    subject)
    pool = AddressPool(**{f"ipv{version}": reader.field(raw, f"ipv{version}", str, path, "", subject)
                          for version in (4, 6)},
                       **{f"ipv{version}_prefix": reader.field(raw, f"ipv{version}_prefix", int, path,
                                                               DEFAULT_PREFIX[version], subject) for version in (4, 6)})
    if raw and not {"ipv4", "ipv6"} & set(raw):
        reader.fail(path, "addressing needs a pool: ipv4 (e.g. \"10.0.0.0/16\"), ipv6 or both", subject)
    for key, message in pool.problems():
        reader.fail(f"{path}.{key}", message, subject)
    return pool


def _read_experiment(reader: Reader, raw: dict[str, Any]) -> Experiment:
    """The lab's experiment, whose measurements' classes load with the first lab that has one."""
    if not raw:
        return Experiment()
    from vtopo.model.measurements import Comparison, Pair, Test

    path = "$.experiment"
    pairs = [Pair(item["name"], item["source"], item["destination"]) for item in
             _read_named(reader, reader.field(raw, "pairs", list, path, []), f"{path}.pairs", "pair",
                         ("source", "destination"))]
    tests = [Test(item["name"], item["tool"],
                  reader.field(item["raw"], "options", dict, item["where"], {}, item["subject"])) for item in
             _read_named(reader, reader.field(raw, "tests", list, path, []), f"{path}.tests", "test", ("tool",))]
    raw_comparisons = _read_named(reader, reader.field(raw, "comparisons", list, path, []), f"{path}.comparisons",
                                  "comparison", ("cell", "versus"))
    comparisons = [Comparison(item["name"], item["cell"], item["versus"],
                              reader.field(item["raw"], "published", str, item["where"], "", item["subject"]))
                   for item in raw_comparisons]
    repeats = reader.field(raw, "repeats", int, path, 3, "experiment")
    warmup = reader.field(raw, "warmup", int, path, 0, "experiment")
    if not 1 <= repeats <= 100:
        reader.fail(f"{path}.repeats", "repeats must be between 1 and 100", "experiment")
    if not 0 <= warmup <= 10:
        reader.fail(f"{path}.warmup", "warmup must be between 0 and 10 runs", "experiment")
    return Experiment(pairs, tests, comparisons, repeats, warmup)


NOTES = re.compile(r"\$\.(lab\.)?notes|\$\.annotations\[\d+\]\.text|\$\.stages\[\d+\]\.(instructions|solution)"
                   r"|\$\.nodes\[\d+\]\.settings\.[A-Za-z_][A-Za-z0-9_]*"
                   r"|\$\.checkpoints\[\d+\]\.nodes(\.[A-Za-z_][A-Za-z0-9_]*|\[\"[A-Za-z0-9_-]+\"\])"
                   r"\.settings\.[A-Za-z_][A-Za-z0-9_]*")
"""Where a lab file may hold newlines: the lab's notes (at the top level in version 1), canvas notes, a stage's
instructions and solution, and a node's text settings, in the lab or in a checkpoint (the kind's settings refuse them
but in a text of many lines, a router's configuration)."""


def loads(text: str, default_name: str = "lab") -> Topology:
    """Parse a .vtopo document. Raises LabError listing every problem found, each with its JSON path."""
    return from_document(parse(text, lambda path: NOTES.fullmatch(path) is not None), default_name)


def from_document(doc: Any, default_name: str = "lab") -> Topology:
    """Build a Topology from parsed JSON. Raises LabError listing every structural problem found."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise LabError([Problem('not a vtopo lab: the top level must be an object with "format": "vtopo"', path="$")])
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise LabError([Problem("the version must be a positive integer", path="$.version")])
    if version > CURRENT_VERSION:
        raise LabError([Problem(f"this lab was saved by a newer vtopo (file version {version}); this vtopo reads "
                                f"versions up to {CURRENT_VERSION}. Upgrade vtopo to open it.", path="$.version")])
    doc = migrate(doc, version)

    reader = Reader()
    lab = reader.field(doc, "lab", dict, "$", {})
    raw_nodes = reader.field(doc, "nodes", list, "$", [])
    raw_links = reader.field(doc, "links", list, "$", [])
    raw_annotations = reader.field(doc, "annotations", list, "$", [])
    nodes = {node.id: node for node in _read_nodes(reader, raw_nodes)}
    links = _read_links(reader, raw_links, nodes)
    annotations = _read_annotations(reader, raw_annotations)
    checks = _read_checks(reader, reader.field(doc, "checks", list, "$", []))
    stages = _read_stages(reader, reader.field(doc, "stages", list, "$", []), {check.name for check in checks})
    checkpoints = _read_checkpoints(reader, reader.field(doc, "checkpoints", list, "$", []))
    experiment = _read_experiment(reader, reader.field(doc, "experiment", dict, "$", {}))
    name = reader.field(lab, "name", str, "$.lab", "") or default_name
    if refusal := lab_name_refusal(name):
        reader.fail("$.lab.name", refusal if "name" in lab else f"{refusal} (it is its file's name): name it in lab.name")
    lab_id = reader.field(lab, "id", str, "$.lab", "") or f"lab-{default_name}"
    notes = reader.field(lab, "notes", str, "$.lab", "")
    prefix = reader.field(lab, "prefix", str, "$.lab", "")
    vm_backend = reader.field(lab, "vm_backend", str, "$.lab", "")
    sites = _read_sites(reader, reader.field(lab, "sites", list, "$.lab", []))
    addressing = _read_addressing(reader, reader.field(lab, "addressing", dict, "$.lab", {}))
    if reader.problems:
        raise LabError(reader.problems)
    return Topology(
        name=name,
        id=lab_id,
        notes=notes,
        prefix=prefix,
        vm_backend=vm_backend,
        nodes=nodes,
        links={link.id: link for link in links},
        annotations={a.id: a for a in annotations},
        checks=checks,
        stages=stages,
        checkpoints=checkpoints,
        experiment=experiment,
        sites={site.name: site for site in sites},
        addressing=addressing,
    )


def checkpoint_text(checkpoint: Checkpoint) -> str:
    """One checkpoint as JSON text, as a lab file holds it: what a client sends the agent to restore."""
    return json.dumps(_checkpoint_to_json(checkpoint), ensure_ascii=False)


def read_checkpoint(text: str) -> Checkpoint:
    """A checkpoint's JSON text, checked as a lab file's checkpoint is. Raises LabError listing every problem."""
    where = "$.checkpoints[0]"
    raw = parse(text, lambda path: NOTES.fullmatch(where + path.removeprefix("$")) is not None)
    reader = Reader()
    checkpoints = _read_checkpoints(reader, [raw])
    if reader.problems:
        raise LabError(reader.problems)
    return checkpoints[0]


def load(path: Path) -> Topology:
    path = Path(path)
    return loads(read_text(path), default_name=path.stem)
