"""The probe that asks a deployed lab: ping from inside nodes, TTL-limited pings for the path, iproute2, iperf3."""
from __future__ import annotations

import ipaddress
import re

from vtopo.compile.broadcast_domains import broadcast_domains_of
from vtopo.compile.vlan_rules import vlan_gap
from vtopo.kinds.contract import LabContext, ServesDhcp, vlan_interfaces_of
from vtopo.deployed import DeployedLab
from vtopo.measure import IperfOptions, IperfRun, MeasureError
from vtopo.measure.nodes import not_installed
from vtopo.measure.preflight import ping_failure
from vtopo.measure.process import run_quick
from vtopo.checks.builtin import MAX_HOPS
from vtopo.checks.walk import RouteWalk

REACH_DEADLINE_S = 2
PROBES_PER_HOP = 3  # as traceroute sends
_TTL_EXCEEDED = re.compile(r"^From (?P<hop>\S+?):? icmp_seq=\d+ (Time to live exceeded|Time exceeded: Hop limit)",
                           re.MULTILINE)  # IPv4's and IPv6's words
_REPLY = re.compile(r"bytes from (?P<hop>\S+?):? icmp_seq=")


def answer_at_ttl(ping_output: str) -> tuple[str, bool] | None:
    """Who answered a TTL-limited ping, and whether it was the destination itself; None when nobody did."""
    if (reply := _REPLY.search(ping_output)) is not None:
        return reply.group("hop"), True
    if (exceeded := _TTL_EXCEEDED.search(ping_output)) is not None:
        return exceeded.group("hop"), False
    return None


def same_broadcast_domain(lab: LabContext, a: str, b: str) -> bool:
    """Whether interfaces `a` and `b` (NODE:PORT) are joined by switches and segments alone."""
    return any({a, b} <= {member.name for member in domain.members} for domain in broadcast_domains_of(lab))


def vlan_apart(lab: LabContext, a: str, b: str) -> str:
    """Where a VLAN stops between interfaces `a` and `b` (NODE:PORT), with its fix; "" where none does."""
    members = {member.name: member for domain in broadcast_domains_of(lab) for member in domain.members}
    return vlan_gap(lab, members[a], members[b]) if a in members and b in members else ""


class LiveProbe:
    def __init__(self, lab: DeployedLab) -> None:
        self.lab = lab
        self._owners = {str(ipaddress.ip_interface(address).ip): node.node.name
                        for node in lab.context.nodes.values()
                        for address in [*(a for interface in node.interfaces() for a in interface.addresses),
                                        *node.kind.host_addresses(node),
                                        *(a for own in vlan_interfaces_of(node).values() for a in own)]}

    def address_of(self, source: str, destination: str) -> str:
        return self.lab.target_address(source, destination)[0]

    def addresses_of(self, node: str) -> list[str]:
        return [address for address, owner in self._owners.items() if owner == node]

    def node_of(self, address: str) -> str | None:
        return self._owners.get(address)

    def _ping(self, source: str, address: str, *flags: str) -> tuple[int, str]:
        endpoint = self.lab.endpoint(source)
        endpoint.check_address(address)
        done = run_quick(endpoint.argv(["ping", "-n", *flags, address]))
        return done.returncode, (done.stdout + done.stderr).strip()

    def reach(self, source: str, destination: str, address: str) -> str | None:
        """Pings every 0.2 s until the first reply, for at most REACH_DEADLINE_S."""
        returncode, text = self._ping(source, address, "-c", "1", "-i", "0.2", "-w", str(REACH_DEADLINE_S))
        if returncode == 0:
            return None
        return ping_failure(source, address, destination, text, returncode, REACH_DEADLINE_S)

    def diagnose(self, source: str, destination: str, address: str) -> str:
        return RouteWalk(self.lab.context, self.run, self.node_of).why(source, destination, address)

    def hops(self, source: str, address: str) -> list[str]:
        hops: list[str] = []
        for ttl in range(1, MAX_HOPS + 1):
            answer = self._answer_at(source, address, ttl)
            if answer is None:
                return hops
            hops.append(answer[0])
            if answer[1]:
                return hops
        return hops

    def _answer_at(self, source: str, address: str, ttl: int) -> tuple[str, bool] | None:
        """Who answers a ping from `source` to `address` that lives `ttl` hops, as traceroute asks: up to
        PROBES_PER_HOP probes, since a router sends "time exceeded" to one peer only about once a second after a
        burst of six (the kernel's icmp_ratelimit), and a lab's checks trace from one node several times in a row."""
        for _ in range(PROBES_PER_HOP):
            _, text = self._ping(source, address, "-c", "1", "-W", "1", "-t", str(ttl))
            if (answer := answer_at_ttl(text)) is not None:
                return answer
        return None

    def run(self, node: str, argv: list[str]) -> str:
        done = run_quick(self.lab.command_in(node, argv))
        if done.returncode != 0:
            raise MeasureError(not_installed(node, argv[0], done.stderr)
                               or f"`{' '.join(argv)}` failed in {node}: {done.stderr.strip() or done.returncode}")
        return done.stdout

    def same_domain(self, a: str, b: str) -> bool:
        return same_broadcast_domain(self.lab.context, a, b)

    def apart(self, a: str, b: str) -> str:
        return vlan_apart(self.lab.context, a, b)

    def leased_addresses(self, interface: str) -> list[str]:
        node, _, port = interface.partition(":")
        context = self.lab.context.node_named(node)
        device = next((end.device for end in context.ends if end.end.port == port), "") if context else ""
        return self.lab.leased_addresses(node, device)

    def dhcp_diagnosis(self, interface: str) -> str:
        lab = self.lab.context
        domain = next((d for d in broadcast_domains_of(lab) if interface in {m.name for m in d.members}), None)
        members = [m.name for m in domain.members if m.name != interface] if domain else []
        answering = []
        for name in members:
            node_name, _, port = name.partition(":")
            node = lab.node_named(node_name)
            if node is None or not isinstance(node.kind, ServesDhcp):
                continue
            end = next((e for e in node.ends if e.end.port == port), None)
            if end is not None and (service := node.kind.dhcp_service(node, end)):
                answering.append(f"{name} is {service}")
        if answering:
            return "on its segment " + "; ".join(answering) + " (its log: /run/dhcp/dnsmasq.log in that node)"
        routers = [m.name for m in domain.members if m.routes] if domain else []
        if not routers:
            return (f"nothing on its segment ({', '.join(members) or 'no other interface'}) serves or relays DHCP, "
                    "and no router joins it to a server")
        return (f"nothing on its segment serves or relays DHCP: a DISCOVER is a broadcast, and a router forwards no "
                f"broadcast, so it stops at {', '.join(routers)}; set a DHCP relay on "
                f"{routers[0]} towards the server's address")

    def rate(self, source: str, destination: str, seconds: int) -> float:
        address = self.address_of(source, destination)
        run = IperfRun(self.lab.endpoint(source), self.lab.endpoint(destination), address,
                       IperfOptions(duration_s=seconds), lab=self.lab.context.topology.name)
        result = run.run()
        if result.status != "ok" or result.mean_bits_per_second is None:
            raise MeasureError(result.error or f"iperf3 {source} → {destination} gave no result")
        return result.mean_bits_per_second
