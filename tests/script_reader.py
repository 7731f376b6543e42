"""A plan's explained lines read back as the tools they call read them (tests of explain): iproute2's ip and bridge, tc,
sysctl, ethtool, nft, ovs-vsctl and ovs-ofctl, and sh for the rest, into the effects tests/recorded_kernel.py writes
down for the kernel side. A route's protocol is read by name through iproute2's own rt_protos table."""
from __future__ import annotations

import ipaddress
import re
import shlex
from pathlib import Path
from typing import Any

from vtopo import ops as o
from vtopo.host import netlink
from vtopo.host.ovs import VSCTL_TIMEOUT_S
from vtopo.host import rtnl_wire as wire
from vtopo.model.rules import lab_tag

Effect = tuple[Any, ...]


def _route_protocols() -> dict[str, int]:
    """iproute2's own names of route protocols, from its rt_protos table when installed (else the kernel's header)."""
    names = {"boot": 3, "static": 4}
    for table in (Path("/etc/iproute2/rt_protos"), Path("/usr/share/iproute2/rt_protos"),
                  Path("/usr/lib/iproute2/rt_protos")):
        if table.exists():
            for line in table.read_text().splitlines():
                words = line.split("#")[0].split()
                if len(words) == 2 and words[0].isdigit():
                    names[words[1]] = int(words[0])
    return names


RT_PROTOS = _route_protocols()
TOLERANT = " || true  # "
SIGNALLED = re.compile(r'(?P<loop>while \[ -n "\$\(ip netns pids (?P<again>\S+)\)" \]; do )?'
                       r"ip netns pids (?P<netns>\S+) \| xargs -r kill -(?P<signal>[A-Z]+)(?(loop); done)")


def script_effects(op: o.Op, prefix: str) -> list[Effect]:
    """The op's lines as the tools they call would read them, in the effects the kernel side records; the script's
    LAB_TAG is the lab `prefix`'s tag."""
    reader = ScriptReader(lab_tag(prefix))
    lines = o.script_of(op)
    while lines:
        line = lines.pop(0)
        if line.startswith("#"):
            reader.say("comment", line)
            continue
        if "<<'" in line:
            command, delimiter = line.split(" <<'")
            delimiter = delimiter.rstrip("'")
            body = []
            while (text := lines.pop(0)) != delimiter:
                body.append(text)
            reader.heredoc(shlex.split(command), body)
            continue
        reader.line(line)
    return reader.effects


def _netns_option(words: list[str]) -> tuple[str | None, list[str]]:
    if words[1:2] == ["-n"]:
        return words[2], [words[0], *words[3:]]
    return None, words


