"""A lab as deployed on this host: its saved topology, resolved in context, to run commands inside nodes."""
from __future__ import annotations

import ipaddress
import json
import os
import pwd
import socket
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


from vtopo.compile.analysis import describe_path, numbered_bridge_between, path_between
from vtopo.compile.resolve import resolve
from vtopo import serial_console
from vtopo.host import libvirt_domains, vhost
from vtopo.host.facts import route_device
from vtopo.host.state import StateStore, deployed_media
from vtopo.lab_record import consent_of, facts_of, topology_of
from vtopo.kinds.contract import CannotRunInside, EndContext, LabContext, NodeContext, Role, RunsMachine
from vtopo.kinds.registry import installed_kinds
from vtopo.measure.nodes import MeasureEndpoint, MeasureError, InNode
from vtopo.measure.process import run_quick


class NotDeployed(Exception):
    pass


@dataclass
class DeployedLab:
    context: LabContext
    source: str = ""  # the .vtopo file it was deployed from, if any
    runner: Callable[[str, list[str]], list[str]] | None = None  # (node, argv) -> argv, when not this process

    def through(self, runner: Callable[[str, list[str]], list[str]]) -> DeployedLab:
        """The same lab, whose measurements run their commands through `runner` (the agent's exec, as the user)."""
        return replace(self, runner=runner)

    @classmethod
    def find(cls, lab: str, store: StateStore | None = None) -> DeployedLab:
        """The lab named `lab`, from its record, which only root reads (a user's client asks the agent:
        `of_deployment`)."""
        record = (store or StateStore()).named(lab)
        if record is None:
            raise NotDeployed(StateStore.not_found(lab))
        return cls.of_deployment(record.deployment())

    @classmethod
    def of_deployment(cls, deployment: dict[str, Any]) -> DeployedLab:
        """The lab resolved as it was deployed, from `LabRecord.deployment()`."""
        resolved = resolve(topology_of(deployment), installed_kinds(), facts_of(deployment), consent_of(deployment),
                           deployed_media(deployment))
        return cls(resolved.valid().lab, deployment.get("source", ""))

    def node(self, name: str) -> NodeContext:
        node = self.context.node_named(name)
        if node is None:
            raise NotDeployed(self.context.no_node_named(name))
        return node

    def command_in(self, name: str, argv: list[str]) -> list[str]:
        node = self.node(name)
        inside = node.kind.command_in(node, argv)
        return inside if self.runner is None else self.runner(name, argv)

    def measurable(self) -> list[tuple[MeasureEndpoint, list[str]]]:
        """Each node a measurement can run in or aim at, as an endpoint, with its addresses."""
        targets = []
        for node in self.context.nodes.values():
            if node.kind.role not in (Role.NAMESPACE, Role.MACHINE):
                continue
            endpoint = self.endpoint(node.node.name)
            if not endpoint.can_run and not endpoint.servers:
                continue
            addresses = [str(ipaddress.ip_interface(a).ip) for i in node.interfaces() for a in i.addresses]
            targets.append((endpoint, addresses))
        return targets

    def in_node(self, name: str) -> InNode:
        """How to run a command in a node; raises CannotRunInside for nodes without a place to run it."""
        node = self.node(name)
        node.kind.command_in(node, ["true"])
        if self.runner is not None:
            runner = self.runner
            return lambda argv: runner(name, argv)
        return _bound(node)

    def console_socket(self, name: str) -> str:
        """The unix socket of a VM's serial console; NotDeployed for a node that has none."""
        node = self.node(name)
        if not isinstance(node.kind, RunsMachine):
            raise NotDeployed(f"{name} is a {node.kind.label} with no serial console; `vtopo exec "
                              f"{self.context.topology.name} {name}` opens a shell in it")
        return node.kind.console_socket(node)

    def open_console(self, name: str, rows: int = 0, columns: int = 0) -> socket.socket:
        """A socket connected to a VM's serial console, which lies in a directory of root's or of the QEMU user's
        (vtopo.serial_console.connected); NotDeployed, saying why, when it cannot be opened. With a terminal's size,
        the built-in guest's shell is told it if it waits at its prompt (vtopo.serial_console.say_size)."""
        path = self.console_socket(name)
        try:
            owners = {0, pwd.getpwnam(self.context.facts.qemu_user).pw_uid}
        except KeyError:  # no such user: the VMs run under libvirt, in root's directories
            owners = {0}
        try:
            connection = serial_console.connected(path, owners)
        except OSError as error:
            raise NotDeployed(f"cannot open the console of {name}: {error.strerror}; is the VM running (`vtopo "
                              "status`)?") from None
        serial_console.say_size(connection, os.path.join(os.path.dirname(path), "console.log"), rows, columns)
        return connection

    def vhost_state(self, name: str) -> vhost.VhostState | None:
        """For a node that runs a VM: its backend, QEMU's pid, and whether vhost-net is really in effect."""
        node = self.node(name)
        if not isinstance(node.kind, RunsMachine):
            return None
        machine = node.kind.machine(node)
        try:
            pid: int | None = int(Path(machine.pid_file).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pid = None
        drivers: tuple[str, ...] = ()
        if machine.backend == "libvirt" and libvirt_domains.running(machine.uri, machine.domain):
            drivers = tuple(libvirt_domains.interface_drivers(libvirt_domains.live_xml(machine.uri, machine.domain)))
        return vhost.inspect(machine.backend, pid, drivers, machine.vhost)

    def machine_lines(self, name: str) -> list[str]:
        """What `vtopo status -v` and the designer's inspector show of a VM; empty for a node that runs none."""
        state = self.vhost_state(name)
        return state.lines() if state is not None else []

    def endpoint(self, name: str) -> MeasureEndpoint:
        """A node as one side of a measurement, with the servers that always run in it (a VM's guest). The host's
        own namespace refuses addresses it would route out of the lab."""
        node = self.node(name)
        servers = node.kind.standing_servers(node) if isinstance(node.kind, RunsMachine) else {}
        try:
            in_node = self.in_node(name)
        except CannotRunInside as why:
            return MeasureEndpoint(name, None, servers, str(why))
        in_host = node.kind.role is Role.NAMESPACE and node.kind.netns(node) is None
        return MeasureEndpoint(name, in_node, servers, refuses=self._leaves_the_lab if in_host else None)

    def _leaves_the_lab(self, address: str) -> str | None:
        prefix, lab = self.context.names.prefix, self.context.topology.name
        device = route_device(address)
        if device is None:
            return f"the host has no route to {address}"
        if device == "lo" or device.startswith(f"{prefix}-"):
            return None
        return (f"the host would send to {address} through {device}, which lab {lab} did not create; vtopo sends "
                "no traffic out of its labs (link the host to the segment, with a host macvlan or a numbered bridge)")

    def path(self, source: str, destination: str) -> str:
        return describe_path(self.context, self.node(source).node.id, self.node(destination).node.id)

    def path_links(self, source: str, destination: str) -> list[str]:
        return [end.link.id for end in path_between(self.context, self.node(source).node.id,
                                                     self.node(destination).node.id)]

    def target_address(self, source: str, destination: str, version: int | None = None) -> tuple[str, str]:
        """The address of `destination` to aim at from `source`, and how it is reached ("same segment"/"routed").

        Prefer an address on a segment both share (no router in between), or the host's address on a numbered
        bridge the source is behind; otherwise the destination's first address. `version` 4 or 6 takes only
        addresses of that IP version (an IPv6 one never link-local, which would need the source's port); None the
        first address there is.
        """
        src, dst = self.node(source), self.node(destination)
        for domain in self.context.domains:
            if any(e.node.id == src.node.id for e in domain):
                for end in domain:
                    if end.node.id == dst.node.id and (address := _ip(self.addresses_at(end), version)):
                        return address, "same segment"
        bridge = numbered_bridge_between(self.context, dst.node.id, src.node.id)
        if bridge is not None and (address := _ip(bridge.kind.host_addresses(bridge), version)):
            return address, "same segment"
        bridge = numbered_bridge_between(self.context, src.node.id, dst.node.id)
        if bridge is not None:
            arrival = path_between(self.context, bridge.node.id, dst.node.id)[-1].other
            if address := _ip(arrival.end.interface.addresses, version):
                return address, "same segment"
        for end in dst.ends:
            if address := _ip(self.addresses_at(end), version):
                return address, "routed"
        family = f"IPv{version} " if version else "IP "
        raise NotDeployed(f"{destination} has no {family}address to reach")

    def addresses_at(self, end: EndContext) -> list[str]:
        """The addresses of a node's link end: those the lab gives it and its subinterfaces, and those its DHCP client
        holds now."""
        interface = end.end.interface
        given = [*interface.addresses, *(address for sub in interface.subinterfaces for address in sub.addresses)]
        return given + (self.leased_addresses(end.node.name, end.device) if interface.dhcp else [])

    def leased_addresses(self, name: str, device: str) -> list[str]:
        """The IPv4 addresses a DHCP client holds on `device` of node `name` (dynamic: with its lease's lifetime)."""
        argv = ["ip", "-j", "-4", "address", "show", "dev", device]
        done = run_quick(self.command_in(name, argv))
        if done.returncode != 0:
            raise MeasureError(f"`{' '.join(argv)}` failed in {name}: {done.stderr.strip() or done.returncode}")
        return [f"{a['local']}/{a['prefixlen']}" for link in json.loads(done.stdout or "[]")
                for a in link.get("addr_info", []) if a.get("dynamic") and "local" in a and "prefixlen" in a]


def _bound(node: NodeContext) -> InNode:
    return lambda argv: node.kind.command_in(node, argv)


def _ip(addresses: list[str], version: int | None) -> str:
    """The first address (without its prefix length) of `version`, or of any when None; "" when there is none."""
    for address in addresses:
        ip = ipaddress.ip_interface(address).ip
        if version is None or (ip.version == version and not ip.is_link_local):
            return str(ip)
    return ""