class ScriptReader:
    """Reads each line as its tool does, into the kernel side's effects."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.effects: list[Effect] = []

    def say(self, *effect: Any) -> None:
        self.effects.append(effect)

    def link(self, verb: str, netns: str | None, **fields: Any) -> None:
        self.say("link", verb, netns, tuple(sorted(fields.items())))

    def line(self, line: str) -> None:
        command, tolerant, _comment = line.partition(TOLERANT)
        if tolerant:  # `COMMAND || true  # why`: the command's status does not stop the script
            self.say("tolerant")
            line = command
        signalled = SIGNALLED.fullmatch(line)
        if signalled:  # what the processes of a namespace are sent: once, or (KILL) again until none is left
            assert signalled["again"] in (None, signalled["netns"])
            self.say("signal", signalled["netns"], signalled["signal"], bool(signalled["loop"]))
            return
        words = shlex.split(line.replace('"$LAB_TAG"', shlex.quote(self.tag)))
        if words[:3] == ["ip", "netns", "exec"]:
            self.inside(words[3], words[4:])
        elif words[0] == "ip":
            netns, words = _netns_option(words)
            self.ip(netns, words[1:])
        elif words[0] == "tc":
            netns, words = _netns_option(words)
            self.tc(netns, words[1:])
        elif words[:2] == ["bridge", "vlan"]:
            self.bridge_vlan(words[2:])
        elif words[0] == "bridge":
            assert words[1:4] == ["link", "set", "dev"] and words[5] == "hairpin"
            self.link("new", None, IFLA_IFNAME=words[4], **{
                "IFLA_LINKINFO.IFLA_INFO_SLAVE_KIND": "bridge",
                "IFLA_LINKINFO.IFLA_INFO_SLAVE_DATA.IFLA_BRPORT_MODE": int(words[6] == "on")})
        elif words[0] == "ovs-vsctl":
            self.say("run", ("ovs-vsctl", f"--timeout={VSCTL_TIMEOUT_S}", *(["--"] + [w for w in words[1:]])), None)
        elif words[0] == "nft":
            self.nft(words[1:])
        else:
            self.inside(None, words)

    def bridge_vlan(self, words: list[str]) -> None:
        """`bridge vlan add|del dev PORT vid N [pvid] [untagged]`, as iproute2's bridge sends it: the flags of struct
        bridge_vlan_info."""
        verb, dev, port, vid, number, *flags = words
        assert verb in ("add", "del") and dev == "dev" and vid == "vid" and set(flags) <= {"pvid", "untagged"}
        value = (wire.BRIDGE_VLAN_INFO_PVID if "pvid" in flags else 0) | (
            wire.BRIDGE_VLAN_INFO_UNTAGGED if "untagged" in flags else 0)
        self.say("bridge vlan", verb, None, port, int(number), value)

    def inside(self, netns: str | None, words: list[str]) -> None:
        if words[0] == "sysctl":
            assert words[1] == "-qw"
            key, value = words[2].split("=", 1)
            path = key if "/" in key else key.replace(".", "/")  # sysctl(8): dots separate unless slashes do
            self.say("sysctl", netns, f"/proc/sys/{path}", value)
        elif words[0] == "ethtool":
            assert words[1] == "-K" and words[3] == "tx"
            self.say("ethtool tx", netns, words[2], words[4] == "on")
        else:
            self.other(netns, words)

    def ip(self, netns: str | None, words: list[str]) -> None:
        family = words[0] == "-6"
        words = words[1:] if family else words
        match words[:2]:
            case ["link", "add"]:
                self.link_add(netns, words[2:])
            case ["link", "del"]:
                self.link("del", netns, IFLA_IFNAME=words[2])
            case ["link", "set"]:
                self.link_set(netns, words[2:])
            case ["addr", "add"]:
                assert words[3] == "dev"
                self.say("addr", netns, words[4], words[2], words[5:] == ["nodad"])
            case ["addr", "del"]:
                assert words[3] == "dev" and len(words) == 5
                self.say("addr del", netns, words[4], words[2])
            case ["route", "add"]:
                self.route(netns, words[2:], family)
            case ["route", "del"]:
                destination, options = words[2], dict(zip(words[3::2], words[4::2]))
                assert family == (ipaddress.ip_address(options["via"]).version == 6)
                self.say("route del", netns, destination if destination == "default" else
                         str(ipaddress.ip_network(destination)), options["via"], options.get("dev", ""), 254, 1)
            case ["tuntap", "add"]:
                assert words[2] == "dev" and words[4:] == ["mode", "tap"]
                self.say("tun", netns, words[3], netlink._IFF_TAP | netlink._IFF_NO_PI | netlink._IFF_TUN_EXCL)
                self.say("persist", words[3], 1)
            case ["netns", "add"]:
                self.say("netns", words[2])
            case ["netns", "del"]:
                self.say("netns.delete_netns", (words[2],), ())
            case _:
                raise AssertionError(f"unread ip command {words}")

    def link_add(self, netns: str | None, words: list[str]) -> None:
        fields: dict[str, Any] = {}
        if words[0] == "link":  # link LOWER name NAME [netns N] type macvlan|macvtap|vlan ...
            fields["IFLA_LINK"] = words[1]
            words = words[2:]
            assert words[0] == "name"
            words = words[1:]
        fields["IFLA_IFNAME"] = words[0]
        words = words[1:]
        if words[0] == "netns":
            fields["IFLA_NET_NS_FD"], words = words[1], words[2:]
        if words[0] == "master":
            fields["IFLA_MASTER"], words = words[1], words[2:]
        if words[0] == "mtu":
            fields["IFLA_MTU"], words = int(words[1]), words[2:]
        sized, words = _queues(words)
        fields |= sized
        assert words[0] == "type"
        kind, options = words[1], words[2:]
        fields["IFLA_LINKINFO.IFLA_INFO_KIND"] = kind
        data = "IFLA_LINKINFO.IFLA_INFO_DATA."
        if kind == "bridge":
            names = {"stp_state": "IFLA_BR_STP_STATE", "forward_delay": "IFLA_BR_FORWARD_DELAY",
                     "ageing_time": "IFLA_BR_AGEING_TIME", "vlan_filtering": "IFLA_BR_VLAN_FILTERING"}
            for option, value in zip(options[::2], options[1::2]):
                fields[data + names[option]] = int(value)
        elif kind == "veth":
            assert options[:2] == ["peer", "name"]
            fields[data + "VETH_INFO_PEER.IFLA_IFNAME"], options = options[2], options[3:]
            sized, options = _queues(options)
            fields |= {data + "VETH_INFO_PEER." + key: count for key, count in sized.items()}
            if options:
                assert options[0] == "netns"
                fields[data + "VETH_INFO_PEER.IFLA_NET_NS_FD"] = options[1]
        elif kind in ("macvlan", "macvtap"):
            assert options[0] == "mode"
            fields[f"{data}IFLA_{kind.upper()}_MODE"] = options[1]
        elif kind == "vlan":  # link PARENT name NAME type vlan id VID
            assert options[0] == "id"
            fields[data + "IFLA_VLAN_ID"] = int(options[1])
        elif kind == "vxlan":  # vxlan id VNI local L remote R dstport P: the underlay addresses' family picks the key
            given = dict(zip(options[::2], options[1::2]))
            six = "6" if ipaddress.ip_address(given["local"]).version == 6 else ""
            fields.update({data + "IFLA_VXLAN_ID": int(given["id"]), f"{data}IFLA_VXLAN_LOCAL{six}": given["local"],
                           f"{data}IFLA_VXLAN_GROUP{six}": given["remote"],
                           data + "IFLA_VXLAN_PORT": int(given["dstport"])})
        else:
            raise AssertionError(f"unread link type {kind}")
        self.link("new", netns, **fields)

    def link_set(self, netns: str | None, words: list[str]) -> None:
        if words[1] == "master":  # ip link set NAME master M
            self.link("new", netns, IFLA_IFNAME=words[0], IFLA_MASTER=words[2])
            return
        assert words[0] == "dev"
        name, words = words[1], words[2:]
        fields: dict[str, Any] = {"IFLA_IFNAME": name}
        while words:
            match words:
                case ["mtu", value, *words]:
                    fields["IFLA_MTU"] = int(value)
                case ["address", value, *words]:
                    fields["IFLA_ADDRESS"] = value
                case ["alias", value, *words]:
                    fields["IFLA_IFALIAS"] = value
                case ["netns", target, "name", new_name, *words]:  # a move: the link by index, renamed there
                    fields = {"index": name, "IFLA_IFNAME": new_name, "IFLA_NET_NS_FD": target}
                case ["up" | "down" as state, *words]:
                    fields["up"] = state == "up"
                case ["protodown", "on" | "off" as state, *words]:
                    fields["IFLA_PROTO_DOWN"] = int(state == "on")
                case _:
                    raise AssertionError(f"unread ip link set {words}")
        self.link("new", netns, **fields)

    def route(self, netns: str | None, words: list[str], family: bool) -> None:
        destination, words = words[0], words[1:]
        options = dict(zip(words[::2], words[1::2]))
        gateway = options["via"]
        assert family == (ipaddress.ip_address(gateway).version == 6)
        if destination != "default":
            destination = str(ipaddress.ip_network(destination))
        self.say("route", netns, destination, gateway, options.get("dev", ""), RT_PROTOS[options["proto"]],
                 254, 1, 0)  # iproute2's defaults: the main table, a unicast route of universe scope

    def tc(self, netns: str | None, words: list[str]) -> None:
        if words[:2] == ["qdisc", "del"]:  # what was at the root before: its error, where nothing was, unsaid
            assert words[2] == "dev" and words[4:] == ["root", "2>/dev/null"], words
            self.say("qdisc del", netns, words[3])
            return
        assert words[:4] == ["qdisc", "add", "dev", words[3]]
        device, words = words[3], words[4:]
        parent = 0xFFFFFFFF
        if words[0] == "root":
            words = words[1:]
        else:
            assert words[:2] == ["parent", "1:1"]
            parent, words = 0x10001, words[2:]
        assert words[0] == "handle"
        handle, kind, words = words[1], words[2], words[3:]
        options: dict[str, Any] = {"handle": handle}
        if kind == "netem":
            options.update(delay=0, jitter=0, loss=0)
            while words:
                match words:
                    case ["delay", delay, jitter, *words] if jitter.endswith("ms"):
                        options.update(delay=_ms_in_us(delay), jitter=_ms_in_us(jitter))
                    case ["delay", delay, *words]:
                        options["delay"] = _ms_in_us(delay)
                    case ["loss", loss, *words]:
                        options["loss"] = float(loss.rstrip("%"))
                    case _:
                        raise AssertionError(f"unread netem options {words}")
            assert parent == 0xFFFFFFFF
        else:
            assert kind == "tbf"
            given = dict(zip(words[::2], words[1::2]))
            options.update(parent=parent, rate=round(float(given["rate"].removesuffix("mbit")) * 1_000_000 / 8),
                           burst=int(given["burst"]), latency=_ms_in_us(given["latency"]))
        self.say("qdisc", netns, device, kind, tuple(sorted(options.items())))

    def nft(self, words: list[str]) -> None:
        self.say("nft words", tuple(words))

    def heredoc(self, words: list[str], body: list[str]) -> None:
        if words[0] == "ovs-ofctl":
            self.say("run", tuple(words), "\n".join(body) + "\n")
        elif words[0] == "cat":
            self.say("file", words[2], "\n".join(body) + "\n")
        else:
            assert words[:2] == ["virsh", "-c"] and words[3:] == ["create", "--paused", "/dev/stdin"]
            self.say("domains.start", (words[2], "\n".join(body)), ())

    def other(self, netns: str | None, words: list[str]) -> None:
        self.say("shell", netns, tuple(words))


def _queues(words: list[str]) -> tuple[dict[str, int], list[str]]:
    """`numtxqueues T numrxqueues R` where `words` start with them, as the attributes that carry them, and the words
    after them."""
    if words[:1] != ["numtxqueues"]:
        return {}, words
    assert words[2] == "numrxqueues"
    return {"IFLA_NUM_TX_QUEUES": int(words[1]), "IFLA_NUM_RX_QUEUES": int(words[3])}, words[4:]


def _ms_in_us(text: str) -> int:
    return round(float(text.removesuffix("ms")) * 1000)
